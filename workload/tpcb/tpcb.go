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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
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
	params := []workload.Param{
		{Name: pScale, Default: "1", Doc: "pgbench scale: 1 branch, 10 tellers, 100000 accounts each"},
		{Name: pSeed, Default: "", Doc: "random seed, empty = random; set for reproducible runs"},
	}
	return workload.Spec{
		Name:   "tpcb",
		Doc:    "TPC-B-like (pgbench's default script): per transaction, update an account, select its balance, update its teller and branch, insert a history row",
		Params: params,
		New: func(overrides map[string]string) (workload.Workload, error) {
			return newWorkload(params, overrides)
		},
	}
}

// Workload is one configured tpcb workload, shared by all clients.
type Workload struct {
	params map[string]string
	scale  int64
	seed   int64
	seeded bool
}

var _ workload.Workload = (*Workload)(nil)

func newWorkload(params []workload.Param, overrides map[string]string) (*Workload, error) {
	eff := make(map[string]string, len(params))
	for _, p := range params {
		eff[p.Name] = p.Default
	}
	for k, v := range overrides {
		eff[k] = v
	}
	w := &Workload{params: eff}
	s, err := strconv.ParseInt(strings.TrimSpace(eff[pScale]), 10, 64)
	if err != nil || s < 1 {
		return nil, fmt.Errorf("%s %q: must be a positive integer (pgbench's -s: 1 branch, 10 tellers, 100000 accounts each)", pScale, eff[pScale])
	}
	if s > maxScale {
		return nil, fmt.Errorf("%s %q: must be at most %d (teller ids are 32-bit, as in pgbench)", pScale, eff[pScale], maxScale)
	}
	w.scale = s
	if v := strings.TrimSpace(eff[pSeed]); v != "" {
		if w.seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("%s %q: must be an integer or empty", pSeed, eff[pSeed])
		}
		w.seeded = true
	}
	return w, nil
}

// Ops names the single operation: one whole transaction.
func (w *Workload) Ops() []string { return []string{OpTPCB} }

// Params returns every parameter with its effective value.
func (w *Workload) Params() map[string]string {
	out := make(map[string]string, len(w.params))
	for k, v := range w.params {
		out[k] = v
	}
	return out
}

// Scale is the configured pgbench scale.
func (w *Workload) Scale() int64 { return w.scale }

func (w *Workload) branches() int64 { return branchesPerScale * w.scale }
func (w *Workload) tellers() int64  { return tellersPerScale * w.scale }
func (w *Workload) accounts() int64 { return accountsPerScale * w.scale }

// streamClient is the PCG stream of client random numbers; with a seed,
// client id picks the state, so clients never replay each other's choices.
const streamClient = 0x9E3779B97F4A7C15

