// Package sqlwork holds what the SQL workloads (bank, tpcb, oltp) do the
// same way on every SQL engine: load rows in parallel chunks of multi-row
// INSERTs, each loader on its own session's connection (engine.WithSQL),
// run a transaction as plain statements, and roll back and label a failed
// one. Each workload keeps its own tables,
// statements and checks; what is here is the machinery around them, so a fix
// to it (a ROLLBACK that must outlive the run's context, a new driver's
// deadlock error) reaches every workload at once.
package sqlwork

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// ExecAll runs statements in order on conn and stops at the first that
// fails, naming it in the error, so a DDL script's error says which
// statement broke.
func ExecAll(ctx context.Context, conn *sql.Conn, qs ...string) error {
	for _, q := range qs {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// LoadChunks runs loaders parallel loaders (at least one), each on its own
// session's connection, and waits for them. Each loader calls chunk until it
// reports done: chunk claims the next chunk of the load (from a counter the
// caller shares between loaders), inserts it on conn and returns buf, the
// statement buffer the loader reuses between chunks. The first error
// cancels the other loaders and is returned, labelled with the workload
// and the loader.
func LoadChunks(ctx context.Context, workloadName string, db engine.DB, loaders int,
	chunk func(ctx context.Context, conn *sql.Conn, buf []byte) (_ []byte, done bool, err error)) error {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for i := range max(loaders, 1) {
		wg.Go(func() {
			err := engine.WithSQL(lctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
				var buf []byte
				for {
					if err := lctx.Err(); err != nil {
						return err
					}
					var (
						done bool
						err  error
					)
					if buf, done, err = chunk(lctx, conn, buf); err != nil || done {
						return err
					}
				}
			})
			if err != nil {
				errOnce.Do(func() {
					firstErr = fmt.Errorf("%s load, loader %d: %w", workloadName, i, err)
					cancel()
				})
			}
		})
	}
	wg.Wait()
	return firstErr
}

// InsertChunk inserts rows first..first+n-1 in one transaction, as
// multi-row INSERTs of at most perStmt rows that appendInsert appends to
// buf, which is reused and returned. One commit per chunk rather than per
// row keeps a load from paying a flush per row, and perStmt keeps each
// statement far below any packet or parameter limit. what names the rows in
// errors ("accounts" gives "insert accounts 1..1000: ...").
func InsertChunk(ctx context.Context, conn *sql.Conn, buf []byte, what string, first, n, perStmt int64,
	appendInsert func(b []byte, first, n int64) []byte) ([]byte, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return buf, fmt.Errorf("begin: %w", err)
	}
	for f := first; f < first+n; f += perStmt {
		buf = appendInsert(buf[:0], f, min(perStmt, first+n-f))
		if _, err := tx.ExecContext(ctx, string(buf)); err != nil {
			tx.Rollback()
			return buf, fmt.Errorf("insert %s %d..%d: %w", what, f, min(f+perStmt, first+n)-1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return buf, fmt.Errorf("commit %s %d..%d: %w", what, first, first+n-1, err)
	}
	return buf, nil
}

// AppendInsert appends one multi-row INSERT INTO table (columns) of rows
// first..first+n-1, each appended by row, parenthesised. The values are
// integers and literals the workload made, written into the text so a batch
// is one round trip on every driver (no per-batch prepare) and the text is
// the same in both dialects.
func AppendInsert(b []byte, table, columns string, first, n int64, row func(b []byte, i int64) []byte) []byte {
	b = append(b, "INSERT INTO "...)
	b = append(b, table...)
	b = append(b, " ("...)
	b = append(b, columns...)
	b = append(b, ") VALUES "...)
	for i := first; i < first+n; i++ {
		if i > first {
			b = append(b, ", "...)
		}
		b = row(b, i)
	}
	return b
}

// AnalyzeStatement returns the statement Analyze runs: VACUUM ANALYZE on
// PostgreSQL, ANALYZE TABLE on MySQL/MariaDB, of tables.
func AnalyzeStatement(d engine.Dialect, tables ...string) string {
	list := strings.Join(tables, ", ")
	if d == engine.Postgres {
		return "VACUUM ANALYZE " + list
	}
	return "ANALYZE TABLE " + list
}

// Analyze brings the statistics of tables up to date after a load
// (AnalyzeStatement): on PostgreSQL VACUUM ANALYZE, as pgbench runs after
// its load, so the first measured transactions neither set hint bits on
// every freshly loaded row nor plan without statistics; on MySQL/MariaDB
// ANALYZE TABLE, whose result set is read to the end. VACUUM cannot run in
// a transaction, so conn must not be in one. The error names the statement.
func Analyze(ctx context.Context, conn *sql.Conn, d engine.Dialect, tables ...string) error {
	q := AnalyzeStatement(d, tables...)
	if d == engine.Postgres {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		return nil
	}
	if _, err := Drain(conn.QueryContext(ctx, q)); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// PrepareAll prepares qs on conn into stmts (of the same length). When one
// fails it closes those already prepared, so a client never holds half a
// set, and returns the index of the one that failed with its error.
func PrepareAll(ctx context.Context, conn *sql.Conn, stmts []*sql.Stmt, qs []string) (int, error) {
	for i, q := range qs {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			CloseAll(stmts)
			return i, err
		}
		stmts[i] = st
	}
	return 0, nil
}

// CloseAll closes the prepared statements in stmts and clears them.
func CloseAll(stmts []*sql.Stmt) {
	for i, st := range stmts {
		if st != nil {
			st.Close()
			stmts[i] = nil
		}
	}
}

// Txn runs body as one transaction on conn and commits it. On failure it
// rolls back (Rollback) and returns the error labelled by what(step), step
// being what body says failed, or "commit"; what is called only then, so
// the label costs nothing on the hot path.
//
// START TRANSACTION and COMMIT are plain statements on the connection
// rather than a *sql.Tx because database/sql re-prepares a Conn-bound
// statement for every Tx it is used in (Tx.StmtContext), which would add
// prepares to every transaction; pgbench too sends BEGIN and END as
// statements. A begin that fails is returned as "<workload>: begin: ...".
func Txn(ctx context.Context, conn *sql.Conn, workloadName string, body func() (step string, err error), what func(step string) string) error {
	if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return fmt.Errorf("%s: begin: %w", workloadName, err)
	}
	step, err := body()
	if err == nil {
		if _, err = conn.ExecContext(ctx, "COMMIT"); err == nil {
			return nil
		}
		step = "commit"
	}
	return Rollback(ctx, conn, what(step), err)
}

// Rollback ends a failed transaction and returns its error, labelled when
// it is a serialization failure or deadlock (Conflict): those are the
// engine's verdict under contention, counted as errors by the driver and
// never retried here, so a retry loop cannot hide them from the results.
// ROLLBACK runs even when ctx is done (the run's end must not leave a
// transaction open on a connection that stays in use), with a bound of its
// own. When the ROLLBACK fails too, the error is a RollbackFailed, which
// Retries never retries.
func Rollback(ctx context.Context, conn *sql.Conn, what string, err error) error {
	err = Labelled(what, err)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, rerr := conn.ExecContext(rctx, "ROLLBACK"); rerr != nil {
		return &RollbackFailed{errors.Join(err, fmt.Errorf("rollback: %w", rerr))}
	}
	return err
}

// RollbackFailed is a failed transaction whose ROLLBACK failed as well:
// its connection may still hold the transaction, or the part of it that
// a lock wait timeout left (MariaDB rolls back only the statement), and
// a retry's START TRANSACTION would commit that part on MariaDB, or fail
// on PostgreSQL. So it is never retried, even when it began as a
// deadlock.
type RollbackFailed struct{ Err error }

func (e *RollbackFailed) Error() string { return e.Err.Error() }
func (e *RollbackFailed) Unwrap() error { return e.Err }

// Labelled labels a failed transaction's error with what, and with the
// conflict kind when it is one (Conflict), as Rollback does.
func Labelled(what string, err error) error {
	if kind := Conflict(err); kind != "" {
		return fmt.Errorf("%s: %s, rolled back: %w", what, kind, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Conflict names the concurrency failure err is, or returns "": SQLSTATE
// 40001 (serialization failure) and 40P01 (deadlock) from drivers that
// expose SQLState() (pgx, lib/pq) or print it, and MySQL/MariaDB errors 1213
// (deadlock) and 1205 (lock wait timeout) from go-sql-driver/mysql's "Error
// NNNN" text, so no driver is imported.
func Conflict(err error) string {
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

// Drain reads a query's rows to the end, counting them, and closes them:
// a SELECT's cost includes reading every row it returns. It takes the
// query's own results, so Drain(st.QueryContext(ctx, args...)) is the
// whole of a read.
func Drain(rows *sql.Rows, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	var n int64
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return n, err
	}
	return n, rows.Close()
}
