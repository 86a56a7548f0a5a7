// Package bank is a correctness workload with a price tag: clients move
// money between accounts, one transfer per transaction, and after the run
// the total must be what the load put in. A storage placement or durability
// mode that loses or half-applies transactions then fails the run instead of
// only looking fast.
package bank

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

// Parameter names.
const (
	pAccounts = "accounts"
	pInitial  = "initial_balance"
	pSeed     = "seed"
)

// OpTransfer is the one operation: a whole transfer transaction.
const OpTransfer = "transfer"

// Table is the accounts table.
const Table = "bank_accounts"

// maxAmount bounds a transfer: amounts are uniform in [1, maxAmount].
const maxAmount = 100

// Load batching: stmtRows rows per INSERT, chunkRows per transaction, so a
// load commits once per chunk and no statement nears a packet limit.
const (
	stmtRows  = 1000
	chunkRows = 10 * stmtRows
)

// Spec returns the bank workload's spec.
func Spec() workload.Spec {
	params := []workload.Param{
		{Name: pAccounts, Default: "10000", Doc: "accounts loaded; transfers pick two of them"},
		{Name: pInitial, Default: "1000", Doc: "balance of each account after the load"},
		{Name: pSeed, Default: "", Doc: "random seed, empty = random; set for reproducible runs"},
	}
	return workload.Spec{
		Name:   "bank",
		Doc:    "transfers between accounts in one transaction; the total balance is checked after the run and a run that breaks it fails",
		Params: params,
		New: func(overrides map[string]string) (workload.Workload, error) {
			return newWorkload(params, overrides)
		},
	}
}

// Workload is one configured bank workload, shared by all clients.
type Workload struct {
	params   map[string]string
	accounts int64
	initial  int64
	seed     int64
	seeded   bool
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Verifier = (*Workload)(nil)
)

func newWorkload(params []workload.Param, overrides map[string]string) (*Workload, error) {
	eff := make(map[string]string, len(params))
	for _, p := range params {
		eff[p.Name] = p.Default
	}
	for k, v := range overrides {
		eff[k] = v
	}
	w := &Workload{params: eff}
	var err error
	w.accounts, err = strconv.ParseInt(strings.TrimSpace(eff[pAccounts]), 10, 64)
	if err != nil || w.accounts < 2 {
		return nil, fmt.Errorf("%s %q: must be an integer >= 2 (a transfer needs two accounts)", pAccounts, eff[pAccounts])
	}
	if w.accounts > math.MaxInt32 {
		return nil, fmt.Errorf("%s %q: must be at most %d (account ids are 32-bit)", pAccounts, eff[pAccounts], math.MaxInt32)
	}
	w.initial, err = strconv.ParseInt(strings.TrimSpace(eff[pInitial]), 10, 64)
	if err != nil || w.initial < 0 {
		return nil, fmt.Errorf("%s %q: must be an integer >= 0", pInitial, eff[pInitial])
	}
	if w.initial > math.MaxInt64/w.accounts {
		return nil, fmt.Errorf("%s %q: %s x %s overflows a 64-bit total", pInitial, eff[pInitial], pAccounts, pInitial)
	}
	if v := strings.TrimSpace(eff[pSeed]); v != "" {
		if w.seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("%s %q: must be an integer or empty", pSeed, eff[pSeed])
		}
		w.seeded = true
	}
	return w, nil
}

// Ops names the single operation.
func (w *Workload) Ops() []string { return []string{OpTransfer} }

// Params returns every parameter with its effective value.
func (w *Workload) Params() map[string]string {
	out := make(map[string]string, len(w.params))
	for k, v := range w.params {
		out[k] = v
	}
	return out
}

// Total is the sum of all balances the load creates and every run keeps.
func (w *Workload) Total() int64 { return w.accounts * w.initial }

const streamClient = 0x9E3779B97F4A7C15

