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
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
	"github.com/tierbench/tierbench/workload/sqlwork"
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
	params := []setting.Setting{
		// Account ids are 32-bit.
		{Name: pAccounts, Kind: setting.Int, Default: "10000", Min: "2", Max: strconv.Itoa(math.MaxInt32), Doc: "accounts loaded; transfers pick two of them"},
		{Name: pInitial, Kind: setting.Int, Default: "1000", Min: "0", Doc: "balance of each account after the load; accounts x initial_balance must fit 64 bits"},
		{Name: pSeed, Kind: setting.Int, Doc: "random seed, unset: random; set for reproducible runs"},
	}
	return workload.Spec{
		Name:   "bank",
		Model:  engine.ModelSQL,
		Doc:    "transfers between accounts in one transaction; the total balance is checked after the run and a run that breaks it fails",
		Params: params,
		New: func(p setting.Values) (workload.Workload, error) {
			return newWorkload(p)
		},
	}
}

// Workload is one configured bank workload, shared by all clients.
type Workload struct {
	accounts int64
	initial  int64
	seed     int64
	seeded   bool
	// acks, in a crash run, records the acknowledged transfers (acks.go).
	acks *acklog.Log
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Verifier = (*Workload)(nil)
)

func newWorkload(p setting.Values) (*Workload, error) {
	w := &Workload{accounts: p.Int64(pAccounts), initial: p.Int64(pInitial)}
	if w.initial > math.MaxInt64/w.accounts {
		return nil, fmt.Errorf("%s %d: %s x %s overflows a 64-bit total; lower one of them", pInitial, w.initial, pAccounts, pInitial)
	}
	w.seed, w.seeded = workload.Seed(p, pSeed)
	return w, nil
}

// Ops names the single operation.
func (w *Workload) Ops() []string { return []string{OpTransfer} }

// Total is the sum of all balances the load creates and every run keeps.
func (w *Workload) Total() int64 { return w.accounts * w.initial }

const streamClient = 0x9E3779B97F4A7C15

func (w *Workload) newRand(id uint64) *rand.Rand {
	return workload.NewRand(w.seed, w.seeded, streamClient, id)
}

// createTable is the DDL, the same in both dialects. balance is BIGINT so
// the total of a large table cannot overflow a row.
const createTable = "CREATE TABLE " + Table + " (id INT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL)"

// appendInsert appends one multi-row INSERT of accounts first..first+n-1,
// each with balance initial. The values are the workload's own integers,
// written as literals so a batch is one round trip on every driver.
func appendInsert(b []byte, first, n, initial int64) []byte {
	return sqlwork.AppendInsert(b, Table, "id, balance", first, n, func(b []byte, i int64) []byte {
		b = append(b, '(')
		b = strconv.AppendInt(b, i, 10)
		b = append(b, ", "...)
		b = strconv.AppendInt(b, initial, 10)
		return append(b, ')')
	})
}

// Load drops and creates the table and fills accounts 1..accounts with
// loaders parallel sessions, one transaction per chunk of chunkRows rows.
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		return sqlwork.ExecAll(ctx, conn, "DROP TABLE IF EXISTS "+Table, createTable)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("bank load: create table: %w", err)
	}
	var (
		next   atomic.Int64 // first id of the next unclaimed chunk, minus 1
		loaded atomic.Int64
	)
	err = sqlwork.LoadChunks(ctx, "bank", db, loaders, func(ctx context.Context, conn *sql.Conn, buf []byte) ([]byte, bool, error) {
		first := next.Add(chunkRows) - chunkRows + 1
		if first > w.accounts {
			return buf, true, nil
		}
		n := min(chunkRows, w.accounts-first+1)
		buf, err := w.loadChunk(ctx, conn, first, n, buf)
		if err != nil {
			return buf, false, err
		}
		loaded.Add(n)
		return buf, false, nil
	})
	return workload.LoadStats{Records: loaded.Load(), Duration: time.Since(start)}, err
}

