package tpcb

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tierbench/tierbench/workload/sqlwork"
)

// errNotPgx says a PostgreSQL connection is not pgx's, so the portable path
// runs instead.
var errNotPgx = errors.New("not a pgx connection")

// pgxTxn runs the transaction on PostgreSQL on the connection's own pgx
// connection rather than through database/sql, and sends BEGIN in the same
// round trip as the first UPDATE, as PgJDBC does with autocommit off. The
// server runs exactly pgbench's statements; what changes is the client's
// cost. Measured with studies/tpcb-driver-check.yaml on a CPU-bound 2-core
// machine, database/sql's per-statement work and the extra round trip (a
// syscall pair and a goroutine wakeup each) held the portable path at 89%
// of pgbench's throughput at 32 clients.
func (c *Client) pgxTxn(ctx context.Context, aid, tid, bid, delta int64) error {
	var step string
	err := c.conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNotPgx
		}
		var err error
		step, err = c.pgxBody(ctx, sc.Conn(), aid, tid, bid, delta)
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

// pgxBody runs BEGIN and the five statements and COMMIT, and names the step
// that failed. pgx prepares each statement once per connection (its
// statement cache) and then sends only Bind and Execute.
func (c *Client) pgxBody(ctx context.Context, pc *pgx.Conn, aid, tid, bid, delta int64) (string, error) {
	var b pgx.Batch
	b.Queue("BEGIN")
	b.Queue(c.qs[sUpdAccount], delta, aid)
	if err := pc.SendBatch(ctx, &b).Close(); err != nil {
		return "begin and " + stmtNames[sUpdAccount], err
	}
	var abalance int64
	if err := pc.QueryRow(ctx, c.qs[sSelAccount], aid).Scan(&abalance); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			err = fmt.Errorf("account %d is missing: was the load phase run?", aid)
		}
		return stmtNames[sSelAccount], err
	}
	if _, err := pc.Exec(ctx, c.qs[sUpdTeller], delta, tid); err != nil {
		return stmtNames[sUpdTeller], err
	}
	if _, err := pc.Exec(ctx, c.qs[sUpdBranch], delta, bid); err != nil {
		return stmtNames[sUpdBranch], err
	}
	if _, err := pc.Exec(ctx, c.qs[sInsHistory], tid, bid, aid, delta); err != nil {
		return stmtNames[sInsHistory], err
	}
	if _, err := pc.Exec(ctx, "COMMIT"); err != nil {
		return "commit", err
	}
	return "", nil
}
