package messaging

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// Prepared statements, by index.
const (
	stStore = iota
	stQueue
	stRead
	stSend
	stDone
	nStmts
)

// statements returns the steps' statements in dialect d, by index.
func statements(d engine.Dialect) []string {
	p := d.Placeholder
	return []string{
		stStore: "INSERT INTO " + InboundTable + " (service, seq, status, received_at, body) VALUES (" +
			p(1) + ", " + p(2) + ", 'received', " + p(3) + ", " + p(4) + ")",
		stQueue: "INSERT INTO " + OutboundTable + " (service, seq, route, status, queued_at, body) VALUES (" +
			p(1) + ", " + p(2) + ", " + p(3) + ", 'queued', " + p(4) + ", " + p(5) + ")",
		stRead: "SELECT body FROM " + OutboundTable + " WHERE service = " + p(1) + " AND seq = " + p(2) +
			" AND route = " + p(3) + " AND status = 'queued'",
		stSend: "UPDATE " + OutboundTable + " SET status = 'sent', sent_at = " + p(1) + " WHERE service = " + p(2) +
			" AND seq = " + p(3) + " AND route = " + p(4) + " AND status = 'queued'",
		stDone: "UPDATE " + InboundTable + " SET status = 'done', done_at = " + p(1) + " WHERE service = " + p(2) +
			" AND seq = " + p(3) + " AND status = 'received'",
	}
}

// stepGrace is how long a step in flight when the run ends may still take
// to commit. A step is not cut by the run's end, so its connection stays
// whole for Close to finish the message on; it is far below the driver's
// grace for operations in flight (driver.DefaultStopGrace), so a stuck
// server still ends the run.
const stepGrace = 10 * time.Second

// finishTimeout bounds Close's finishing of the message in flight.
const finishTimeout = 30 * time.Second

// NewClient returns client id bound to session s. A service's messages
// are taken one at a time, so a client beyond the services would have no
// stream to take: it is refused.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
	if err != nil {
		return nil, fmt.Errorf("messaging client %d: %w", id, err)
	}
	if id >= w.services {
		return nil, fmt.Errorf("messaging client %d: more clients than %s (%d): a service's messages are taken in order, one at a time, "+
			"so each client needs a service of its own; raise %s or lower clients", id, pServices, w.services, pServices)
	}
	return &Client{w: w, conn: q.Conn(), d: q.Dialect(), gen: newGenerator()}, nil
}

// MaxClients is the services: a study or drive asking for more clients is
// refused before anything starts (workload.ClientLimiter).
func (w *Workload) MaxClients() (int, string) {
	return w.services, fmt.Sprintf("a service's messages are taken in order, one at a time, so each client needs a service of its own; raise %s (now %d) or lower clients", pServices, w.services)
}

// Client carries messages through their steps, one step per Do, on its
// own connection. It is used by one goroutine; Close may come from
// another once the run is over.
type Client struct {
	w     *Workload
	conn  *sql.Conn
	d     engine.Dialect
	gen   *generator
	stmts [nStmts]*sql.Stmt
	ready bool

	// mu is held by Do, so Close finishes the message in flight only when
	// no step is running.
	mu sync.Mutex
	// The message in flight: svc is nil between messages.
	svc      *service
	seq      int64
	step     int // next step: 0 store, 1..routes queue, routes+1..2 x routes send, 2 x routes + 1 done
	received int64
	body     []byte // the inbound message
	out      []byte // a transformed message
	read     []byte // a queued message, read to send it
}

var _ workload.Client = (*Client)(nil)

func (c *Client) prepare(ctx context.Context) error {
	if c.ready {
		return nil
	}
	qs := statements(c.d)
	if i, err := sqlwork.PrepareAll(ctx, c.conn, c.stmts[:], qs); err != nil {
		return fmt.Errorf("messaging: prepare %s: %w", qs[i], err)
	}
	c.ready = true
	return nil
}

// Do runs the next step of the message in flight, taking a service and
// its next message first when none is; the send of the last route is
// followed by the message's done, a transaction of its own. A step runs on
// even when ctx ends meanwhile (for at most stepGrace), so the run's end
// never leaves a step's outcome unknown. A failed step is tried again by
// the next Do.
func (c *Client) Do(ctx context.Context) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	op := c.op()
	if err := c.prepare(ctx); err != nil {
		return op, err
	}
	if c.svc == nil {
		if err := c.take(ctx); err != nil {
			return op, err
		}
	}
	sctx, release := lingering(ctx)
	defer release()
	if err := c.runStep(sctx); err != nil {
		return op, err
	}
	if c.step == c.doneStep() {
		return op, c.runStep(sctx)
	}
	return op, nil
}

