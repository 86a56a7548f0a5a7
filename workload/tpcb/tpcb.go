// Package tpcb implements pgbench's default "TPC-B (sort of)" script: the
// same four tables, the same initial data per unit of scale, and the same
// five-statement transaction, so tierbench numbers on PostgreSQL can be set
// beside pgbench's and the same load runs unchanged on MariaDB.
//
// It is not the TPC-B benchmark (no terminals, no think time, no 15% remote
// branches), only what pgbench calls tpcb-like.
package tpcb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/sqlwire"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// Parameter names; scale is pgbench's -s.
const (
	pScale = "scale"
	pSeed  = "seed"
)

// Rows per unit of scale, as pgbench's nbranches, ntellers and naccounts.
const (
	branchesPerScale = 1
	tellersPerScale  = 10
	accountsPerScale = 100000
)

// bigintScale is pgbench's SCALE_32BIT_THRESHOLD: from this scale on, aid no
// longer fits in a 32-bit int and pgbench declares it bigint.
const bigintScale = 20000

// maxScale keeps tid (10 per scale) within a 32-bit int, which pgbench never
// widens.
const maxScale = math.MaxInt32 / tellersPerScale

// maxDelta bounds the per-transaction change: pgbench's random(-5000, 5000).
const maxDelta = 5000

// Load batching: each INSERT carries stmtRows rows and each transaction
// chunkRows, so a load commits (and fsyncs) once per chunk rather than per
// row, while a statement stays far below any packet or parameter limit.
const (
	stmtRows  = 1000
	chunkRows = 10 * stmtRows
)

// OpTPCB is the one operation: a whole transaction.
const OpTPCB = "tpcb"

// Table names, pgbench's.
const (
	tBranches = "pgbench_branches"
	tTellers  = "pgbench_tellers"
	tAccounts = "pgbench_accounts"
	tHistory  = "pgbench_history"
)

// Spec returns the tpcb workload's spec.
func Spec() workload.Spec {
	params := []setting.Setting{
		// At most maxScale: teller ids are 32-bit, as in pgbench.
		{Name: pScale, Kind: setting.Int, Default: "1", Min: "1", Max: strconv.Itoa(maxScale), Doc: "pgbench scale (-s): 1 branch, 10 tellers, 100000 accounts each"},
		{Name: pSeed, Kind: setting.Int, Doc: "random seed, unset: random; set for reproducible runs"},
	}
	return workload.Spec{
		Name:   "tpcb",
		Model:  engine.ModelSQL,
		Lanes:  true, // Client.OnLane
		Doc:    "TPC-B-like (pgbench's default script): per transaction, update an account, select its balance, update its teller and branch, insert a history row",
		Params: params,
		New: func(p setting.Values) (workload.Workload, error) {
			return newWorkload(p), nil
		},
	}
}

// Workload is one configured tpcb workload, shared by all clients.
type Workload struct {
	scale  int64
	seed   int64
	seeded bool
}

var _ workload.Workload = (*Workload)(nil)

func newWorkload(p setting.Values) *Workload {
	w := &Workload{scale: p.Int64(pScale)}
	w.seed, w.seeded = workload.Seed(p, pSeed)
	return w
}

// Ops names the single operation: one whole transaction.
func (w *Workload) Ops() []string { return []string{OpTPCB} }

// Scale is the configured pgbench scale.
func (w *Workload) Scale() int64 { return w.scale }

func (w *Workload) branches() int64 { return branchesPerScale * w.scale }
func (w *Workload) tellers() int64  { return tellersPerScale * w.scale }
func (w *Workload) accounts() int64 { return accountsPerScale * w.scale }

// streamClient is the PCG stream of client random numbers; with a seed,
// client id picks the state, so clients never replay each other's choices.
const streamClient = 0x9E3779B97F4A7C15

func (w *Workload) newRand(stream, id uint64) *rand.Rand {
	return workload.NewRand(w.seed, w.seeded, stream, id)
}

// createTables returns the DDL, pgbench's column lists and types, with the
// primary keys declared inline: InnoDB clusters rows on the primary key, so
// adding it after the load (as pgbench does) would rebuild the table there.
// The SQL is the same for both dialects.
func createTables(scale int64) []string {
	aid := "INT"
	if scale >= bigintScale {
		aid = "BIGINT"
	}
	return []string{
		"CREATE TABLE " + tHistory + " (tid INT, bid INT, aid " + aid + ", delta INT, mtime TIMESTAMP, filler CHAR(22))",
		"CREATE TABLE " + tTellers + " (tid INT NOT NULL PRIMARY KEY, bid INT, tbalance INT, filler CHAR(84))",
		"CREATE TABLE " + tAccounts + " (aid " + aid + " NOT NULL PRIMARY KEY, bid INT, abalance INT, filler CHAR(84))",
		"CREATE TABLE " + tBranches + " (bid INT NOT NULL PRIMARY KEY, bbalance INT, filler CHAR(88))",
	}
}

