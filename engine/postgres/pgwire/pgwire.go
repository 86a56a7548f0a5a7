// Package pgwire runs prepared statements on a PostgreSQL connection taken
// over from pgx, for clients on a lane (driver/lane): each round trip is
// pgbench -M prepared's (Bind, Describe, Execute per statement, one Sync),
// written with one write and read with as few reads as the reply needs,
// waiting in the lane's epoll rather than Go's netpoller.
//
// pgx still does what is rare and intricate (connecting, SCRAM, preparing);
// Take then takes its socket, so the statements the server runs are the
// ones pgconn would send, with nothing allocated per round trip.
package pgwire

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/sqlwire"
)

// ErrNotPlain says a connection cannot be taken over: it is not pgx's, or
// runs over TLS (whose records only crypto/tls can read). Callers fall back
// to their goroutine-per-client path.
var ErrNotPlain = errors.New("not a plain pgx connection")

func init() { sqlwire.Register(engine.Postgres, protocol{}) }

// protocol is PostgreSQL's sqlwire.Protocol.
type protocol struct{}

func (protocol) Plain(conn *sql.Conn) bool { return Plain(conn) }

func (protocol) Take(ctx context.Context, conn *sql.Conn, stmts []sqlwire.Statement) (sqlwire.Conn, error) {
	return Take(ctx, conn, stmts)
}

// Conn is one taken-over connection. Used by one client.
type Conn struct {
	sock   *lane.Socket
	w      []byte
	params [][]byte // a call's arguments as text
	nums   [][]byte // integer arguments' digits, by argument index
	row    [][]byte
	rowBuf []byte
	// TxStatus is the last ReadyForQuery's: 'I' idle, 'T' in a
	// transaction, 'E' in a failed one.
	TxStatus byte
	broken   error
}

// Plain reports whether the pgx connection under conn can be taken over.
func Plain(conn *sql.Conn) bool {
	return conn.Raw(func(dc any) error {
		pc, err := pgConn(dc)
		if err != nil {
			return err
		}
		if _, ok := pc.Conn().(syscall.Conn); !ok {
			return ErrNotPlain
		}
		return nil
	}) == nil
}

func pgConn(dc any) (*pgconn.PgConn, error) {
	sc, ok := dc.(*stdlib.Conn)
	if !ok {
		return nil, ErrNotPlain
	}
	return sc.Conn().PgConn(), nil
}