// Close finishes the message in flight, if any and if no Do is running,
// after the measured window: the steps it runs are not measured, and
// Verify counts the messages so finished. Then it releases the prepared
// statements; the connection is the session's. A Do still running (a
// hung run) keeps both: its message counts as unfinished, and its
// statements go with the session's connection.
func (c *Client) Close() error {
	if !c.mu.TryLock() {
		c.w.stats.unfinished.Add(1)
		return nil
	}
	defer c.mu.Unlock()
	err := c.finish()
	sqlwork.CloseAll(c.stmts[:])
	c.ready = false
	return err
}

func (c *Client) finish() error {
	if c.svc == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	for c.svc != nil {
		if err := c.runStep(ctx); err != nil {
			c.w.stats.unfinished.Add(1)
			c.svc = nil
			return fmt.Errorf("messaging: finishing the message in flight after the run: %w", err)
		}
	}
	c.w.stats.finishedLate.Add(1)
	return nil
}

// op is the op of the next step.
func (c *Client) op() int {
	switch {
	case c.step == 0:
		return opInbound
	case c.step <= c.w.routes:
		return opTransform
	}
	return opOutbound
}

func (c *Client) doneStep() int { return 2*c.w.routes + 1 }

// take takes the service idle longest and makes its next message; once
// ctx is done it takes none.
func (c *Client) take(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case c.svc = <-c.w.idle:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.seq, c.step = c.svc.next, 0
	c.body = c.gen.message(c.body[:0], c.w.seed, c.svc.id, c.seq, c.w.bytes)
	c.received = time.Now().UnixMicro()
	return nil
}

// runStep runs step c.step of the message in flight as one committed
// transaction, retrying conflicts, and moves to the next; after the done
// the service goes back to the idle queue.
func (c *Client) runStep(ctx context.Context) error {
	var (
		err       error
		committed *atomic.Int64
		s         = &c.w.stats
	)
	switch r := c.step; {
	case r == 0:
		err = c.tracked(statusReceived, func() error { return c.exec(ctx, stStore, c.svc.id, c.seq, c.received, string(c.body)) })
		committed = &s.inbound
	case r <= c.w.routes:
		c.out = transform(c.out[:0], c.body, r)
		err, committed = c.exec(ctx, stQueue, c.svc.id, c.seq, r, time.Now().UnixMicro(), string(c.out)), &s.transformed
	case r < c.doneStep():
		err, committed = c.send(ctx, r-c.w.routes), &s.sent
	default:
		err = c.tracked(statusDone, func() error { return c.exec(ctx, stDone, time.Now().UnixMicro(), c.svc.id, c.seq) })
		committed = &s.done
	}
	if err != nil {
		return fmt.Errorf("messaging service %d message %d: %s: %w", c.svc.id, c.seq, c.stepName(), err)
	}
	committed.Add(1)
	if c.step++; c.step > c.doneStep() {
		c.svc.next++
		c.w.idle <- c.svc
		c.svc, c.step = nil, 0
	}
	return nil
}

// stepName says what step c.step does, for errors.
func (c *Client) stepName() string {
	switch r := c.step; {
	case r == 0:
		return "store inbound"
	case r <= c.w.routes:
		return fmt.Sprintf("store and queue route %d", r)
	case r < c.doneStep():
		return fmt.Sprintf("send route %d", r-c.w.routes)
	}
	return "mark inbound done"
}

// exec runs statement st alone, its own transaction, retrying conflicts.
// An UPDATE must change exactly one row: a message not in the state the
// step expects is an error.
func (c *Client) exec(ctx context.Context, st int, args ...any) error {
	return c.w.stats.retries.Do(ctx, func() error {
		res, err := c.stmts[st].ExecContext(ctx, args...)
		if err != nil || st == stStore || st == stQueue {
			return err
		}
		return oneRow(res)
	})
}

// send reads the queued message of route, as an outbound interface does
// to send it, and marks it sent, in one transaction.
func (c *Client) send(ctx context.Context, route int) error {
	return c.w.stats.retries.Do(ctx, func() error {
		return sqlwork.Txn(ctx, c.conn, Name, func() (string, error) {
			if err := c.stmts[stRead].QueryRowContext(ctx, c.svc.id, c.seq, route).Scan(&c.read); err != nil {
				return "read the queued message", err
			}
			res, err := c.stmts[stSend].ExecContext(ctx, time.Now().UnixMicro(), c.svc.id, c.seq, route)
			if err == nil {
				err = oneRow(res)
			}
			return "mark sent", err
		}, func(step string) string { return step })
	})
}

func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err == nil && n != 1 {
		err = fmt.Errorf("%d rows changed, want 1: the message is not in the state this step expects", n)
	}
	return err
}

// lingering returns a context for one step: it ends stepGrace after ctx
// does, not with it, so a step in flight when the run ends commits, or
// not, on a connection that stays usable.
func lingering(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(stepGrace, cancel) })
	return sctx, func() { stop(); cancel() }
}
