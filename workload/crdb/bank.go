package crdb

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// crdb-bank's parameter names (pSeed is kv's too).
const (
	pRows    = "rows"
	pPayload = "payload_bytes"
)

// OpTransfer is crdb-bank's one operation: one UPDATE of two accounts.
const OpTransfer = "transfer"

// BankTable is crdb-bank's table, named apart from bank's.
const BankTable = "crdb_bank"

// maxBankRows bounds the accounts.
const maxBankRows = 1<<31 - 1

// maxTransfer bounds an amount: amounts are uniform in [0, maxTransfer),
// as cockroach's bank draws them.
const maxTransfer = 999

// Load batching, as bank's: rows per INSERT, rows per transaction.
const (
	bankStmtRows  = 500
	bankChunkRows = 10 * bankStmtRows
)

// BankSpec returns the crdb-bank workload's spec.
func BankSpec() workload.Spec {
	params := []setting.Setting{
		{Name: pRows, Kind: setting.Int, Default: "1000", Min: "2", Max: strconv.Itoa(maxBankRows),
			Doc: "accounts, each with balance 0 (a transfer needs two); few accounts make transfers contend"},
		{Name: pPayload, Kind: setting.Size, Default: "100", Min: "0", Max: "64KiB", Doc: "bytes of each account's payload text"},
		seedParam,
	}
	return workload.Spec{
		Name:  "crdb-bank",
		Model: engine.ModelSQL,
		Doc: "cockroach workload bank on SQL: one UPDATE moves an amount between two random accounts (highly contended); " +
			"the total balance is checked after the run",
		Params: params,
		New: func(p setting.Values) (workload.Workload, error) {
			return newBank(p), nil
		},
	}
}

// Bank is one configured crdb-bank workload, shared by all clients.
type Bank struct {
	rows    int64
	payload int
	seed    int64
	seeded  bool
	retries sqlwork.Retries
}

var (
	_ workload.Workload = (*Bank)(nil)
	_ workload.Verifier = (*Bank)(nil)
)

func newBank(p setting.Values) *Bank {
	w := &Bank{rows: p.Int64(pRows), payload: int(p.Size(pPayload))}
	w.seed, w.seeded = workload.Seed(p, pSeed)
	return w
}

// Ops names the single operation.
func (w *Bank) Ops() []string { return []string{OpTransfer} }

// EstimatedBytes is a lower bound of the data the load writes: id,
// balance and payload of each account.
func (w *Bank) EstimatedBytes() int64 { return w.rows * int64(8+8+w.payload) }

const streamBank = 0x62616E6B

func (w *Bank) newRand(id uint64) *rand.Rand {
	return workload.NewRand(w.seed, w.seeded, streamBank, id)
}

// bankDDL is the table, the same in both dialects.
var bankDDL = []string{"DROP TABLE IF EXISTS " + BankTable,
	"CREATE TABLE " + BankTable + " (id BIGINT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL, payload TEXT NOT NULL)"}

// appendAccounts appends one INSERT of accounts first..first+n-1 with
// balance 0 and a payload of random lowercase letters (safe in a literal).
func appendAccounts(b []byte, rng *rand.Rand, payload int, first, n int64) []byte {
	return sqlwork.AppendInsert(b, BankTable, "id, balance, payload", first, n, func(b []byte, i int64) []byte {
		b = append(b, '(')
		b = strconv.AppendInt(b, i, 10)
		b = append(b, ", 0, '"...)
		for range payload {
			b = append(b, byte('a'+rng.IntN(26)))
		}
		return append(b, "')"...)
	})
}

// Load drops and creates the table and fills accounts 0..rows-1 with
// loaders parallel sessions.
func (w *Bank) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	w.retries.Reset()
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		return sqlwork.ExecAll(ctx, conn, bankDDL...)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("crdb-bank load: create table: %w", err)
	}
	var next, loaded atomic.Int64 // next: first id of the next unclaimed chunk
	err = sqlwork.LoadChunks(ctx, "crdb-bank", db, loaders, func(ctx context.Context, conn *sql.Conn, buf []byte) ([]byte, bool, error) {
		first := next.Add(bankChunkRows) - bankChunkRows
		if first >= w.rows {
			return buf, true, nil
		}
		n := min(bankChunkRows, w.rows-first)
		rng := w.newRand(uint64(first))
		buf, err := sqlwork.InsertChunk(ctx, conn, buf, "accounts", first, n, bankStmtRows, func(b []byte, first, n int64) []byte {
			return appendAccounts(b, rng, w.payload, first, n)
		})
		if err == nil {
			loaded.Add(n)
		}
		return buf, false, err
	})
	return workload.LoadStats{Records: loaded.Load(), Duration: time.Since(start)}, err
}

