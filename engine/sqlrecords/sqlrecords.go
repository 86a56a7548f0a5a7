// Package sqlrecords serves the YCSB records data model on a SQL connection:
// a usertable with a key and N text fields, as YCSB's JDBC binding defines
// it. Statements are prepared once per client connection, so the hot path
// takes no pool lock and parses no SQL. PostgreSQL and MariaDB sessions embed
// it.
package sqlrecords

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// Table is the YCSB table name.
const Table = "usertable"

// Records runs records operations on one connection.
type Records struct {
	conn    *sql.Conn
	d       engine.Dialect
	explain func(error) error // the engine's, or nil
	fields  int
	insert  *sql.Stmt
	read    *sql.Stmt
	scan    *sql.Stmt
	update  []*sql.Stmt // by field index, prepared on first use
	all     *sql.Stmt   // update of every field
	sql     statements  // the texts prepared
	lane    laneState   // the connection a lane took (lane.go)
	args    []any
	dest    []any
	rawDest []sql.RawBytes
}

var (
	_ engine.Records      = (*Records)(nil)
	_ engine.FieldsReader = (*Records)(nil)
)

// New binds a Records to a connection; statements are prepared when the
// table exists (after Setup, or on the first use in a client).
func New(conn *sql.Conn, d engine.Dialect) *Records { return &Records{conn: conn, d: d} }

// Explain passes err through the engine's explanation (engine.Explainer),
// set with SetExplain; every error of a records operation goes through it.
func (r *Records) Explain(err error) error {
	if err == nil || r.explain == nil {
		return err
	}
	return r.explain(err)
}

// SetExplain sets the engine's explanation of its errors (nil for none).
func (r *Records) SetExplain(explain func(error) error) { r.explain = explain }

// Conn is the client's connection.
func (r *Records) Conn() *sql.Conn { return r.conn }

// Dialect is the connection's SQL flavour.
func (r *Records) Dialect() engine.Dialect { return r.d }

func fieldNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("field%d", i)
	}
	return out
}

// SetupRecords creates the usertable with fields columns.
func (r *Records) SetupRecords(ctx context.Context, fields int) error {
	cols := make([]string, fields)
	for i, f := range fieldNames(fields) {
		cols[i] = f + " TEXT"
	}
	ddl := fmt.Sprintf("CREATE TABLE %s (ycsb_key VARCHAR(255) PRIMARY KEY, %s)", Table, strings.Join(cols, ", "))
	if _, err := r.conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+Table); err != nil {
		return fmt.Errorf("drop %s: %w", Table, r.Explain(err))
	}
	if _, err := r.conn.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("create %s: %w", Table, r.Explain(err))
	}
	return nil
}

// prepare prepares the statements for n fields once.
func (r *Records) prepare(ctx context.Context, n int) error {
	if r.insert != nil && r.fields == n {
		return nil
	}
	return r.Explain(r.prepareAll(ctx, n))
}

// statements are the records statements' texts for n fields.
type statements struct {
	insert, read, scan, all string
	update                  []string // of one field, by index
}

func texts(d engine.Dialect, n int) statements {
	names := fieldNames(n)
	sets := make([]string, n)
	st := statements{
		insert: fmt.Sprintf("INSERT INTO %s (ycsb_key, %s) VALUES (%s)", Table, strings.Join(names, ", "), d.Placeholders(n+1)),
		read:   fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key = %s", strings.Join(names, ", "), Table, d.Placeholder(1)),
		scan: fmt.Sprintf("SELECT ycsb_key, %s FROM %s WHERE ycsb_key >= %s ORDER BY ycsb_key LIMIT %s",
			strings.Join(names, ", "), Table, d.Placeholder(1), d.Placeholder(2)),
		update: make([]string, n),
	}
	for i, f := range names {
		sets[i] = f + " = " + d.Placeholder(i+1)
		st.update[i] = fmt.Sprintf("UPDATE %s SET %s = %s WHERE ycsb_key = %s", Table, f, d.Placeholder(1), d.Placeholder(2))
	}
	st.all = fmt.Sprintf("UPDATE %s SET %s WHERE ycsb_key = %s", Table, strings.Join(sets, ", "), d.Placeholder(n+1))
	return st
}

func (r *Records) prepareAll(ctx context.Context, n int) error {
	r.fields = n
	r.sql = texts(r.d, n)
	var err error
	if r.insert, err = r.conn.PrepareContext(ctx, r.sql.insert); err != nil {
		return fmt.Errorf("prepare insert: %w", err)
	}
	if r.read, err = r.conn.PrepareContext(ctx, r.sql.read); err != nil {
		return fmt.Errorf("prepare read: %w", err)
	}
	if r.scan, err = r.conn.PrepareContext(ctx, r.sql.scan); err != nil {
		return fmt.Errorf("prepare scan: %w", err)
	}
	if r.all, err = r.conn.PrepareContext(ctx, r.sql.all); err != nil {
		return fmt.Errorf("prepare update: %w", err)
	}
	r.update = make([]*sql.Stmt, n)
	r.args = make([]any, n+1)
	r.rawDest = make([]sql.RawBytes, n+1)
	r.dest = make([]any, n+1)
	for i := range r.dest {
		r.dest[i] = &r.rawDest[i]
	}
	return nil
}

