package oltp

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/engine/postgres/pgwire"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// OnLane reports whether the client can run on a lane (driver/lane): on
// PostgreSQL over a plain pgx connection, whose socket it then takes over.
func (c *Client) OnLane() bool { return c.eligible.OnLane(c.conn, c.d) }

// laneDo runs one event on the taken connection with sysbench's round
// trips: BEGIN and COMMIT as simple queries (sysbench's pgsql driver sends
// them so), each statement prepared, one round trip each.
func (c *Client) laneDo(ctx context.Context) error {
	if c.taken == nil {
		if err := c.take(ctx); err != nil {
			return err
		}
	}
	if c.w.opt.skipTrx {
		if step, err := c.body(ctx); err != nil {
			return fmt.Errorf("%s: %s: %w", c.w.name, step, err)
		}
		return nil
	}
	if err := c.taken.Simple(ctx, "BEGIN"); err != nil {
		return c.taken.Rollback(ctx, sqlwork.Labelled(c.w.name+": begin", err))
	}
	if step, err := c.body(ctx); err != nil {
		return c.taken.Rollback(ctx, sqlwork.Labelled(c.w.name+": "+step, err))
	}
	if err := c.taken.Simple(ctx, "COMMIT"); err != nil {
		return c.taken.Rollback(ctx, sqlwork.Labelled(c.w.name+": commit", err))
	}
	return nil
}

// laneStmt runs one prepared statement with its arguments as text.
func (c *Client) laneStmt(ctx context.Context, t, kind int, args []any) error {
	c.argv = c.argv[:0]
	for i, a := range args {
		switch v := a.(type) {
		case int64:
			c.args[i] = strconv.AppendInt(c.args[i][:0], v, 10)
		case string:
			c.args[i] = append(c.args[i][:0], v...)
		default:
			return fmt.Errorf("oltp: argument %d of %s is a %T", i+1, stmtNames[kind], a)
		}
		c.argv = append(c.argv, c.args[i])
	}
	_, err := c.taken.Exec(ctx, pgwire.Call{Name: c.names[t][kind], Args: c.argv})
	return err
}

// take prepares the statements the event uses on every table and takes
// the connection from pgx.
func (c *Client) take(ctx context.Context) error {
	used := c.w.used()
	prefix := pgwire.Prefix("oltp")
	c.names = make([][nStmts]string, c.w.opt.tables)
	var stmts []pgwire.Statement
	for t := range c.names {
		qs := statements(c.d, int64(t)+1)
		for k := range nStmts {
			if used[k] {
				c.names[t][k] = prefix + strconv.Itoa(t) + "_" + strconv.Itoa(k)
				stmts = append(stmts, pgwire.Statement{Name: c.names[t][k], SQL: qs[k]})
			}
		}
	}
	pw, err := pgwire.Take(ctx, c.conn, stmts)
	if err != nil {
		return fmt.Errorf("%s: %w", c.w.name, err)
	}
	c.taken = pw
	return nil
}
