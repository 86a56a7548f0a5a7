// Package mywire runs prepared statements on a MariaDB (or MySQL)
// connection taken over from go-sql-driver/mysql, for clients on a lane
// (driver/lane): COM_STMT_EXECUTE in the binary protocol, integers bound
// as integers, one round trip per statement as sysbench's MySQL driver
// sends them, waiting in the lane's epoll rather than Go's netpoller.
//
// go-sql-driver still connects and authenticates. Its connections are
// dialled through Dial behind Connector, which keep each socket and the
// capabilities the handshake agreed (they decide how replies are framed);
// Take then prepares the statements on the socket and takes it over.
package mywire

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/sqlwire"
)

// ErrNotPlain says a connection cannot be taken over: it was not dialled
// through Dial behind Connector, or runs over TLS or compression.
var ErrNotPlain = errors.New("not a plain go-sql-driver connection dialled by mywire")

var errNoDescriptor = errors.New("mariadb: the connection has no descriptor")

func init() { sqlwire.Register(engine.MySQL, protocol{}) }

// protocol is MySQL's sqlwire.Protocol.
type protocol struct{}

func (protocol) Plain(conn *sql.Conn) bool { return Plain(conn) }

func (protocol) Take(ctx context.Context, conn *sql.Conn, stmts []sqlwire.Statement) (sqlwire.Conn, error) {
	return Take(ctx, conn, stmts)
}

// Plain reports whether conn can be taken over.
func Plain(conn *sql.Conn) bool {
	return conn.Raw(func(dc any) error {
		if c := lookup(dc); c == nil || !c.plain() {
			return ErrNotPlain
		}
		return nil
	}) == nil
}

// Commands and reply headers.
const (
	comQuit        = 0x01
	comQuery       = 0x03
	comStmtPrepare = 0x16
	comStmtExecute = 0x17

	hdrOK  = 0x00
	hdrEOF = 0xfe
	hdrErr = 0xff

	statusInTrans     = 0x0001
	statusMoreResults = 0x0008
)

// Column and parameter types of the binary protocol.
const (
	typeTiny     = 0x01
	typeShort    = 0x02
	typeLong     = 0x03
	typeFloat    = 0x04
	typeDouble   = 0x05
	typeNull     = 0x06
	typeLongLong = 0x08
	typeInt24    = 0x09
	typeYear     = 0x0d
	typeString   = 0xfe

	flagUnsigned = 0x20
)

// column is what a result column's definition says of its values.
type column struct {
	typ      byte
	unsigned bool
}

// stmt is a statement prepared on the connection.
type stmt struct {
	id     uint32
	params int
	cols   []column // from the prepare; replaced when an execute sends its own
}

// Conn is one taken-over connection. Used by one client.
type Conn struct {
	sock         *lane.Socket
	deprecateEOF bool // replies end result sets with an OK packet, not EOF
	cacheMeta    bool // an execute's reply may leave out the column definitions
	stmts        map[string]*stmt
	w            []byte
	cols         []column // the current result's
	row          [][]byte
	rowBuf       []byte
	status       uint16 // the last OK or EOF packet's server status
	broken       error
}

