package oltp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/sqlwire"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// Statement kinds, per table, in sysbench's order (oltp_common.lua
// stmt_defs).
const (
	sPoint = iota
	sSimple
	sSum
	sOrder
	sDistinct
	sIndexUpdate
	sNonIndexUpdate
	sDelete
	sInsert
	nStmts
)

var stmtNames = [nStmts]string{"point select", "simple range", "sum range", "order range", "distinct range",
	"index update", "non-index update", "delete", "insert"}

// statements returns sysbench's statements on table i in dialect d.
func statements(d engine.Dialect, i int64) [nStmts]string {
	t := table(i)
	p1, p2 := d.Placeholder(1), d.Placeholder(2)
	return [nStmts]string{
		"SELECT c FROM " + t + " WHERE id=" + p1,
		"SELECT c FROM " + t + " WHERE id BETWEEN " + p1 + " AND " + p2,
		"SELECT SUM(k) FROM " + t + " WHERE id BETWEEN " + p1 + " AND " + p2,
		"SELECT c FROM " + t + " WHERE id BETWEEN " + p1 + " AND " + p2 + " ORDER BY c",
		"SELECT DISTINCT c FROM " + t + " WHERE id BETWEEN " + p1 + " AND " + p2 + " ORDER BY c",
		"UPDATE " + t + " SET k=k+1 WHERE id=" + p1,
		"UPDATE " + t + " SET c=" + p1 + " WHERE id=" + p2,
		"DELETE FROM " + t + " WHERE id=" + p1,
		"INSERT INTO " + t + " (id, k, c, pad) VALUES (" + d.Placeholders(4) + ")",
	}
}

// used reports which statements the workload's transaction runs, as
// sysbench's prepare_statements prepares only those.
func (w *Workload) used() [nStmts]bool {
	var u [nStmts]bool
	if w.readWrite {
		u[sPoint] = true
		if w.opt.rangeSelects {
			u[sSimple], u[sSum], u[sOrder], u[sDistinct] = true, true, true, true
		}
	}
	u[sIndexUpdate], u[sNonIndexUpdate], u[sDelete], u[sInsert] = true, true, true, true
	return u
}

// NewClient returns client id bound to session s; its statements are
// prepared on the session's connection at the first Do.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
	if err != nil {
		return nil, fmt.Errorf("%s client %d: %w", w.name, id, err)
	}
	return &Client{w: w, conn: q.Conn(), d: q.Dialect(), rng: workload.NewRand(w.opt.seed, w.opt.seeded, streamClient, uint64(id))}, nil
}

// Client runs sysbench transactions on its own connection. It is used by
// one goroutine.
type Client struct {
	w     *Workload
	conn  *sql.Conn
	d     engine.Dialect
	rng   *rand.Rand
	stmts [][nStmts]*sql.Stmt // per table, index 0 is sbtest1
	ready bool
	cbuf  []byte
	// eligible is whether the client can run on a lane; taken is the
	// connection a lane runs the events on, taken from its driver at the
	// first one (lane.go).
	eligible sqlwire.Eligible
	taken    sqlwire.Conn
	names    [][nStmts]string // per table, the statements' names on taken
	args     [4][]byte        // string arguments' bytes, reused
	argv     []sqlwire.Arg
}

// prepare prepares the statements the transaction uses on every table,
// once; lazily, so it runs under the caller's context and after the load.
func (c *Client) prepare(ctx context.Context) error {
	if c.ready {
		return nil
	}
	used := c.w.used()
	c.stmts = make([][nStmts]*sql.Stmt, c.w.opt.tables)
	for t := range c.stmts {
		qs := statements(c.d, int64(t)+1)
		for k := range nStmts {
			if !used[k] {
				continue
			}
			st, err := c.conn.PrepareContext(ctx, qs[k])
			if err != nil {
				c.Close()
				return fmt.Errorf("%s: prepare %s on %s: %w", c.w.name, stmtNames[k], table(int64(t)+1), err)
			}
			c.stmts[t][k] = st
		}
	}
	c.ready = true
	return nil
}

// Close releases the prepared statements; the connection is the session's.
func (c *Client) Close() error {
	if c.taken != nil {
		c.taken.Close(context.Background())
		c.taken = nil
	}
	for t := range c.stmts {
		sqlwork.CloseAll(c.stmts[t][:])
	}
	c.stmts = nil
	c.ready = false
	return nil
}

