// Package sqlwire is what an SQL workload sees of a connection on a lane
// (driver/lane): prepared statements called by name with typed arguments,
// simple queries for BEGIN and COMMIT, and the first row of a result. The
// wire protocols behind it (engine/postgres/pgwire, engine/mariadb/mywire)
// register themselves for their dialect, so tpcb, oltp and the records
// model run on lanes with one code path, on every SQL server that has a
// protocol here.
package sqlwire

import (
	"context"
	"database/sql"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tierbench/tierbench/engine"
)

// Statement is one statement to prepare under a name.
type Statement struct{ Name, SQL string }

// Arg is one argument of a call: an integer, bytes (text or binary) or
// NULL. Each protocol sends it as its reference client does: PostgreSQL's
// as text (pgbench -M prepared), MySQL's in the binary protocol, integers
// as integers (sysbench's binds).
type Arg struct {
	kind argKind
	i    int64
	b    []byte
}

type argKind uint8

const (
	argBytes argKind = iota
	argInt
	argNull
)

// Int is an integer argument.
func Int(v int64) Arg { return Arg{kind: argInt, i: v} }

// Bytes is a text or binary argument; b is read when the call is sent.
func Bytes(b []byte) Arg { return Arg{kind: argBytes, b: b} }

// Null is SQL NULL.
func Null() Arg { return Arg{kind: argNull} }

// IsNull reports whether a is NULL.
func (a Arg) IsNull() bool { return a.kind == argNull }

// Integer returns a's value and true when a is an integer.
func (a Arg) Integer() (int64, bool) { return a.i, a.kind == argInt }

// Raw returns a's bytes (nil for an integer or NULL).
func (a Arg) Raw() []byte { return a.b }

// AppendText appends a's text form (an integer in decimal) to dst.
func (a Arg) AppendText(dst []byte) []byte {
	if a.kind == argInt {
		return strconv.AppendInt(dst, a.i, 10)
	}
	return append(dst, a.b...)
}

// Call is one execution of a prepared statement.
type Call struct {
	Name string
	Args []Arg
}

// Result is what the last call of a round trip returned: its first row's
// columns as text (valid until the next round trip; nil for SQL NULL) and
// the rows it returned or changed.
type Result struct {
	Row  [][]byte
	Rows int64
}

// Conn is a connection taken over for a lane. Used by one client.
type Conn interface {
	// Exec runs calls and returns the last one's Result. On PostgreSQL they
	// share one round trip and the server skips the calls after a failed
	// one; on MySQL each is a round trip of its own and a failure stops
	// the rest. An I/O error breaks the connection for good.
	Exec(ctx context.Context, calls ...Call) (Result, error)
	// Simple runs one statement without preparing it (BEGIN, COMMIT).
	Simple(ctx context.Context, query string) error
	// Rollback ends a failed transaction, when the server says one is
	// open, and returns err (joined with the ROLLBACK's own error).
	Rollback(ctx context.Context, err error) error
	// Close ends the session and closes the socket.
	Close(ctx context.Context) error
}

// Protocol takes connections of one dialect over.
type Protocol interface {
	// Plain reports whether conn can be taken over: the protocol's own
	// driver, over a socket whose bytes are the protocol's (no TLS, no
	// compression).
	Plain(conn *sql.Conn) bool
	// Take prepares stmts and takes conn's socket; conn is dead after it.
	// It runs on the caller's lane (ctx).
	Take(ctx context.Context, conn *sql.Conn, stmts []Statement) (Conn, error)
}

var (
	mu        sync.RWMutex
	protocols = map[engine.Dialect]Protocol{}
)

// Register makes p the protocol of dialect d (an engine's package does it
// at init).
func Register(d engine.Dialect, p Protocol) {
	mu.Lock()
	defer mu.Unlock()
	protocols[d] = p
}

func protocol(d engine.Dialect) Protocol {
	mu.RLock()
	defer mu.RUnlock()
	return protocols[d]
}

// ErrNoProtocol says a dialect has no protocol here.
type ErrNoProtocol struct{ Dialect engine.Dialect }

func (e ErrNoProtocol) Error() string {
	return "no lane protocol for " + string(e.Dialect) + " connections"
}

// Take prepares stmts on conn and takes it over with d's protocol.
func Take(ctx context.Context, conn *sql.Conn, d engine.Dialect, stmts []Statement) (Conn, error) {
	p := protocol(d)
	if p == nil {
		return nil, ErrNoProtocol{d}
	}
	return p.Take(ctx, conn, stmts)
}

// Eligible remembers whether a client's connection can run on a lane: its
// dialect has a protocol and the protocol says the connection is plain.
// Asking goes through database/sql's Raw, so the answer is kept.
type Eligible struct{ checked, ok bool }

// OnLane answers for conn, a connection in dialect d.
func (e *Eligible) OnLane(conn *sql.Conn, d engine.Dialect) bool {
	if !e.checked {
		e.checked = true
		p := protocol(d)
		e.ok = p != nil && p.Plain(conn)
	}
	return e.ok
}

// clients numbers Prefix's callers.
var clients atomic.Int64

// Prefix returns a statement-name prefix no other client of the process
// uses: tierbench_<workload>_<n>_ (a pooled connection may hold an earlier
// client's statements).
func Prefix(workload string) string {
	return "tierbench_" + workload + "_" + strconv.FormatInt(clients.Add(1), 10) + "_"
}