// Take prepares stmts on conn's socket, on the caller's lane, and takes
// the socket from go-sql-driver, whose connection is closed without a
// word to the server (a duplicate descriptor lives on): database/sql
// discards it when its session is closed. Close the returned Conn instead.
func Take(ctx context.Context, conn *sql.Conn, stmts []sqlwire.Statement) (*Conn, error) {
	l := lane.From(ctx)
	if l == nil {
		return nil, errors.New("mywire: Take called outside a lane")
	}
	var c *Conn
	err := conn.Raw(func(dc any) error {
		cc := lookup(dc)
		if cc == nil || !cc.plain() {
			return ErrNotPlain
		}
		sc, ok := cc.Conn.(syscall.Conn)
		if !ok {
			return errNoDescriptor
		}
		sock, err := lane.TakeSocket(sc, "mariadb")
		if err != nil {
			return err
		}
		// The driver's socket closes first, so its COM_QUIT goes nowhere.
		cc.Close()
		if cl, ok := dc.(interface{ Close() error }); ok {
			cl.Close()
		}
		cc.mu.Lock()
		caps, ext := cc.caps, cc.ext
		cc.mu.Unlock()
		c = &Conn{sock: sock, deprecateEOF: caps&capDeprecateEOF != 0,
			cacheMeta: caps&capMySQL == 0 && ext&extCacheMeta != 0, stmts: make(map[string]*stmt, len(stmts))}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("take the connection from go-sql-driver: %w", err)
	}
	for _, s := range stmts {
		if err := c.prepare(l, s); err != nil {
			c.Close(ctx)
			return nil, fmt.Errorf("prepare %s: %w", s.Name, err)
		}
	}
	return c, nil
}

// prepare sends COM_STMT_PREPARE and reads the statement's id, its
// parameters' and its columns' definitions.
func (c *Conn) prepare(l *lane.Lane, s sqlwire.Statement) error {
	c.w = append(c.w[:0], 0, 0, 0, 0, comStmtPrepare)
	c.w = append(c.w, s.SQL...)
	if err := c.send(l); err != nil {
		return err
	}
	p, err := c.packet(l)
	if err != nil {
		return c.fail(l, err)
	}
	if p[0] == hdrErr {
		return serverError(p)
	}
	if p[0] != hdrOK || len(p) < 12 {
		return c.fail(l, errors.New("mariadb sent a malformed prepare reply"))
	}
	st := &stmt{id: binary.LittleEndian.Uint32(p[1:]), params: int(binary.LittleEndian.Uint16(p[7:]))}
	ncols := int(binary.LittleEndian.Uint16(p[5:]))
	if st.params > 0 {
		if _, err := c.columns(l, st.params); err != nil {
			return c.fail(l, err)
		}
	}
	if ncols > 0 {
		cols, err := c.columns(l, ncols)
		if err != nil {
			return c.fail(l, err)
		}
		st.cols = append([]column(nil), cols...)
	}
	c.stmts[s.Name] = st
	return nil
}

// Exec runs calls one round trip each, stopping at the first that fails,
// and returns the last one's Result (its first row with integers as
// decimal text, as PostgreSQL's text format has them). A statement's
// error is a *mysql.MySQLError. An I/O error breaks the connection for
// good.
func (c *Conn) Exec(ctx context.Context, calls ...sqlwire.Call) (sqlwire.Result, error) {
	l := lane.From(ctx)
	if l == nil {
		return sqlwire.Result{}, errors.New("mywire: Exec called outside a lane")
	}
	if c.broken != nil {
		l.Yield() // fails at once, every time: let the lane's others run
		return sqlwire.Result{}, c.broken
	}
	var res sqlwire.Result
	for i, call := range calls {
		st := c.stmts[call.Name]
		if st == nil {
			return sqlwire.Result{}, fmt.Errorf("mywire: no statement prepared as %q", call.Name)
		}
		if err := c.execute(st, call.Args); err != nil {
			return sqlwire.Result{}, err
		}
		if err := c.send(l); err != nil {
			return sqlwire.Result{}, err
		}
		var err error
		if res, err = c.result(l, st, i == len(calls)-1); err != nil {
			return sqlwire.Result{}, err
		}
	}
	return res, nil
}

// execute encodes a COM_STMT_EXECUTE of st with args into c.w: every
// parameter's type sent, integers as LONGLONG, bytes as STRING.
func (c *Conn) execute(st *stmt, args []sqlwire.Arg) error {
	if len(args) != st.params {
		return fmt.Errorf("mywire: %d arguments for a statement of %d parameters", len(args), st.params)
	}
	c.w = append(c.w[:0], 0, 0, 0, 0, comStmtExecute)
	c.w = binary.LittleEndian.AppendUint32(c.w, st.id)
	c.w = append(c.w, 0, 1, 0, 0, 0) // no cursor; one iteration
	if st.params == 0 {
		return nil
	}
	nulls := len(c.w)
	for range (st.params + 7) / 8 {
		c.w = append(c.w, 0)
	}
	c.w = append(c.w, 1) // types follow
	for i, a := range args {
		_, isInt := a.Integer()
		switch {
		case isInt:
			c.w = append(c.w, typeLongLong, 0)
		case a.IsNull():
			c.w[nulls+i/8] |= 1 << (i % 8)
			c.w = append(c.w, typeNull, 0)
		default:
			c.w = append(c.w, typeString, 0)
		}
	}
	for _, a := range args {
		if v, isInt := a.Integer(); isInt {
			c.w = binary.LittleEndian.AppendUint64(c.w, uint64(v))
		} else if !a.IsNull() {
			c.w = appendLenenc(c.w, uint64(len(a.Raw())))
			c.w = append(c.w, a.Raw()...)
		}
	}
	return nil
}

// Simple runs one statement with COM_QUERY (BEGIN, COMMIT, ROLLBACK).
func (c *Conn) Simple(ctx context.Context, query string) error {
	l := lane.From(ctx)
	if l == nil {
		return errors.New("mywire: Simple called outside a lane")
	}
	if c.broken != nil {
		l.Yield()
		return c.broken
	}
	c.w = append(c.w[:0], 0, 0, 0, 0, comQuery)
	c.w = append(c.w, query...)
	if err := c.send(l); err != nil {
		return err
	}
	_, err := c.result(l, nil, false)
	return err
}

// Rollback ends a failed transaction and returns err (with the ROLLBACK's
// own error, if it failed): it sends ROLLBACK when the server said a
// transaction is open, and nothing when the connection broke, as the
// server rolls back a transaction whose connection closes.
func (c *Conn) Rollback(ctx context.Context, err error) error {
	if c.broken != nil || c.status&statusInTrans == 0 {
		return err
	}
	if rerr := c.Simple(ctx, "ROLLBACK"); rerr != nil {
		return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
	}
	return err
}

// Close ends the session (COM_QUIT) and closes the socket. ctx names the
// lane the connection waited on, if any.
func (c *Conn) Close(ctx context.Context) error {
	c.sock.WriteNow([]byte{1, 0, 0, 0, comQuit})
	c.sock.Close(lane.From(ctx))
	return nil
}

// send frames c.w (its first four bytes are the header's room) as one
// packet, the command's first, and writes it.
func (c *Conn) send(l *lane.Lane) error {
	n := len(c.w) - 4
	if n >= 0xffffff {
		return fmt.Errorf("mywire: a command of %d bytes needs several packets, which this client does not send", n)
	}
	c.w[0], c.w[1], c.w[2], c.w[3] = byte(n), byte(n>>8), byte(n>>16), 0
	if err := c.sock.Write(l, c.w); err != nil {
		return c.fail(l, err)
	}
	return nil
}

// packet returns the next packet's payload, valid until the next call.
func (c *Conn) packet(l *lane.Lane) ([]byte, error) {
	for {
		b, need := c.sock.Buffered(), 4
		if len(b) >= 4 {
			n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
			if n == 0xffffff {
				return nil, errors.New("mariadb sent a packet of 16 MiB or more, which this client does not read")
			}
			if need = 4 + n; len(b) >= need {
				c.sock.Consume(need)
				if n == 0 {
					return nil, errors.New("mariadb sent an empty packet")
				}
				return b[4:need], nil
			}
		}
		if err := c.sock.Fill(l, need); err != nil {
			return nil, err
		}
	}
}

// columns reads n column definitions (and the EOF after them, unless the
// handshake deprecated it) into c.cols.
func (c *Conn) columns(l *lane.Lane, n int) ([]column, error) {
	c.cols = c.cols[:0]
	for range n {
		p, err := c.packet(l)
		if err != nil {
			return nil, err
		}
		col, err := parseColumn(p)
		if err != nil {
			return nil, err
		}
		c.cols = append(c.cols, col)
	}
	if !c.deprecateEOF {
		if _, err := c.packet(l); err != nil {
			return nil, err
		}
	}
	return c.cols, nil
}

// result reads one command's reply. st is the executed statement (nil for
// a COM_QUERY, whose rows are text and only counted); keep asks for the
// first row.
func (c *Conn) result(l *lane.Lane, st *stmt, keep bool) (sqlwire.Result, error) {
	var res sqlwire.Result
	for {
		p, err := c.packet(l)
		if err != nil {
			return res, c.fail(l, err)
		}
		switch p[0] {
		case hdrOK:
			rows, status, err := parseOK(p)
			if err != nil {
				return res, c.fail(l, err)
			}
			res.Rows, c.status = int64(rows), status
			if status&statusMoreResults != 0 {
				continue
			}
			return res, nil
		case hdrErr:
			return res, serverError(p)
		case 0xfb:
			return res, c.fail(l, errors.New("mariadb asked for a LOCAL INFILE, which a lane does not send"))
		}
		more, err := c.resultSet(l, p, st, keep, &res)
		if err != nil {
			return res, err
		}
		if !more {
			return res, nil
		}
	}
}

// resultSet reads a result set whose first packet (the column count) is
// p, counting its rows into res and keeping the first when keep; it
// reports whether another result follows.
func (c *Conn) resultSet(l *lane.Lane, p []byte, st *stmt, keep bool, res *sqlwire.Result) (bool, error) {
	n, size := lenenc(p)
	if size == 0 || n == 0 || n > math.MaxUint16 {
		return false, c.fail(l, errors.New("mariadb sent a malformed result set header"))
	}
	follows := !c.cacheMeta || (size < len(p) && p[size] == 1)
	cols := c.cols
	switch {
	case follows:
		var err error
		if cols, err = c.columns(l, int(n)); err != nil {
			return false, c.fail(l, err)
		}
		if st != nil {
			st.cols = append(st.cols[:0], cols...)
		}
	case st != nil:
		cols = st.cols
	default:
		return false, c.fail(l, errors.New("mariadb left out a query's column definitions"))
	}
	if len(cols) != int(n) {
		return false, c.fail(l, errors.New("mariadb sent rows of another shape than prepared"))
	}
	res.Rows = 0
	for {
		p, err := c.packet(l)
		if err != nil {
			return false, c.fail(l, err)
		}
		switch {
		case p[0] == hdrErr:
			return false, serverError(p)
		case p[0] == hdrEOF && len(p) < 0xffffff && (c.deprecateEOF || len(p) < 9):
			var status uint16
			if c.deprecateEOF {
				if _, status, err = parseOK(p); err != nil {
					return false, c.fail(l, err)
				}
			} else if len(p) >= 5 {
				status = binary.LittleEndian.Uint16(p[3:])
			}
			c.status = status
			return status&statusMoreResults != 0, nil
		}
		res.Rows++
		if keep && res.Rows == 1 && st != nil {
			if err := c.copyRow(p, cols); err != nil {
				return false, c.fail(l, err)
			}
			res.Row = c.row
		}
	}
}

// copyRow keeps a binary row's values past the next read, integers and
// floats as decimal text, others as sent; nil for NULL.
func (c *Conn) copyRow(p []byte, cols []column) error {
	nulls := (len(cols) + 7 + 2) / 8
	if len(p) < 1+nulls || p[0] != 0 {
		return errors.New("mariadb sent a malformed row")
	}
	bitmap, v := p[1:1+nulls], p[1+nulls:]
	c.rowBuf = c.rowBuf[:0]
	type span struct{ from, to int }
	spans := make([]span, 0, 8)
	for i, col := range cols {
		if bitmap[(i+2)/8]&(1<<((i+2)%8)) != 0 {
			spans = append(spans, span{-1, -1})
			continue
		}
		size, skip := valueSize(col.typ, v)
		if size < 0 || skip+size > len(v) {
			return errors.New("mariadb sent a short row")
		}
		from := len(c.rowBuf)
		c.rowBuf = appendText(c.rowBuf, col, v[skip:skip+size])
		spans = append(spans, span{from, len(c.rowBuf)})
		v = v[skip+size:]
	}
	c.row = c.row[:0]
	for _, s := range spans {
		if s.from < 0 {
			c.row = append(c.row, nil)
			continue
		}
		c.row = append(c.row, c.rowBuf[s.from:s.to:s.to])
	}
	return nil
}

// valueSize returns a binary value's length and the bytes before it (a
// length prefix), or -1 when v is too short to say.
func valueSize(typ byte, v []byte) (size, skip int) {
	switch typ {
	case typeTiny:
		return 1, 0
	case typeShort, typeYear:
		return 2, 0
	case typeLong, typeInt24, typeFloat:
		return 4, 0
	case typeLongLong, typeDouble:
		return 8, 0
	case 0x07, 0x0a, 0x0b, 0x0c: // TIMESTAMP, DATE, TIME, DATETIME: a length byte
		if len(v) < 1 {
			return -1, 0
		}
		return int(v[0]), 1
	}
	n, skip := lenenc(v)
	if skip == 0 || n > uint64(len(v)) {
		return -1, 0
	}
	return int(n), skip
}

// appendText appends a binary value as text: integers and floats in
// decimal, anything else as sent.
func appendText(dst []byte, col column, v []byte) []byte {
	var u uint64
	switch col.typ {
	case typeTiny:
		if !col.unsigned {
			return strconv.AppendInt(dst, int64(int8(v[0])), 10)
		}
		u = uint64(v[0])
	case typeShort, typeYear:
		if !col.unsigned {
			return strconv.AppendInt(dst, int64(int16(binary.LittleEndian.Uint16(v))), 10)
		}
		u = uint64(binary.LittleEndian.Uint16(v))
	case typeLong, typeInt24:
		if !col.unsigned {
			return strconv.AppendInt(dst, int64(int32(binary.LittleEndian.Uint32(v))), 10)
		}
		u = uint64(binary.LittleEndian.Uint32(v))
	case typeLongLong:
		if !col.unsigned {
			return strconv.AppendInt(dst, int64(binary.LittleEndian.Uint64(v)), 10)
		}
		u = binary.LittleEndian.Uint64(v)
	case typeFloat:
		return strconv.AppendFloat(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(v))), 'g', -1, 32)
	case typeDouble:
		return strconv.AppendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(v)), 'g', -1, 64)
	default:
		return append(dst, v...)
	}
	return strconv.AppendUint(dst, u, 10)
}