// loadChunk inserts accounts first..first+n-1 in one transaction.
func (w *Workload) loadChunk(ctx context.Context, conn *sql.Conn, first, n int64, buf []byte) ([]byte, error) {
	return sqlwork.InsertChunk(ctx, conn, buf, "accounts", first, n, stmtRows, func(b []byte, first, n int64) []byte {
		return appendInsert(b, first, n, w.initial)
	})
}

// Verify checks the invariant after a run: COUNT(*) is the number of
// accounts loaded and SUM(balance) is accounts x initial_balance. Every
// transfer moves money inside one transaction, so only a lost, torn or
// duplicated transaction (or a lost update) changes either number. It
// returns what held, for the run's record.
func (w *Workload) Verify(ctx context.Context, db engine.DB) (string, error) {
	var count, sum int64
	q := "SELECT COUNT(*), COALESCE(SUM(balance), 0) FROM " + Table
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
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
		return "", fmt.Errorf("bank verify: %s: %w", q, err)
	}
	if sum != w.Total() || count != w.accounts {
		return "", fmt.Errorf("bank invariant broken: SUM(balance) = %d, want %d (%d accounts x %d %s); COUNT(*) = %d, want %d",
			sum, w.Total(), w.accounts, w.initial, pInitial, count, w.accounts)
	}
	return fmt.Sprintf("sum of balances = %d over %d accounts", sum, count), nil
}

// Statement indexes in Client.stmts.
const (
	sSelect = iota
	sUpdate
	sBalance
	nStmts
)

// statements returns the transfer's statements in dialect d: a locking read
// of one balance (argument id) and a write of one balance (arguments
// balance, id); and the plain read of a balance a crash run's check makes.
func statements(d engine.Dialect) [nStmts]string {
	return [nStmts]string{
		"SELECT balance FROM " + Table + " WHERE id = " + d.Placeholder(1) + " FOR UPDATE",
		"UPDATE " + Table + " SET balance = " + d.Placeholder(1) + " WHERE id = " + d.Placeholder(2),
		"SELECT balance FROM " + Table + " WHERE id = " + d.Placeholder(1),
	}
}

// NewClient returns client id bound to session s; its statements are
// prepared on the session's connection at the first Do.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
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
	// pending and buf are a crash run's writes of the transfer under way
	// (acks.go).
	pending []acklog.Pending
	buf     []byte
}

func (c *Client) prepare(ctx context.Context) error {
	if c.ready {
		return nil
	}
	qs := statements(c.d)
	// The transfer's statements; sBalance is the crash check's.
	if i, err := sqlwork.PrepareAll(ctx, c.conn, c.stmts[:sBalance], qs[:sBalance]); err != nil {
		return fmt.Errorf("bank: prepare %s: %w", qs[i], err)
	}
	c.ready = true
	return nil
}

// Close releases the prepared statements; the connection is the session's.
func (c *Client) Close() error {
	sqlwork.CloseAll(c.stmts[:])
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
// The transaction runs as plain statements on the connection (sqlwork.Txn).
// A serialization failure or deadlock is rolled back and returned, never
// retried here, so the driver counts it.
func (c *Client) transfer(ctx context.Context, from, to, amount int64) error {
	if err := c.prepare(ctx); err != nil {
		return err
	}
	txn := func() error {
		return sqlwork.Txn(ctx, c.conn, "bank",
			func() (string, error) { return c.body(ctx, from, to, amount) },
			func(step string) string {
				return fmt.Sprintf("bank transfer of %d from %d to %d: %s", amount, from, to, step)
			})
	}
	if c.w.acks != nil {
		return c.tracked(ctx, txn)
	}
	return txn()
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
		c.noteWrite(id, bal[i])
		if _, err := c.stmts[sUpdate].ExecContext(ctx, bal[i], id); err != nil {
			return fmt.Sprintf("update account %d", id), err
		}
	}
	return "", nil
}