func (w *Workload) newRand(stream, id uint64) *rand.Rand {
	if w.seeded {
		return rand.New(rand.NewPCG(uint64(w.seed)+id, stream))
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
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

// analyze returns the post-load statement: pgbench's VACUUM ANALYZE on
// PostgreSQL, so the first measured transactions neither set hint bits on
// every freshly loaded row nor plan without statistics; ANALYZE TABLE on
// MariaDB for the statistics.
func analyze(d engine.Dialect) string {
	tables := strings.Join([]string{tBranches, tTellers, tAccounts, tHistory}, ", ")
	if d == engine.Postgres {
		return "VACUUM ANALYZE " + tables
	}
	return "ANALYZE TABLE " + tables
}

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

// appendInsert appends one multi-row INSERT of rows first..first+n-1. The
// values are integers the workload made, written as literals so a batch is
// one round trip on every driver (no per-batch prepare) and the text is the
// same in both dialects.
func appendInsert(b []byte, t loadTable, first, n int64) []byte {
	b = append(b, "INSERT INTO "...)
	b = append(b, t.name...)
	b = append(b, " ("...)
	b = append(b, t.columns...)
	b = append(b, ") VALUES "...)
	for i := first; i < first+n; i++ {
		if i > first {
			b = append(b, ", "...)
		}
		b = t.row(b, i)
	}
	return b
}

// Load drops and creates pgbench's tables, fills them with loaders parallel
// sessions, one transaction per chunk of chunkRows rows, then analyzes them.
// Records counts accounts, the table that sizes the data set.
func (w *Workload) Load(ctx context.Context, engineName string, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	loaders = max(loaders, 1)
	var d engine.Dialect
	err := withConn(ctx, engineName, db, func(conn *sql.Conn, dialect engine.Dialect) error {
		d = dialect
		for _, q := range append(dropTables(), createTables(w.scale)...) {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("tpcb load on %s: create tables: %w", engineName, err)
	}

	plan := newChunker(w.loadTables())
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		accounts atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for i := range loaders {
		wg.Go(func() {
			err := withConn(lctx, engineName, db, func(conn *sql.Conn, _ engine.Dialect) error {
				var buf []byte
				for {
					if err := lctx.Err(); err != nil {
						return err
					}
					t, first, n, ok := plan.chunk(next.Add(1) - 1)
					if !ok {
						return nil
					}
					var err error
					if buf, err = loadChunk(lctx, conn, t, first, n, buf); err != nil {
						return err
					}
					if t.name == tAccounts {
						accounts.Add(n)
					}
				}
			})
			if err != nil {
				errOnce.Do(func() {
					firstErr = fmt.Errorf("tpcb load on %s, loader %d: %w", engineName, i, err)
					cancel()
				})
			}
		})
	}
	wg.Wait()
	stats := workload.LoadStats{Records: accounts.Load()}
	if firstErr != nil {
		stats.Duration = time.Since(start)
		return stats, firstErr
	}
	err = withConn(ctx, engineName, db, func(conn *sql.Conn, _ engine.Dialect) error {
		if d == engine.Postgres {
			_, err := conn.ExecContext(ctx, analyze(d))
			return err
		}
		// ANALYZE TABLE answers with a result set: read it to the end.
		rows, err := conn.QueryContext(ctx, analyze(d))
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return err
		}
		return rows.Close()
	})
	stats.Duration = time.Since(start)
	if err != nil {
		return stats, fmt.Errorf("tpcb load on %s: %s: %w", engineName, analyze(d), err)
	}
	return stats, nil
}

// loadChunk inserts rows first..first+n-1 of t in one transaction.
func loadChunk(ctx context.Context, conn *sql.Conn, t loadTable, first, n int64, buf []byte) ([]byte, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return buf, fmt.Errorf("begin: %w", err)
	}
	for f := first; f < first+n; f += stmtRows {
		buf = appendInsert(buf[:0], t, f, min(stmtRows, first+n-f))
		if _, err := tx.ExecContext(ctx, string(buf)); err != nil {
			tx.Rollback()
			return buf, fmt.Errorf("insert %s rows %d..%d: %w", t.name, f, min(f+stmtRows, first+n)-1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return buf, fmt.Errorf("commit %s rows %d..%d: %w", t.name, first, first+n-1, err)
	}
	return buf, nil
}

// withConn runs f on the connection of a new session and closes it.
func withConn(ctx context.Context, engineName string, db engine.DB, f func(*sql.Conn, engine.Dialect) error) (err error) {
	s, err := db.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("new session: %w", err)
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close session: %w", cerr)
		}
	}()
	q, err := engine.NeedSQL(engineName, s)
	if err != nil {
		return err
	}
	return f(q.Conn(), q.Dialect())
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
func (w *Workload) NewClient(engineName string, id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(engineName, s)
	if err != nil {
		return nil, fmt.Errorf("tpcb client %d: %w", id, err)
	}
	return &Client{w: w, conn: q.Conn(), d: q.Dialect(), rng: w.newRand(streamClient, uint64(id))}, nil
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
}

// prepare prepares the five statements once; it is lazy so it runs under
// the caller's context and after the load created the tables.
func (c *Client) prepare(ctx context.Context) error {
	if c.ready {
		return nil
	}
	for i, q := range statements(c.d) {
		st, err := c.conn.PrepareContext(ctx, q)
		if err != nil {
			c.Close()
			return fmt.Errorf("tpcb: prepare %s: %w", stmtNames[i], err)
		}
		c.stmts[i] = st
	}
	c.ready = true
	return nil
}

// Close releases the prepared statements; the connection is the session's.
func (c *Client) Close() error {
	for i, st := range c.stmts {
		if st != nil {
			st.Close()
			c.stmts[i] = nil
		}
	}
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
	return 0, c.txn(ctx, aid, tid, bid, delta)
}

// txn runs the transaction. BEGIN and COMMIT are plain statements on the
// connection rather than a *sql.Tx because database/sql re-prepares a
// Conn-bound statement for every Tx it is used in (Tx.StmtContext), which
// would add five prepares to every transaction; pgbench too sends BEGIN and
// END as statements.
func (c *Client) txn(ctx context.Context, aid, tid, bid, delta int64) error {
	if err := c.prepare(ctx); err != nil {
		return err
	}
	if _, err := c.conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return fmt.Errorf("tpcb: begin: %w", err)
	}
	step, err := c.body(ctx, aid, tid, bid, delta)
	if err == nil {
		if _, err = c.conn.ExecContext(ctx, "COMMIT"); err == nil {
			return nil
		}
		step = "commit"
	}
	return rollback(ctx, c.conn, fmt.Sprintf("tpcb (aid %d, tid %d, bid %d, delta %d): %s", aid, tid, bid, delta, step), err)
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

// rollback ends a failed transaction and returns its error, labelled when it
// is a serialization failure or deadlock: those are the engine's verdict
// under contention, counted as errors by the driver and never retried here,
// so a retry loop cannot hide them from the results. ROLLBACK runs even
// when ctx is done (the run's end must not leave a transaction open on a
// connection that stays in use), with a bound of its own.
func rollback(ctx context.Context, conn *sql.Conn, what string, err error) error {
	if kind := conflict(err); kind != "" {
		err = fmt.Errorf("%s: %s, rolled back: %w", what, kind, err)
	} else {
		err = fmt.Errorf("%s: %w", what, err)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, rerr := conn.ExecContext(rctx, "ROLLBACK"); rerr != nil {
		return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
	}
	return err
}

// conflict names the concurrency failure err is, or returns "": SQLSTATE
// 40001 (serialization failure) and 40P01 (deadlock) from drivers that
// expose SQLState() (pgx, lib/pq) or print it, and MySQL/MariaDB errors 1213
// (deadlock) and 1205 (lock wait timeout) from go-sql-driver/mysql's "Error
// NNNN" text, so no driver is imported. (bank has the same classifier; it
// belongs in engine once a package outside workload needs it.)
func conflict(err error) string {
	var st interface{ SQLState() string }
	state := ""
	if errors.As(err, &st) {
		state = st.SQLState()
	}
	msg := err.Error()
	switch {
	case state == "40001" || strings.Contains(msg, "SQLSTATE 40001"):
		return "serialization failure (SQLSTATE 40001)"
	case state == "40P01" || strings.Contains(msg, "SQLSTATE 40P01"):
		return "deadlock (SQLSTATE 40P01)"
	case strings.Contains(msg, "Error 1213 ") || strings.Contains(msg, "Error 1213:"):
		return "deadlock (MySQL error 1213)"
	case strings.Contains(msg, "Error 1205 ") || strings.Contains(msg, "Error 1205:"):
		return "lock wait timeout (MySQL error 1205)"
	}
	return ""
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
func (w *Workload) Balances(ctx context.Context, engineName string, db engine.DB) (Balances, error) {
	var b Balances
	err := withConn(ctx, engineName, db, func(conn *sql.Conn, _ engine.Dialect) error {
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
		return b, fmt.Errorf("tpcb balances on %s: %w", engineName, err)
	}
	return b, nil
}