// Do runs one sysbench event: BEGIN, the statements of oltp_read_write's
// or oltp_write_only's event(), COMMIT (none with skip_trx). A failed
// transaction is rolled back and returned, labelled, never retried.
func (c *Client) Do(ctx context.Context) (int, error) {
	if lane.From(ctx) != nil && c.OnLane() {
		return 0, c.laneDo(ctx)
	}
	if err := c.prepare(ctx); err != nil {
		return 0, err
	}
	if c.w.opt.skipTrx {
		if step, err := c.body(ctx); err != nil {
			return 0, fmt.Errorf("%s: %s: %w", c.w.name, step, err)
		}
		return 0, nil
	}
	return 0, sqlwork.Txn(ctx, c.conn, c.w.name,
		func() (string, error) { return c.body(ctx) },
		func(step string) string { return c.w.name + ": " + step })
}

// table draws a table number (sysbench.rand.uniform(1, tables)) and
// returns its index in c.stmts.
func (c *Client) table() int {
	return int(randUniformDist(c.rng, 1, uint32(c.w.opt.tables))) - 1
}

// id draws an id (sysbench.rand.default(1, table_size)).
func (c *Client) id() int64 {
	return int64(c.w.dist(c.rng, 1, uint32(c.w.opt.tableSize)))
}

// body runs the event's statements in sysbench's order, each group on a
// table of its own draw, and names the statement that failed.
func (c *Client) body(ctx context.Context) (string, error) {
	o := &c.w.opt
	if c.w.readWrite {
		t := c.table()
		for range o.pointSelects {
			id := c.id()
			if err := c.stmt(ctx, t, sPoint, id); err != nil {
				return c.step(sPoint, t, id, err), err
			}
		}
		if o.rangeSelects {
			for _, r := range []struct {
				kind  int
				count int64
			}{{sSimple, o.simpleRanges}, {sSum, o.sumRanges}, {sOrder, o.orderRanges}, {sDistinct, o.distinctRanges}} {
				t := c.table()
				for range r.count {
					id := c.id()
					if err := c.stmt(ctx, t, r.kind, id, id+o.rangeSize-1); err != nil {
						return c.step(r.kind, t, id, err), err
					}
				}
			}
		}
	}
	t := c.table()
	for range o.indexUpdates {
		id := c.id()
		if err := c.stmt(ctx, t, sIndexUpdate, id); err != nil {
			return c.step(sIndexUpdate, t, id, err), err
		}
	}
	t = c.table()
	for range o.nonIndexUpdates {
		cv := c.randString(cTemplate)
		id := c.id()
		if err := c.stmt(ctx, t, sNonIndexUpdate, cv, id); err != nil {
			return c.step(sNonIndexUpdate, t, id, err), err
		}
	}
	t = c.table()
	for range o.deleteInserts {
		id := c.id()
		k := c.id()
		if err := c.stmt(ctx, t, sDelete, id); err != nil {
			return c.step(sDelete, t, id, err), err
		}
		cv, pad := c.randString(cTemplate), c.randString(padTemplate)
		if err := c.stmt(ctx, t, sInsert, id, k, cv, pad); err != nil {
			return c.step(sInsert, t, id, err), err
		}
	}
	return "", nil
}

// stmt runs statement kind on table t: on the connection a lane took
// (lane.go), or through database/sql, where a SELECT's rows are read to
// the end as sysbench fetches every result set.
func (c *Client) stmt(ctx context.Context, t, kind int, args ...any) error {
	if c.taken != nil {
		return c.laneStmt(ctx, t, kind, args)
	}
	st := c.stmts[t][kind]
	if kind < sIndexUpdate {
		return c.query(ctx, st, args...)
	}
	_, err := st.ExecContext(ctx, args...)
	return err
}

// query runs a SELECT and reads its rows to the end.
func (c *Client) query(ctx context.Context, st *sql.Stmt, args ...any) error {
	_, err := sqlwork.Drain(st.QueryContext(ctx, args...))
	return err
}

// randString returns a fresh value of template tmpl.
func (c *Client) randString(tmpl string) string {
	c.cbuf = appendRandString(c.cbuf[:0], c.rng, tmpl)
	return string(c.cbuf)
}

// step names a failed statement: kind, table and id, and what a duplicate
// key there means.
func (c *Client) step(kind, t int, id int64, err error) string {
	s := fmt.Sprintf("%s on %s (id %d)", stmtNames[kind], table(int64(t)+1), id)
	if kind == sInsert && duplicateKey(err) {
		s += ": duplicate key, a concurrent delete+insert of the same id (sysbench's pgsql driver ignores this error and restarts the transaction)"
	}
	return s
}

// duplicateKey reports a unique violation: SQLSTATE 23505 (pgx exposes
// SQLState) or MySQL error 1062.
func duplicateKey(err error) bool {
	var st interface{ SQLState() string }
	if errors.As(err, &st) && st.SQLState() == "23505" {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "SQLSTATE 23505") || strings.Contains(msg, "Error 1062")
}
