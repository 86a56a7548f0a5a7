package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// Keying times and mean think times of clause 5.2.5.7, by op.
var (
	keyingTime = [nOps]time.Duration{opNewOrder: 18 * time.Second, opPayment: 3 * time.Second,
		opOrderStatus: 2 * time.Second, opDelivery: 2 * time.Second, opStockLevel: 2 * time.Second}
	thinkTime = [nOps]time.Duration{opNewOrder: 12 * time.Second, opPayment: 12 * time.Second,
		opOrderStatus: 10 * time.Second, opDelivery: 5 * time.Second, opStockLevel: 5 * time.Second}
)

// NewClient returns client id bound to session s. Its home warehouse is
// id mod warehouses + 1 and its Stock-Level district follows, so clients
// spread evenly; statements are prepared at the first Do.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
	if err != nil {
		return nil, fmt.Errorf("tpcc client %d: %w", id, err)
	}
	return &Client{
		w: w, conn: q.Conn(), d: q.Dialect(), rng: w.newRand(streamClient, uint64(id)), deck: newDeck(),
		wid: int64(id)%w.warehouses + 1, did: (int64(id)/w.warehouses)%districtsPerWarehouse + 1,
	}, nil
}

// Client runs tpcc transactions on its own connection. It is used by one
// goroutine.
type Client struct {
	w     *Workload
	conn  *sql.Conn
	d     engine.Dialect
	rng   *rand.Rand
	deck  *deck
	wid   int64 // home warehouse
	did   int64 // Stock-Level's district
	stmts [nStmts]*sql.Stmt
	ready bool
	// shaped holds statements whose text depends on a count (batch.go).
	shaped map[string]*sql.Stmt
	// sink receives the columns a transaction reads but does not use.
	sink any
	// order is the New-Order under way in a crash run (acks.go).
	order   acklog.Pending
	ordered bool
	// skipped counts the districts the Delivery under way found without
	// a new order, added to the stats only when it commits: an attempt
	// rolled back for a deadlock and retried must not count them twice.
	skipped int64
}

func (c *Client) prepare(ctx context.Context) error {
	if c.ready {
		return nil
	}
	qs := make([]string, nStmts)
	for i, q := range statements {
		qs[i] = rebind(c.d, q)
	}
	if i, err := sqlwork.PrepareAll(ctx, c.conn, c.stmts[:], qs); err != nil {
		return fmt.Errorf("tpcc: prepare %s: %w", qs[i], err)
	}
	c.ready = true
	return nil
}

// Close releases the prepared statements; the connection is the session's.
func (c *Client) Close() error {
	sqlwork.CloseAll(c.stmts[:])
	c.closeShaped()
	c.ready = false
	return nil
}

// Do runs the next transaction of the deck. With keying_time it waits the
// keying time before and the think time after (both count in its latency).
func (c *Client) Do(ctx context.Context) (int, error) {
	if err := c.prepare(ctx); err != nil {
		return opNewOrder, err
	}
	op := c.deck.deal(c.rng)
	if c.w.keying {
		if err := sleep(ctx, keyingTime[op]); err != nil {
			return op, err
		}
	}
	start := time.Now()
	err := c.run(ctx, op)
	c.w.stats.busy(start, time.Now())
	if err == nil && c.w.keying {
		err = sleep(ctx, c.think(op))
	}
	return op, err
}

// think draws a think time: -ln(r) x mean, at most 10 x mean (clause
// 5.2.5.4).
func (c *Client) think(op int) time.Duration {
	t := -math.Log(1-c.rng.Float64()) * float64(thinkTime[op])
	return time.Duration(min(t, 10*float64(thinkTime[op])))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errUnusedItem is New-Order's planned rollback: its last item does not
// exist (clause 2.4.2.3).
var errUnusedItem = errors.New("item not found (the planned 1% rollback)")

// run draws op's inputs and runs it (retry).
func (c *Client) run(ctx context.Context, op int) error {
	var (
		body func(ctx context.Context) (string, error)
		what func() string // the label of a failure, made only then
	)
	switch op {
	case opNewOrder:
		in := c.newOrderInput()
		body = func(ctx context.Context) (string, error) { return c.newOrder(ctx, in) }
		what = func() string { return fmt.Sprintf("new_order %+v", in) }
	case opPayment:
		in := c.paymentInput()
		body = func(ctx context.Context) (string, error) { return c.payment(ctx, in) }
		what = func() string { return fmt.Sprintf("payment %+v", in) }
	case opOrderStatus:
		in := c.orderStatusInput()
		body = func(ctx context.Context) (string, error) { return c.orderStatus(ctx, in) }
		what = func() string { return fmt.Sprintf("order_status %+v", in) }
	case opDelivery:
		carrier := uniform(c.rng, 1, 10)
		body = func(ctx context.Context) (string, error) { return c.delivery(ctx, carrier) }
		what = func() string { return fmt.Sprintf("delivery (w %d, carrier %d)", c.wid, carrier) }
	case opStockLevel:
		threshold := uniform(c.rng, 10, 20)
		body = func(ctx context.Context) (string, error) { return c.stockLevel(ctx, threshold) }
		what = func() string { return fmt.Sprintf("stock_level (w %d, d %d, threshold %d)", c.wid, c.did, threshold) }
	}
	return c.retry(ctx, op, body, what)
}

// retry runs body as transaction op until it commits, rolls back as
// planned, or fails otherwise; deadlocks and serialization failures are
// retried with the same inputs (sqlwork.Retries) and counted.
func (c *Client) retry(ctx context.Context, op int, body func(context.Context) (string, error), what func() string) error {
	s := &c.w.stats
	var rolledBack bool
	err := s.retries.Do(ctx, func() error {
		var err error
		rolledBack, err = c.txn(ctx, body, what)
		return err
	})
	switch {
	case err != nil:
		return err
	case rolledBack:
		s.rollbacks.Add(1)
	default:
		s.committed[op].Add(1)
	}
	return nil
}

// txn runs body as one transaction (plain statements, as sqlwork.Txn does,
// so prepared statements are not re-prepared per transaction). The planned
// rollback ends it with ROLLBACK and reports rolledBack; any other failure
// is rolled back and returned labelled (sqlwork.Rollback).
func (c *Client) txn(ctx context.Context, body func(context.Context) (string, error), what func() string) (rolledBack bool, err error) {
	if _, err := c.conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return false, fmt.Errorf("tpcc %s: begin: %w", what(), err)
	}
	c.skipped = 0
	step, err := body(ctx)
	if err == nil {
		if _, err = c.conn.ExecContext(ctx, "COMMIT"); err == nil {
			c.endOrder(true)
			c.w.stats.skipped.Add(c.skipped)
			return false, nil
		}
		step = "commit"
	}
	c.endOrder(false)
	if errors.Is(err, errUnusedItem) {
		if _, err := c.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			return false, fmt.Errorf("tpcc %s: planned rollback: %w", what(), err)
		}
		return true, nil
	}
	return false, sqlwork.Rollback(ctx, c.conn, "tpcc "+what()+": "+step, err)
}