// dropTables drops what a previous load left, in pgbench's order.
func dropTables() []string {
	out := make([]string, 0, 4)
	for _, t := range []string{tBranches, tTellers, tAccounts, tHistory} {
		out = append(out, "DROP TABLE IF EXISTS "+t)
	}
	return out
}

// analyzed are the tables Load analyzes (sqlwork.Analyze: pgbench's VACUUM
// ANALYZE on PostgreSQL, ANALYZE TABLE on MariaDB).
var analyzed = []string{tBranches, tTellers, tAccounts, tHistory}

// analyze returns the post-load statement.
func analyze(d engine.Dialect) string { return sqlwork.AnalyzeStatement(d, analyzed...) }

// loadTable is one table the load fills with rows 1..n.
type loadTable struct {
	name    string
	columns string
	n       int64
	// row appends row i's values, parenthesised, to b.
	row func(b []byte, i int64) []byte
}

// loadTables returns pgbench's initial data: zero balances everywhere;
// tellers and accounts belong to branches in blocks (teller i to branch
// (i-1)/10+1); filler NULL for branches and tellers and the empty string
// for accounts, as pgbench's INSERTs and COPY leave them, so rows are
// pgbench's size.
func (w *Workload) loadTables() []loadTable {
	return []loadTable{
		{tBranches, "bid, bbalance", w.branches(), func(b []byte, i int64) []byte {
			b = append(b, '(')
			b = strconv.AppendInt(b, i, 10)
			return append(b, ", 0)"...)
		}},
		{tTellers, "tid, bid, tbalance", w.tellers(), func(b []byte, i int64) []byte {
			b = append(b, '(')
			b = strconv.AppendInt(b, i, 10)
			b = append(b, ", "...)
			b = strconv.AppendInt(b, (i-1)/tellersPerScale+1, 10)
			return append(b, ", 0)"...)
		}},
		{tAccounts, "aid, bid, abalance, filler", w.accounts(), func(b []byte, i int64) []byte {
			b = append(b, '(')
			b = strconv.AppendInt(b, i, 10)
			b = append(b, ", "...)
			b = strconv.AppendInt(b, (i-1)/accountsPerScale+1, 10)
			return append(b, ", 0, '')"...)
		}},
	}
}

// chunker numbers the load's chunks across all tables, so loaders share one
// counter and the small tables load alongside the accounts.
type chunker struct {
	tables []loadTable
	starts []int64 // first chunk number of each table
	chunks int64
}

func newChunker(tables []loadTable) chunker {
	c := chunker{tables: tables}
	for _, t := range tables {
		c.starts = append(c.starts, c.chunks)
		c.chunks += (t.n + chunkRows - 1) / chunkRows
	}
	return c
}

// chunk returns chunk number i: its table and its rows first..first+n-1;
// ok is false past the last chunk.
func (c chunker) chunk(i int64) (t loadTable, first, n int64, ok bool) {
	if i < 0 || i >= c.chunks {
		return loadTable{}, 0, 0, false
	}
	ti := len(c.starts) - 1
	for c.starts[ti] > i {
		ti--
	}
	t = c.tables[ti]
	first = 1 + (i-c.starts[ti])*chunkRows
	return t, first, min(chunkRows, t.n-first+1), true
}

// appendInsert appends one multi-row INSERT of rows first..first+n-1 of t
// (sqlwork.AppendInsert: literals, the same text in both dialects).
func appendInsert(b []byte, t loadTable, first, n int64) []byte {
	return sqlwork.AppendInsert(b, t.name, t.columns, first, n, t.row)
}