// Take prepares stmts on conn's pgx connection, then takes its socket out
// of pgx and out of Go's netpoller (a duplicate descriptor survives the
// net.Conn's Close). conn is dead afterwards: database/sql discards it
// when its session is closed. Close the returned Conn instead.
func Take(ctx context.Context, conn *sql.Conn, stmts []sqlwire.Statement) (*Conn, error) {
	var c *Conn
	err := conn.Raw(func(dc any) error {
		pc, err := pgConn(dc)
		if err != nil {
			return err
		}
		for _, s := range stmts {
			if _, err := pc.Prepare(ctx, s.Name, s.SQL, nil); err != nil {
				return fmt.Errorf("prepare %s: %w", s.Name, err)
			}
		}
		if err := pc.SyncConn(ctx); err != nil {
			return err
		}
		sc, ok := pc.Conn().(syscall.Conn)
		if !ok {
			return ErrNotPlain
		}
		sock, err := lane.TakeSocket(sc, "postgres")
		if err != nil {
			return err
		}
		hc, err := pc.Hijack()
		if err != nil {
			sock.Close(nil)
			return err
		}
		hc.Conn.Close() // leaves the netpoller; the socket lives on in sock
		c = &Conn{sock: sock, TxStatus: hc.TxStatus}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("take the connection from pgx: %w", err)
	}
	return c, nil
}

// Exec runs calls in one round trip on the caller's lane and returns the
// last call's Result. A statement's error is a *pgconn.PgError; the server
// skips the calls after it, and TxStatus says whether a transaction needs
// a ROLLBACK. An I/O error or a cancelled context breaks the connection
// for good (the reply's place in the stream is lost).
func (c *Conn) Exec(ctx context.Context, calls ...sqlwire.Call) (sqlwire.Result, error) {
	l := lane.From(ctx)
	if l == nil {
		return sqlwire.Result{}, errors.New("pgwire: Exec called outside a lane")
	}
	if c.broken != nil {
		l.Yield() // fails at once, every time: let the lane's others run
		return sqlwire.Result{}, c.broken
	}
	c.w = c.w[:0]
	for i := range calls {
		b := pgproto3.Bind{PreparedStatement: calls[i].Name, Parameters: c.text(calls[i].Args)}
		var err error
		if c.w, err = b.Encode(c.w); err != nil {
			return sqlwire.Result{}, fmt.Errorf("%s: %w", calls[i].Name, err)
		}
		c.w = appendPortalMsg(c.w, 'D', 'P')
		c.w = appendExecute(c.w)
	}
	c.w = append(c.w, 'S', 0, 0, 0, 4)
	if err := c.sock.Write(l, c.w); err != nil {
		return sqlwire.Result{}, c.fail(l, err)
	}
	return c.read(l, len(calls))
}

// Simple runs one statement with the simple query protocol (ROLLBACK after
// a failed statement) and returns its error.
func (c *Conn) Simple(ctx context.Context, query string) error {
	l := lane.From(ctx)
	if l == nil {
		return errors.New("pgwire: Simple called outside a lane")
	}
	if c.broken != nil {
		l.Yield()
		return c.broken
	}
	c.w = append(c.w[:0], 'Q', 0, 0, 0, 0)
	c.w = append(c.w, query...)
	c.w = append(c.w, 0)
	binary.BigEndian.PutUint32(c.w[1:], uint32(len(c.w)-1))
	if err := c.sock.Write(l, c.w); err != nil {
		return c.fail(l, err)
	}
	_, err := c.read(l, 1)
	return err
}

// Rollback ends a failed transaction and returns err (with the
// ROLLBACK's own error, if it failed): it sends ROLLBACK when the server
// says a transaction is open, and nothing when the connection broke, as
// the server aborts a transaction whose connection closes.
func (c *Conn) Rollback(ctx context.Context, err error) error {
	if c.broken != nil || c.TxStatus == 'I' {
		return err
	}
	if rerr := c.Simple(ctx, "ROLLBACK"); rerr != nil {
		return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
	}
	return err
}

// text returns args as Bind's text parameters (nil for NULL), integers
// formatted into buffers the connection keeps.
func (c *Conn) text(args []sqlwire.Arg) [][]byte {
	c.params = c.params[:0]
	for i, a := range args {
		switch v, isInt := a.Integer(); {
		case isInt:
			for len(c.nums) <= i {
				c.nums = append(c.nums, nil)
			}
			c.nums[i] = strconv.AppendInt(c.nums[i][:0], v, 10)
			c.params = append(c.params, c.nums[i])
		case a.IsNull():
			c.params = append(c.params, nil)
		default:
			c.params = append(c.params, a.Raw())
		}
	}
	return c.params
}

// appendPortalMsg appends a Describe (or Close) of the unnamed portal.
func appendPortalMsg(b []byte, typ, what byte) []byte {
	return append(b, typ, 0, 0, 0, 6, what, 0)
}

// appendExecute appends an Execute of the unnamed portal, all rows.
func appendExecute(b []byte) []byte {
	return append(b, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0)
}

// read reads the reply up to ReadyForQuery. calls is how many statements
// the round trip ran; the Result is the last one's.
func (c *Conn) read(l *lane.Lane, calls int) (sqlwire.Result, error) {
	var res sqlwire.Result
	var first error
	done := 0 // statements whose reply ended (CommandComplete, error, empty)
	c.row = c.row[:0]
	for {
		typ, body, err := c.message(l)
		if err != nil {
			return sqlwire.Result{}, c.fail(l, err)
		}
		last := done == calls-1
		switch typ {
		case 'D':
			if last {
				if res.Row == nil {
					if err := c.copyRow(body); err != nil {
						return sqlwire.Result{}, c.fail(l, err)
					}
					res.Row = c.row
				}
			}
		case 'C':
			if last {
				res.Rows = tagRows(body)
			}
			done++
		case 'I':
			done++
		case 'E':
			var er pgproto3.ErrorResponse
			if err := er.Decode(body); err != nil {
				return sqlwire.Result{}, c.fail(l, err)
			}
			if first == nil {
				first = pgconn.ErrorResponseToPgError(&er)
			}
			done = calls // the server skips the rest up to Sync
		case 'Z':
			if len(body) > 0 {
				c.TxStatus = body[0]
			}
			return res, first
		}
		// '1', '2', 'T', 'n', 'N' (notices), 'S' (parameter status) and
		// 'A' (notifications) carry nothing the caller asked for.
	}
}

// message returns the next message's type and body, which is valid until
// the next call.
func (c *Conn) message(l *lane.Lane) (byte, []byte, error) {
	for {
		b, need := c.sock.Buffered(), 5
		if len(b) >= 5 {
			n := int(binary.BigEndian.Uint32(b[1:]))
			if n < 4 {
				return 0, nil, fmt.Errorf("postgres sent a message of length %d", n)
			}
			if need = 1 + n; len(b) >= need {
				c.sock.Consume(need)
				return b[0], b[5:need], nil
			}
		}
		if err := c.sock.Fill(l, need); err != nil {
			return 0, nil, err
		}
	}
}

// copyRow keeps a DataRow's columns past the next read.
func (c *Conn) copyRow(body []byte) error {
	if len(body) < 2 {
		return errors.New("postgres sent a short data row")
	}
	n := int(binary.BigEndian.Uint16(body))
	c.rowBuf = append(c.rowBuf[:0], body[2:]...)
	c.row = c.row[:0]
	for p, i := 0, 0; i < n; i++ {
		if p+4 > len(c.rowBuf) {
			return errors.New("postgres sent a short data row")
		}
		size := int(int32(binary.BigEndian.Uint32(c.rowBuf[p:])))
		p += 4
		if size < 0 {
			c.row = append(c.row, nil)
			continue
		}
		if p+size > len(c.rowBuf) {
			return errors.New("postgres sent a short data row")
		}
		c.row = append(c.row, c.rowBuf[p:p+size:p+size])
		p += size
	}
	return nil
}

// tagRows reads the row count at the end of a command tag ("UPDATE 1",
// "INSERT 0 1", "SELECT 100").
func tagRows(tag []byte) int64 {
	if n := len(tag); n > 0 && tag[n-1] == 0 {
		tag = tag[:n-1]
	}
	var v, mul int64 = 0, 1
	for i := len(tag) - 1; i >= 0 && tag[i] >= '0' && tag[i] <= '9'; i-- {
		v += int64(tag[i]-'0') * mul
		mul *= 10
	}
	return v
}

// fail breaks the connection: what the server sends next cannot be matched
// to a request any more.
func (c *Conn) fail(l *lane.Lane, err error) error {
	c.broken = fmt.Errorf("postgres connection closed after: %w", err)
	c.sock.Close(l)
	return err
}

// Close ends the session (Terminate) and closes the socket. ctx names the
// lane the connection waited on, if any.
func (c *Conn) Close(ctx context.Context) error {
	c.sock.WriteNow([]byte{'X', 0, 0, 0, 4})
	c.sock.Close(lane.From(ctx))
	return nil
}
