package tpcb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/sqlwire"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// OnLane reports whether the client can run on a lane (driver/lane): over a
// plain connection of a dialect with a lane protocol (engine/sqlwire),
// whose socket it then takes over.
func (c *Client) OnLane() bool { return !c.noPgx && c.eligible.OnLane(c.conn, c.d) }

// laneTxn runs the transaction on the connection taken from its driver,
// waiting in the lane, with the round trips of the goroutine path: on
// PostgreSQL pgxTxn's (prepared BEGIN with the first UPDATE, then one
// each, as pgbench -M prepared), elsewhere txn's (BEGIN and COMMIT as
// simple queries, the statements prepared, one round trip each).
func (c *Client) laneTxn(ctx context.Context, aid, tid, bid, delta int64) error {
	if c.taken == nil {
		if err := c.take(ctx); err != nil {
			return err
		}
	}
	tc := c.taken
	args := c.laneArgs(aid, tid, bid, delta)
	fail := func(step string, err error) error {
		return tc.Rollback(ctx, sqlwork.Labelled(fmt.Sprintf("tpcb (aid %d, tid %d, bid %d, delta %d): %s", aid, tid, bid, delta, step), err))
	}
	call := func(s int) sqlwire.Call { return sqlwire.Call{Name: c.wire.names[s], Args: args[s]} }
	if c.d == engine.Postgres {
		if _, err := tc.Exec(ctx, sqlwire.Call{Name: c.wire.names[wBegin]}, call(sUpdAccount)); err != nil {
			return fail("begin and "+stmtNames[sUpdAccount], err)
		}
	} else {
		if err := tc.Simple(ctx, "BEGIN"); err != nil {
			return fail("begin", err)
		}
		if _, err := tc.Exec(ctx, call(sUpdAccount)); err != nil {
			return fail(stmtNames[sUpdAccount], err)
		}
	}
	res, err := tc.Exec(ctx, call(sSelAccount))
	if err == nil {
		err = checkBalance(res.Row, aid)
	}
	if err != nil {
		return fail(stmtNames[sSelAccount], err)
	}
	for _, s := range []int{sUpdTeller, sUpdBranch, sInsHistory} {
		if _, err := tc.Exec(ctx, call(s)); err != nil {
			return fail(stmtNames[s], err)
		}
	}
	if c.d == engine.Postgres {
		_, err = tc.Exec(ctx, sqlwire.Call{Name: c.wire.names[wCommit]})
	} else {
		err = tc.Simple(ctx, "COMMIT")
	}
	if err != nil {
		return fail("commit", err)
	}
	return nil
}

// laneArgs sets this transaction's arguments in buffers the client keeps.
func (c *Client) laneArgs(aid, tid, bid, delta int64) *[nStmts][]sqlwire.Arg {
	a := &c.args
	d, ai, t, b := sqlwire.Int(delta), sqlwire.Int(aid), sqlwire.Int(tid), sqlwire.Int(bid)
	a[sUpdAccount] = append(a[sUpdAccount][:0], d, ai)
	a[sSelAccount] = append(a[sSelAccount][:0], ai)
	a[sUpdTeller] = append(a[sUpdTeller][:0], d, t)
	a[sUpdBranch] = append(a[sUpdBranch][:0], d, b)
	a[sInsHistory] = append(a[sInsHistory][:0], t, b, ai, d)
	return a
}

// take prepares the statements (BEGIN and COMMIT too on PostgreSQL) and
// takes the connection from its driver.
func (c *Client) take(ctx context.Context) error {
	texts := c.wire.name(c.qs)
	n := nWire
	if c.d != engine.Postgres {
		n = nStmts // MySQL cannot prepare BEGIN
	}
	stmts := make([]sqlwire.Statement, n)
	for i := range stmts {
		stmts[i] = sqlwire.Statement{Name: c.wire.names[i], SQL: texts[i]}
	}
	tc, err := sqlwire.Take(ctx, c.conn, c.d, stmts)
	if err != nil {
		return fmt.Errorf("tpcb: %w", err)
	}
	c.taken = tc
	return nil
}

// checkBalance checks the SELECT's one row: the account exists and its
// balance is an integer.
func checkBalance(row [][]byte, aid int64) error {
	if len(row) != 1 {
		return fmt.Errorf("account %d is missing: was the load phase run?", aid)
	}
	if _, err := strconv.ParseInt(string(row[0]), 10, 64); err != nil {
		return fmt.Errorf("abalance of account %d: %w", aid, err)
	}
	return nil
}