// Load drops and creates pgbench's tables, fills them with loaders parallel
// sessions, one transaction per chunk of chunkRows rows, then analyzes them.
// Records counts accounts, the table that sizes the data set.
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	var d engine.Dialect
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, dialect engine.Dialect) error {
		d = dialect
		return sqlwork.ExecAll(ctx, conn, append(dropTables(), createTables(w.scale)...)...)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("tpcb load: create tables: %w", err)
	}

	plan := newChunker(w.loadTables())
	var (
		next     atomic.Int64
		accounts atomic.Int64
	)
	firstErr := sqlwork.LoadChunks(ctx, "tpcb", db, loaders, func(ctx context.Context, conn *sql.Conn, buf []byte) ([]byte, bool, error) {
		t, first, n, ok := plan.chunk(next.Add(1) - 1)
		if !ok {
			return buf, true, nil
		}
		buf, err := loadChunk(ctx, conn, t, first, n, buf)
		if err != nil {
			return buf, false, err
		}
		if t.name == tAccounts {
			accounts.Add(n)
		}
		return buf, false, nil
	})
	stats := workload.LoadStats{Records: accounts.Load()}
	if firstErr != nil {
		stats.Duration = time.Since(start)
		return stats, firstErr
	}
	err = engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		return sqlwork.Analyze(ctx, conn, d, analyzed...)
	})
	stats.Duration = time.Since(start)
	if err != nil {
		return stats, fmt.Errorf("tpcb load: %w", err)
	}
	return stats, nil
}

// loadChunk inserts rows first..first+n-1 of t in one transaction.
func loadChunk(ctx context.Context, conn *sql.Conn, t loadTable, first, n int64, buf []byte) ([]byte, error) {
	return sqlwork.InsertChunk(ctx, conn, buf, t.name+" rows", first, n, stmtRows, func(b []byte, first, n int64) []byte {
		return appendInsert(b, t, first, n)
	})
}

// Statement indexes in Client.stmts, in transaction order.
const (
	sUpdAccount = iota
	sSelAccount
	sUpdTeller
	sUpdBranch
	sInsHistory
	nStmts
)

var stmtNames = [nStmts]string{"update account", "select account", "update teller", "update branch", "insert history"}

// statements returns pgbench's tpcb-like statements in dialect d, in
// transaction order. Arguments are (delta, id) for the updates, (aid) for
// the select and (tid, bid, aid, delta) for the insert.
func statements(d engine.Dialect) [nStmts]string {
	p1, p2 := d.Placeholder(1), d.Placeholder(2)
	return [nStmts]string{
		"UPDATE " + tAccounts + " SET abalance = abalance + " + p1 + " WHERE aid = " + p2,
		"SELECT abalance FROM " + tAccounts + " WHERE aid = " + p1,
		"UPDATE " + tTellers + " SET tbalance = tbalance + " + p1 + " WHERE tid = " + p2,
		"UPDATE " + tBranches + " SET bbalance = bbalance + " + p1 + " WHERE bid = " + p2,
		"INSERT INTO " + tHistory + " (tid, bid, aid, delta, mtime) VALUES (" + d.Placeholders(4) + ", CURRENT_TIMESTAMP)",
	}
}

// NewClient returns client id bound to session s; its statements are
// prepared on the session's connection at the first Do.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
	if err != nil {
		return nil, fmt.Errorf("tpcb client %d: %w", id, err)
	}
	return &Client{w: w, conn: q.Conn(), d: q.Dialect(), rng: w.newRand(streamClient, uint64(id)), qs: statements(q.Dialect())}, nil
}

// Client runs tpcb transactions on its own connection. It is used by one
// goroutine.
type Client struct {
	w     *Workload
	conn  *sql.Conn
	d     engine.Dialect
	rng   *rand.Rand
	stmts [nStmts]*sql.Stmt
	ready bool
	qs    [nStmts]string // statements(d), prepared here or by wire
	// noPgx is set when a PostgreSQL connection turns out not to be pgx's.
	noPgx bool
	wire  wireSession // the PostgreSQL path's statements (pgx.go)
	// eligible is whether the client can run on a lane; taken is the
	// connection a lane runs the transactions on, taken from its driver at
	// the first one, and args their arguments (lane.go).
	eligible sqlwire.Eligible
	taken    sqlwire.Conn
	args     [nStmts][]sqlwire.Arg
}