// parseColumn reads a column definition's type and flags after its six
// names and the fixed fields' length.
func parseColumn(p []byte) (column, error) {
	for range 6 {
		n, skip := lenenc(p)
		if skip == 0 || uint64(len(p)-skip) < n {
			return column{}, errors.New("mariadb sent a malformed column definition")
		}
		p = p[skip+int(n):]
	}
	_, skip := lenenc(p)
	if skip == 0 || len(p) < skip+9 {
		return column{}, errors.New("mariadb sent a malformed column definition")
	}
	p = p[skip:] // charset(2) length(4) type(1) flags(2)
	return column{typ: p[6], unsigned: binary.LittleEndian.Uint16(p[7:])&flagUnsigned != 0}, nil
}

// parseOK reads an OK packet's affected rows and server status.
func parseOK(p []byte) (uint64, uint16, error) {
	rows, n := lenenc(p[1:])
	_, m := lenenc(p[1+n:])
	if n == 0 || m == 0 || len(p) < 1+n+m+2 {
		return 0, 0, errors.New("mariadb sent a malformed OK packet")
	}
	return rows, binary.LittleEndian.Uint16(p[1+n+m:]), nil
}

// serverError reads an ERR packet as go-sql-driver reports it, so callers
// and the engine's explanations read it the same on every path.
func serverError(p []byte) error {
	if len(p) < 3 {
		return errors.New("mariadb sent a malformed error packet")
	}
	e := &mysql.MySQLError{Number: binary.LittleEndian.Uint16(p[1:])}
	msg := p[3:]
	if len(msg) >= 6 && msg[0] == '#' {
		copy(e.SQLState[:], msg[1:6])
		msg = msg[6:]
	}
	e.Message = string(msg)
	return e
}

