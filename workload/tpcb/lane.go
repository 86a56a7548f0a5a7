package tpcb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/engine/postgres/pgwire"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// OnLane reports whether the client can run on a lane (driver/lane): on
// PostgreSQL over a plain pgx connection, whose socket it then takes over.
func (c *Client) OnLane() bool { return !c.noPgx && c.eligible.OnLane(c.conn, c.d) }

// laneTxn runs the transaction as pgxTxn does (the same prepared
// statements and round trips: BEGIN with the first UPDATE, then one each),
// on the connection taken from pgx, waiting in the lane.
func (c *Client) laneTxn(ctx context.Context, aid, tid, bid, delta int64) error {
	if c.taken == nil {
		if err := c.take(ctx); err != nil {
			return err
		}
	}
	w, pw := &c.wire, c.taken
	w.setArgs(aid, tid, bid, delta)
	fail := func(step string, err error) error {
		return pw.Rollback(ctx, sqlwork.Labelled(fmt.Sprintf("tpcb (aid %d, tid %d, bid %d, delta %d): %s", aid, tid, bid, delta, step), err))
	}
	if _, err := pw.Exec(ctx, pgwire.Call{Name: w.names[wBegin]},
		pgwire.Call{Name: w.names[sUpdAccount], Args: w.args[sUpdAccount]}); err != nil {
		return fail("begin and "+stmtNames[sUpdAccount], err)
	}
	res, err := pw.Exec(ctx, pgwire.Call{Name: w.names[sSelAccount], Args: w.args[sSelAccount]})
	if err == nil {
		err = checkBalance(res.Row, aid)
	}
	if err != nil {
		return fail(stmtNames[sSelAccount], err)
	}
	for _, s := range []int{sUpdTeller, sUpdBranch, sInsHistory} {
		if _, err := pw.Exec(ctx, pgwire.Call{Name: w.names[s], Args: w.args[s]}); err != nil {
			return fail(stmtNames[s], err)
		}
	}
	if _, err := pw.Exec(ctx, pgwire.Call{Name: w.names[wCommit]}); err != nil {
		return fail("commit", err)
	}
	return nil
}

// take prepares the statements and takes the connection from pgx.
func (c *Client) take(ctx context.Context) error {
	texts := c.wire.name(c.qs)
	stmts := make([]pgwire.Statement, nWire)
	for i, text := range texts {
		stmts[i] = pgwire.Statement{Name: c.wire.names[i], SQL: text}
	}
	pw, err := pgwire.Take(ctx, c.conn, stmts)
	if err != nil {
		return fmt.Errorf("tpcb: %w", err)
	}
	c.taken = pw
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