func (w *Workload) newRand(id uint64) *rand.Rand {
	if w.seeded {
		return rand.New(rand.NewPCG(uint64(w.seed)+id, streamClient))
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// createTable is the DDL, the same in both dialects. balance is BIGINT so
// the total of a large table cannot overflow a row.
const createTable = "CREATE TABLE " + Table + " (id INT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL)"

// appendInsert appends one multi-row INSERT of accounts first..first+n-1,
// each with balance initial. The values are the workload's own integers,
// written as literals so a batch is one round trip on every driver.
func appendInsert(b []byte, first, n, initial int64) []byte {
	b = append(b, "INSERT INTO "+Table+" (id, balance) VALUES "...)
	for i := first; i < first+n; i++ {
		if i > first {
			b = append(b, ", "...)
		}
		b = append(b, '(')
		b = strconv.AppendInt(b, i, 10)
		b = append(b, ", "...)
		b = strconv.AppendInt(b, initial, 10)
		b = append(b, ')')
	}
	return b
}

// Load drops and creates the table and fills accounts 1..accounts with
// loaders parallel sessions, one transaction per chunk of chunkRows rows.
func (w *Workload) Load(ctx context.Context, engineName string, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	loaders = max(loaders, 1)
	err := withConn(ctx, engineName, db, func(conn *sql.Conn, _ engine.Dialect) error {
		for _, q := range []string{"DROP TABLE IF EXISTS " + Table, createTable} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("bank load on %s: create table: %w", engineName, err)
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64 // first id of the next unclaimed chunk, minus 1
		loaded   atomic.Int64
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
					first := next.Add(chunkRows) - chunkRows + 1
					if first > w.accounts {
						return nil
					}
					n := min(chunkRows, w.accounts-first+1)
					var err error
					if buf, err = w.loadChunk(lctx, conn, first, n, buf); err != nil {
						return err
					}
					loaded.Add(n)
				}
			})
			if err != nil {
				errOnce.Do(func() {
					firstErr = fmt.Errorf("bank load on %s, loader %d: %w", engineName, i, err)
					cancel()
				})
			}
		})
	}
	wg.Wait()
	return workload.LoadStats{Records: loaded.Load(), Duration: time.Since(start)}, firstErr
}