// lenenc reads a length-encoded integer; size 0 means p is too short.
func lenenc(p []byte) (v uint64, size int) {
	if len(p) == 0 {
		return 0, 0
	}
	switch p[0] {
	case 0xfc:
		if len(p) >= 3 {
			return uint64(binary.LittleEndian.Uint16(p[1:])), 3
		}
	case 0xfd:
		if len(p) >= 4 {
			return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4
		}
	case 0xfe:
		if len(p) >= 9 {
			return binary.LittleEndian.Uint64(p[1:]), 9
		}
	case 0xfb, 0xff: // NULL in a text row; not a length
		return 0, 1
	default:
		return uint64(p[0]), 1
	}
	return 0, 0
}

// appendLenenc appends v length-encoded.
func appendLenenc(b []byte, v uint64) []byte {
	switch {
	case v < 0xfb:
		return append(b, byte(v))
	case v <= 0xffff:
		return append(b, 0xfc, byte(v), byte(v>>8))
	case v <= 0xffffff:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), v)
}

// fail breaks the connection: what the server sends next cannot be matched
// to a request any more.
func (c *Conn) fail(l *lane.Lane, err error) error {
	if c.broken == nil {
		c.broken = fmt.Errorf("mariadb connection closed after: %w", err)
		c.sock.Close(l)
	}
	return err
}