// Insert writes a whole record.
func (r *Records) Insert(ctx context.Context, key []byte, fields [][]byte) error {
	if err := r.prepare(ctx, len(fields)); err != nil {
		return err
	}
	if pw, err := r.wire(ctx); pw != nil || err != nil {
		return r.laneInsert(ctx, pw, err, key, fields)
	}
	r.args[0] = key
	for i, f := range fields {
		r.args[i+1] = f
	}
	_, err := r.insert.ExecContext(ctx, r.args...)
	return r.Explain(err)
}

// InsertBatch writes many records in one transaction.
func (r *Records) InsertBatch(ctx context.Context, keys [][]byte, fields [][][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	if err := r.prepare(ctx, len(fields[0])); err != nil {
		return err
	}
	tx, err := r.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", r.Explain(err))
	}
	stmt := tx.StmtContext(ctx, r.insert)
	for i, k := range keys {
		r.args[0] = k
		for j, f := range fields[i] {
			r.args[j+1] = f
		}
		if _, err := stmt.ExecContext(ctx, r.args...); err != nil {
			tx.Rollback()
			return fmt.Errorf("insert: %w", r.Explain(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", r.Explain(err))
	}
	return nil
}

// Read reads all fields of a record.
func (r *Records) Read(ctx context.Context, key []byte) (bool, error) {
	if err := r.ensure(ctx); err != nil {
		return false, err
	}
	if pw, err := r.wire(ctx); pw != nil || err != nil {
		return r.laneRead(ctx, pw, err, key)
	}
	rows, err := r.read.QueryContext(ctx, key)
	if err != nil {
		return false, r.Explain(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return false, r.Explain(rows.Err())
	}
	if err := rows.Scan(r.dest[1:]...); err != nil {
		return false, err
	}
	return true, r.Explain(rows.Err())
}

// ReadFields reads a record's field values (engine.FieldsReader), for the
// check of acknowledged writes after a crash; nil when it is absent.
func (r *Records) ReadFields(ctx context.Context, key []byte) ([][]byte, error) {
	if err := r.ensure(ctx); err != nil {
		return nil, err
	}
	rows, err := r.read.QueryContext(ctx, key)
	if err != nil {
		return nil, r.Explain(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, r.Explain(rows.Err())
	}
	fields := make([][]byte, len(r.dest)-1)
	dest := make([]any, len(fields))
	for i := range dest {
		dest[i] = &fields[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	return fields, r.Explain(rows.Err())
}

// Update writes the given fields.
func (r *Records) Update(ctx context.Context, key []byte, fields []engine.Field) error {
	if err := r.ensure(ctx); err != nil {
		return err
	}
	if pw, err := r.wire(ctx); pw != nil || err != nil {
		return r.laneUpdate(ctx, pw, err, key, fields)
	}
	if len(fields) == r.fields {
		for _, f := range fields {
			r.args[f.Index] = f.Value
		}
		r.args[r.fields] = key
		_, err := r.all.ExecContext(ctx, r.args...)
		return r.Explain(err)
	}
	for _, f := range fields {
		st, err := r.updateStmt(ctx, f.Index)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, f.Value, key); err != nil {
			return r.Explain(err)
		}
	}
	return nil
}

func (r *Records) updateStmt(ctx context.Context, i int) (*sql.Stmt, error) {
	if i < 0 || i >= r.fields {
		return nil, fmt.Errorf("update of field %d: the table has %d fields", i, r.fields)
	}
	if r.update[i] == nil {
		st, err := r.conn.PrepareContext(ctx, r.sql.update[i])
		if err != nil {
			return nil, fmt.Errorf("prepare update of field%d: %w", i, r.Explain(err))
		}
		r.update[i] = st
	}
	return r.update[i], nil
}

// Scan reads up to count records in key order from start.
func (r *Records) Scan(ctx context.Context, start []byte, count int) (int, error) {
	if err := r.ensure(ctx); err != nil {
		return 0, err
	}
	if pw, err := r.wire(ctx); pw != nil || err != nil {
		return r.laneScan(ctx, pw, err, start, count)
	}
	rows, err := r.scan.QueryContext(ctx, start, count)
	if err != nil {
		return 0, r.Explain(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := rows.Scan(r.dest...); err != nil {
			return n, err
		}
		n++
	}
	return n, r.Explain(rows.Err())
}

// ensure prepares statements on a client that has not inserted, reading the
// field count from the table.
func (r *Records) ensure(ctx context.Context) error {
	if r.insert != nil {
		return nil
	}
	var n int
	q := "SELECT COUNT(*) FROM information_schema.columns WHERE table_name = " + r.d.Placeholder(1) + " AND column_name LIKE 'field%'"
	if r.d == engine.MySQL {
		q += " AND table_schema = DATABASE()"
	}
	if err := r.conn.QueryRowContext(ctx, q, Table).Scan(&n); err != nil {
		return fmt.Errorf("read the shape of %s: %w", Table, r.Explain(err))
	}
	if n == 0 {
		return fmt.Errorf("table %s has no fields: was the load phase run?", Table)
	}
	return r.prepare(ctx, n)
}

// Close releases the prepared statements (the connection is the caller's)
// and ends the connection a lane took, if any.
func (r *Records) Close() error {
	r.lane.close()
	for _, st := range append([]*sql.Stmt{r.insert, r.read, r.scan, r.all}, r.update...) {
		if st != nil {
			st.Close()
		}
	}
	return nil
}
