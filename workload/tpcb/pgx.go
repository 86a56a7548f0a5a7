package tpcb

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tierbench/tierbench/engine/sqlwire"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// errNotPgx says a PostgreSQL connection is not pgx's, so the portable path
// runs instead.
var errNotPgx = errors.New("not a pgx connection")

// pgxTxn runs the transaction on PostgreSQL through pgx's wire-protocol
// layer (pgconn) on the connection's own pgx connection, rather than
// through database/sql, and sends BEGIN in the same round trip as the
// first UPDATE, as PgJDBC does with autocommit off. The server runs
// exactly pgbench -M prepared's statements, one round trip each (Bind,
// Describe, Execute, Sync, with text arguments); what changes is the
// client's cost. Measured with studies/tpcb-driver-check.yaml on a
// CPU-bound 2-core machine: database/sql's per-statement work held the
// portable path at 89% of pgbench's throughput at 32 clients, and pgx's
// own query layer (argument encoding, statement cache, row scanning) cost
// another 4% against pgconn on a SELECT-per-round-trip loop.
func (c *Client) pgxTxn(ctx context.Context, aid, tid, bid, delta int64) error {
	var step string
	err := c.conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNotPgx
		}
		var err error
		step, err = c.wire.txn(ctx, sc.Conn().PgConn(), c.qs, aid, tid, bid, delta)
		return err
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errNotPgx):
		c.noPgx = true
		return c.txn(ctx, aid, tid, bid, delta)
	}
	return sqlwork.Rollback(ctx, c.conn, fmt.Sprintf("tpcb (aid %d, tid %d, bid %d, delta %d): %s", aid, tid, bid, delta, step), err)
}

// Wire statements: the five of statements() plus BEGIN and COMMIT, all
// prepared, as pgbench -M prepared prepares its BEGIN and END.
const (
	wBegin = nStmts + iota
	wCommit
	nWire
)

// wireSession is one client's prepared statements and argument buffers on
// its connection. Used by one goroutine.
type wireSession struct {
	conn  *pgconn.PgConn // the connection names were prepared on
	names [nWire]string
	// text-encoded arguments, rebuilt for each transaction in place
	delta, aid, tid, bid []byte
	args                 [nStmts][][]byte
}

// prepare prepares the statements on pc under names unique to this session.
func (w *wireSession) prepare(ctx context.Context, pc *pgconn.PgConn, qs [nStmts]string) (string, error) {
	for i, text := range w.name(qs) {
		if _, err := pc.Prepare(ctx, w.names[i], text, nil); err != nil {
			return "prepare " + wireName(i), err
		}
	}
	w.conn = pc
	return "", nil
}

// name names the session's statements, BEGIN and COMMIT included, under
// a prefix no other client of the process uses (sqlwire.Prefix: a pooled
// connection may hold an earlier client's), and returns their texts.
func (w *wireSession) name(qs [nStmts]string) [nWire]string {
	prefix := sqlwire.Prefix("tpcb")
	texts := [nWire]string{}
	copy(texts[:], qs[:])
	texts[wBegin], texts[wCommit] = "BEGIN", "COMMIT"
	for i := range texts {
		w.names[i] = prefix + strconv.Itoa(i)
	}
	return texts
}

func wireName(i int) string {
	switch i {
	case wBegin:
		return "begin"
	case wCommit:
		return "commit"
	}
	return stmtNames[i]
}

// setArgs encodes this transaction's arguments as text, reusing buffers.
func (w *wireSession) setArgs(aid, tid, bid, delta int64) {
	w.delta = strconv.AppendInt(w.delta[:0], delta, 10)
	w.aid = strconv.AppendInt(w.aid[:0], aid, 10)
	w.tid = strconv.AppendInt(w.tid[:0], tid, 10)
	w.bid = strconv.AppendInt(w.bid[:0], bid, 10)
	w.args[sUpdAccount] = append(w.args[sUpdAccount][:0], w.delta, w.aid)
	w.args[sSelAccount] = append(w.args[sSelAccount][:0], w.aid)
	w.args[sUpdTeller] = append(w.args[sUpdTeller][:0], w.delta, w.tid)
	w.args[sUpdBranch] = append(w.args[sUpdBranch][:0], w.delta, w.bid)
	w.args[sInsHistory] = append(w.args[sInsHistory][:0], w.tid, w.bid, w.aid, w.delta)
}

// txn runs BEGIN and the first UPDATE in one round trip, then the other
// four statements and COMMIT one round trip each, and names the step that
// failed.
func (w *wireSession) txn(ctx context.Context, pc *pgconn.PgConn, qs [nStmts]string, aid, tid, bid, delta int64) (string, error) {
	if w.conn != pc {
		if step, err := w.prepare(ctx, pc, qs); err != nil {
			return step, err
		}
	}
	w.setArgs(aid, tid, bid, delta)

	var b pgconn.Batch
	b.ExecPrepared(w.names[wBegin], nil, nil, nil)
	b.ExecPrepared(w.names[sUpdAccount], w.args[sUpdAccount], nil, nil)
	if err := drain(pc.ExecBatch(ctx, &b)); err != nil {
		return "begin and " + stmtNames[sUpdAccount], err
	}

	rr := pc.ExecPrepared(ctx, w.names[sSelAccount], w.args[sSelAccount], nil, nil)
	found, perr := false, error(nil)
	for rr.NextRow() {
		if v := rr.Values(); len(v) == 1 {
			_, perr = strconv.ParseInt(string(v[0]), 10, 64)
			found = true
		}
	}
	if _, err := rr.Close(); err != nil {
		return stmtNames[sSelAccount], err
	}
	switch {
	case perr != nil:
		return stmtNames[sSelAccount], fmt.Errorf("abalance of account %d: %w", aid, perr)
	case !found:
		return stmtNames[sSelAccount], fmt.Errorf("account %d is missing: was the load phase run?", aid)
	}

	for _, s := range []int{sUpdTeller, sUpdBranch, sInsHistory} {
		if _, err := pc.ExecPrepared(ctx, w.names[s], w.args[s], nil, nil).Close(); err != nil {
			return stmtNames[s], err
		}
	}
	if _, err := pc.ExecPrepared(ctx, w.names[wCommit], nil, nil, nil).Close(); err != nil {
		return "commit", err
	}
	return "", nil
}

// drain reads every result of a batch and returns the first error.
func drain(mrr *pgconn.MultiResultReader) error {
	var first error
	for mrr.NextResult() {
		if _, err := mrr.ResultReader().Close(); err != nil && first == nil {
			first = err
		}
	}
	if err := mrr.Close(); err != nil && first == nil {
		first = err
	}
	return first
}
