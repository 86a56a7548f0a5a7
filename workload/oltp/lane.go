package oltp

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/engine/sqlwire"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// OnLane reports whether the client can run on a lane (driver/lane): over a
// plain connection of a dialect with a lane protocol (engine/sqlwire),
// whose socket it then takes over.
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

// laneStmt runs one prepared statement: integers as integers, strings as
// bytes (sysbench's binds).
func (c *Client) laneStmt(ctx context.Context, t, kind int, args []any) error {
	c.argv = c.argv[:0]
	for i, a := range args {
		switch v := a.(type) {
		case int64:
			c.argv = append(c.argv, sqlwire.Int(v))
		case string:
			c.args[i] = append(c.args[i][:0], v...)
			c.argv = append(c.argv, sqlwire.Bytes(c.args[i]))
		default:
			return fmt.Errorf("oltp: argument %d of %s is a %T", i+1, stmtNames[kind], a)
		}
	}
	_, err := c.taken.Exec(ctx, sqlwire.Call{Name: c.names[t][kind], Args: c.argv})
	return err
}

// take prepares the statements the event uses on every table and takes
// the connection from its driver.
func (c *Client) take(ctx context.Context) error {
	used := c.w.used()
	prefix := sqlwire.Prefix("oltp")
	c.names = make([][nStmts]string, c.w.opt.tables)
	var stmts []sqlwire.Statement
	for t := range c.names {
		qs := statements(c.d, int64(t)+1)
		for k := range nStmts {
			if used[k] {
				c.names[t][k] = prefix + strconv.Itoa(t) + "_" + strconv.Itoa(k)
				stmts = append(stmts, sqlwire.Statement{Name: c.names[t][k], SQL: qs[k]})
			}
		}
	}
	pw, err := sqlwire.Take(ctx, c.conn, c.d, stmts)
	if err != nil {
		return fmt.Errorf("%s: %w", c.w.name, err)
	}
	c.taken = pw
	return nil
}