// loadChunk inserts accounts first..first+n-1 in one transaction.
func (w *Workload) loadChunk(ctx context.Context, conn *sql.Conn, first, n int64, buf []byte) ([]byte, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return buf, fmt.Errorf("begin: %w", err)
	}
	for f := first; f < first+n; f += stmtRows {
		buf = appendInsert(buf[:0], f, min(stmtRows, first+n-f), w.initial)
		if _, err := tx.ExecContext(ctx, string(buf)); err != nil {
			tx.Rollback()
			return buf, fmt.Errorf("insert accounts %d..%d: %w", f, min(f+stmtRows, first+n)-1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return buf, fmt.Errorf("commit accounts %d..%d: %w", first, first+n-1, err)
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

// Verify checks the invariant after a run: COUNT(*) is the number of
// accounts loaded and SUM(balance) is accounts x initial_balance. Every
// transfer moves money inside one transaction, so only a lost, torn or
// duplicated transaction (or a lost update) changes either number.
func (w *Workload) Verify(ctx context.Context, engineName string, db engine.DB) error {
	var count, sum int64
	q := "SELECT COUNT(*), COALESCE(SUM(balance), 0) FROM " + Table
	err := withConn(ctx, engineName, db, func(conn *sql.Conn, _ engine.Dialect) error {
		// SUM(bigint) is numeric on PostgreSQL and DECIMAL on MariaDB:
		// read both as text.
		var c, s string
		if err := conn.QueryRowContext(ctx, q).Scan(&c, &s); err != nil {
			return err
		}
		var err error
		if count, err = strconv.ParseInt(c, 10, 64); err != nil {
			return fmt.Errorf("COUNT(*) %q is not an integer", c)
		}
		if sum, err = strconv.ParseInt(s, 10, 64); err != nil {
			return fmt.Errorf("SUM(balance) %q is not a 64-bit integer", s)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bank verify on %s: %s: %w", engineName, q, err)
	}
	if sum != w.Total() || count != w.accounts {
		return fmt.Errorf("bank invariant broken on %s: SUM(balance) = %d, want %d (%d accounts x %d %s); COUNT(*) = %d, want %d",
			engineName, sum, w.Total(), w.accounts, w.initial, pInitial, count, w.accounts)
	}
	return nil
}

// Statement indexes in Client.stmts.
const (
	sSelect = iota
	sUpdate
	nStmts
)

// statements returns the transfer's statements in dialect d: a locking read
// of one balance (argument id) and a write of one balance (arguments
// balance, id).
func statements(d engine.Dialect) [nStmts]string {
	return [nStmts]string{
		"SELECT balance FROM " + Table + " WHERE id = " + d.Placeholder(1) + " FOR UPDATE",
		"UPDATE " + Table + " SET balance = " + d.Placeholder(1) + " WHERE id = " + d.Placeholder(2),
	}
}

// NewClient returns client id bound to session s; its statements are
// prepared on the session's connection at the first Do.
func (w *Workload) NewClient(engineName string, id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(engineName, s)
	if err != nil {
		return nil, fmt.Errorf("bank client %d: %w", id, err)
	}
	return &Client{w: w, conn: q.Conn(), d: q.Dialect(), rng: w.newRand(uint64(id))}, nil
}

// Client runs transfers on its own connection. It is used by one goroutine.
type Client struct {
	w     *Workload
	conn  *sql.Conn
	d     engine.Dialect
	rng   *rand.Rand
	stmts [nStmts]*sql.Stmt
	ready bool
}

func (c *Client) prepare(ctx context.Context) error {
	if c.ready {
		return nil
	}
	for i, q := range statements(c.d) {
		st, err := c.conn.PrepareContext(ctx, q)
		if err != nil {
			c.Close()
			return fmt.Errorf("bank: prepare %s: %w", q, err)
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

// Do moves a uniform amount in [1, 100] from one uniformly chosen account
// to another, distinct one.
func (c *Client) Do(ctx context.Context) (int, error) {
	from, to, amount := pick(c.rng, c.w.accounts)
	return 0, c.transfer(ctx, from, to, amount)
}

// pick draws a transfer among accounts 1..n: to is drawn from the n-1 other
// accounts, so the pair is uniform over ordered distinct pairs without a
// retry loop.
func pick(rng *rand.Rand, n int64) (from, to, amount int64) {
	from = 1 + rng.Int64N(n)
	to = 1 + rng.Int64N(n-1)
	if to >= from {
		to++
	}
	return from, to, 1 + rng.Int64N(maxAmount)
}

// transfer runs one transfer transaction.
//
// Both rows are locked with SELECT ... FOR UPDATE, lowest id first, so two
// transfers over the same pair wait for each other instead of deadlocking.
// The new balances are computed here from what was read and written back
// as values (not balance = balance + x): a lost update, a lock that does
// not hold, or a read of a stale version then shows up in the total.
//
// Balances may go negative: every transfer is carried out, so each
// transaction does the same work whatever the balances have drifted to, and
// the total is kept either way.
//
// BEGIN and COMMIT are plain statements on the connection rather than a
// *sql.Tx because database/sql re-prepares a Conn-bound statement for every
// Tx it is used in. A serialization failure or deadlock is rolled back and
// returned, never retried here, so the driver counts it.
func (c *Client) transfer(ctx context.Context, from, to, amount int64) error {
	if err := c.prepare(ctx); err != nil {
		return err
	}
	if _, err := c.conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return fmt.Errorf("bank: begin: %w", err)
	}
	step, err := c.body(ctx, from, to, amount)
	if err == nil {
		if _, err = c.conn.ExecContext(ctx, "COMMIT"); err == nil {
			return nil
		}
		step = "commit"
	}
	return rollback(ctx, c.conn, fmt.Sprintf("bank transfer of %d from %d to %d: %s", amount, from, to, step), err)
}

func (c *Client) body(ctx context.Context, from, to, amount int64) (string, error) {
	lo, hi := min(from, to), max(from, to)
	var bal [2]int64
	for i, id := range [2]int64{lo, hi} {
		if err := c.stmts[sSelect].QueryRowContext(ctx, id).Scan(&bal[i]); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				err = fmt.Errorf("account %d is missing: was the load phase run?", id)
			}
			return fmt.Sprintf("lock account %d", id), err
		}
	}
	// bal[0] is lo's balance, bal[1] hi's.
	if from == lo {
		bal[0], bal[1] = bal[0]-amount, bal[1]+amount
	} else {
		bal[0], bal[1] = bal[0]+amount, bal[1]-amount
	}
	for i, id := range [2]int64{lo, hi} {
		if _, err := c.stmts[sUpdate].ExecContext(ctx, bal[i], id); err != nil {
			return fmt.Sprintf("update account %d", id), err
		}
	}
	return "", nil
}

// rollback ends a failed transaction and returns its error, labelled when it
// is a serialization failure or deadlock. ROLLBACK runs even when ctx is
// done, with a bound of its own, so no transaction stays open on a
// connection that may be used again.
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
// 40001/40P01 from drivers that expose SQLState() (pgx, lib/pq) or print
// it, and MySQL errors 1213/1205 from go-sql-driver/mysql's "Error NNNN"
// text, so no driver is imported. (tpcb has the same classifier; it belongs
// in engine once a second package outside workload needs it.)
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