// prepare prepares the five statements once; it is lazy so it runs under
// the caller's context and after the load created the tables.
func (c *Client) prepare(ctx context.Context) error {
	if c.ready {
		return nil
	}
	if i, err := sqlwork.PrepareAll(ctx, c.conn, c.stmts[:], c.qs[:]); err != nil {
		return fmt.Errorf("tpcb: prepare %s: %w", stmtNames[i], err)
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
	sqlwork.CloseAll(c.stmts[:])
	c.ready = false
	return nil
}

// Do runs one transaction with pgbench's random choices: aid, tid and bid
// uniform and independent (a teller need not belong to the branch, as in
// pgbench), delta uniform in [-5000, 5000].
func (c *Client) Do(ctx context.Context) (int, error) {
	w := c.w
	aid := 1 + c.rng.Int64N(w.accounts())
	tid := 1 + c.rng.Int64N(w.tellers())
	bid := 1 + c.rng.Int64N(w.branches())
	delta := c.rng.Int64N(2*maxDelta+1) - maxDelta
	return 0, c.run(ctx, aid, tid, bid, delta)
}

// run runs one transaction on the fastest path for the connection: the
// lane's own wire protocol on a lane, else pgx's wire protocol layer on
// PostgreSQL, database/sql elsewhere.
func (c *Client) run(ctx context.Context, aid, tid, bid, delta int64) error {
	if lane.From(ctx) != nil && c.OnLane() {
		return c.laneTxn(ctx, aid, tid, bid, delta)
	}
	if c.d == engine.Postgres && !c.noPgx {
		return c.pgxTxn(ctx, aid, tid, bid, delta)
	}
	return c.txn(ctx, aid, tid, bid, delta)
}

// txn runs the transaction as plain statements on the connection, as
// pgbench sends BEGIN and END (sqlwork.Txn: a *sql.Tx would re-prepare the
// five statements in every transaction). A failed one is rolled back and
// returned, labelled, never retried.
func (c *Client) txn(ctx context.Context, aid, tid, bid, delta int64) error {
	if err := c.prepare(ctx); err != nil {
		return err
	}
	return sqlwork.Txn(ctx, c.conn, "tpcb",
		func() (string, error) { return c.body(ctx, aid, tid, bid, delta) },
		func(step string) string {
			return fmt.Sprintf("tpcb (aid %d, tid %d, bid %d, delta %d): %s", aid, tid, bid, delta, step)
		})
}

// body runs the five statements and names the one that failed.
func (c *Client) body(ctx context.Context, aid, tid, bid, delta int64) (string, error) {
	if _, err := c.stmts[sUpdAccount].ExecContext(ctx, delta, aid); err != nil {
		return stmtNames[sUpdAccount], err
	}
	var abalance int64
	if err := c.stmts[sSelAccount].QueryRowContext(ctx, aid).Scan(&abalance); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			err = fmt.Errorf("account %d is missing: was the load phase run?", aid)
		}
		return stmtNames[sSelAccount], err
	}
	if _, err := c.stmts[sUpdTeller].ExecContext(ctx, delta, tid); err != nil {
		return stmtNames[sUpdTeller], err
	}
	if _, err := c.stmts[sUpdBranch].ExecContext(ctx, delta, bid); err != nil {
		return stmtNames[sUpdBranch], err
	}
	if _, err := c.stmts[sInsHistory].ExecContext(ctx, tid, bid, aid, delta); err != nil {
		return stmtNames[sInsHistory], err
	}
	return "", nil
}

// Balances are the four sums pgbench's consistency property compares.
type Balances struct {
	Accounts, Tellers, Branches, History int64
}

// Consistent reports whether every committed delta reached all four tables.
func (b Balances) Consistent() bool {
	return b.Accounts == b.Tellers && b.Tellers == b.Branches && b.Branches == b.History
}

// Balances reads sum(abalance), sum(tbalance), sum(bbalance) and
// sum(delta) of the history. Each committed transaction adds its delta to
// all four and a rolled back one to none, so they are equal on an engine
// that keeps transactions atomic and durable. It scans every account, so it
// is not run as a Verify after each run (that would cost minutes at large
// scale); tests and studies that want the check call it.
func (w *Workload) Balances(ctx context.Context, db engine.DB) (Balances, error) {
	var b Balances
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		for _, s := range []struct {
			dst *int64
			q   string
		}{
			{&b.Accounts, "SELECT COALESCE(SUM(abalance), 0) FROM " + tAccounts},
			{&b.Tellers, "SELECT COALESCE(SUM(tbalance), 0) FROM " + tTellers},
			{&b.Branches, "SELECT COALESCE(SUM(bbalance), 0) FROM " + tBranches},
			{&b.History, "SELECT COALESCE(SUM(delta), 0) FROM " + tHistory},
		} {
			// SUM is numeric on PostgreSQL and DECIMAL on MariaDB: read
			// it as text.
			var v string
			if err := conn.QueryRowContext(ctx, s.q).Scan(&v); err != nil {
				return fmt.Errorf("%s: %w", s.q, err)
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%s: %q is not an integer", s.q, v)
			}
			*s.dst = n
		}
		return nil
	})
	if err != nil {
		return b, fmt.Errorf("tpcb balances: %w", err)
	}
	return b, nil
}