// Verify checks that the accounts are all there and their balances still
// add up to 0, the load's total: each transfer is one statement that takes
// from one account what it gives the other, so only a torn or lost
// statement changes the sum.
func (w *Bank) Verify(ctx context.Context, db engine.DB) (string, error) {
	var c, s string // COUNT and SUM, as text: SUM is numeric or DECIMAL
	q := "SELECT COUNT(*), COALESCE(SUM(balance), 0) FROM " + BankTable
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		return conn.QueryRowContext(ctx, q).Scan(&c, &s)
	})
	if err != nil {
		return "", fmt.Errorf("crdb-bank verify: %s: %w", q, err)
	}
	if c != strconv.FormatInt(w.rows, 10) || s != "0" {
		return "", fmt.Errorf("crdb-bank invariant broken: SUM(balance) = %s, want 0; COUNT(*) = %s, want %d", s, c, w.rows)
	}
	return fmt.Sprintf("sum of balances = 0 over %s accounts; %s", c, &w.retries), nil
}

// transferStatement is the one UPDATE of a transfer in dialect d, with
// arguments from, amount, to, amount, from, to: a CASE on the id takes
// amount from one row and gives it to the other, as cockroach's bank does.
func transferStatement(d engine.Dialect) string {
	p := d.Placeholder
	return "UPDATE " + BankTable + " SET balance = CASE id WHEN " + p(1) + " THEN balance - " + p(2) +
		" WHEN " + p(3) + " THEN balance + " + p(4) + " END WHERE id IN (" + p(5) + ", " + p(6) + ")"
}

// NewClient returns client id bound to session s; its statement is
// prepared at the first Do.
func (w *Bank) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
	if err != nil {
		return nil, fmt.Errorf("crdb-bank client %d: %w", id, err)
	}
	return &bankClient{w: w, conn: q.Conn(), d: q.Dialect(), rng: w.newRand(uint64(id) + 1<<32)}, nil
}

// bankClient runs transfers on its own connection, used by one goroutine.
type bankClient struct {
	w    *Bank
	conn *sql.Conn
	d    engine.Dialect
	rng  *rand.Rand
	stmt [1]*sql.Stmt
}

// Close releases the prepared statement; the connection is the session's.
func (c *bankClient) Close() error {
	sqlwork.CloseAll(c.stmt[:])
	return nil
}

// pickTransfer draws two distinct accounts among 0..rows-1, uniform over
// ordered pairs, and an amount in [0, maxTransfer).
func pickTransfer(rng *rand.Rand, rows int64) (from, to, amount int64) {
	from = rng.Int64N(rows)
	to = rng.Int64N(rows - 1)
	if to >= from {
		to++
	}
	return from, to, rng.Int64N(maxTransfer)
}

// Do runs one transfer as one autocommitted statement; deadlocks and
// serialization failures are retried and counted.
func (c *bankClient) Do(ctx context.Context) (int, error) {
	if c.stmt[0] == nil {
		q := transferStatement(c.d)
		if _, err := sqlwork.PrepareAll(ctx, c.conn, c.stmt[:], []string{q}); err != nil {
			return 0, fmt.Errorf("crdb-bank: prepare %s: %w", q, err)
		}
	}
	from, to, amount := pickTransfer(c.rng, c.w.rows)
	err := c.w.retries.Do(ctx, func() error {
		res, err := c.stmt[0].ExecContext(ctx, from, amount, to, amount, from, to)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n != 2 && amount != 0 {
			return fmt.Errorf("updated %d rows, want 2: was the load phase run?", n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("crdb-bank transfer of %d from %d to %d: %w", amount, from, to, err)
	}
	return 0, nil
}
