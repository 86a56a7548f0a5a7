package analytics

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// chunkBytes is about how much of a table's file one bulk statement loads:
// large enough that statements cost nothing next to the rows, small enough
// that lineitem spreads over the loaders and no transaction holds the
// whole table.
const chunkBytes = 32 << 20

// section is whole lines off..off+n of a table's file, loaded by one
// statement.
type section struct {
	table  *table
	path   string
	off, n int64
}

// splitLines cuts the file at path into pieces of about size bytes, each
// ending at the end of a line, and returns their offsets and lengths.
func splitLines(path string, size int64) ([][2]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	total := st.Size()
	var out [][2]int64
	buf := make([]byte, 4096)
	for start := int64(0); start < total; {
		end := start + size
		for end < total {
			k, err := f.ReadAt(buf, end)
			if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
				end += int64(i) + 1
				break
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			end += int64(k)
		}
		end = min(end, total)
		out = append(out, [2]int64{start, end - start})
		start = end
	}
	return out, nil
}

// sections lists the load's pieces, largest table first.
func sections(d *dataSet) ([]section, error) {
	var out []section
	for i := range tables {
		t := &tables[i]
		path := d.file(t.name)
		pieces, err := splitLines(path, chunkBytes)
		if err != nil {
			return nil, fmt.Errorf("TPC-H data file: %w", err)
		}
		for _, p := range pieces {
			out = append(out, section{table: t, path: path, off: p[0], n: p[1]})
		}
	}
	return out, nil
}

// Load creates the eight tables, generates the scale's data unless the
// cache has it, and bulk-loads the generator's files into them with
// loaders parallel sessions (COPY FROM STDIN on PostgreSQL, LOAD DATA
// LOCAL INFILE on MariaDB, in pieces of about 32 MiB), checks each table
// got every row the generator wrote, then makes the secondary indexes and
// analyzes the tables.
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	w.stats.reset(len(w.selected))
	var d engine.Dialect
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, dialect engine.Dialect) error {
		d = dialect
		return sqlwork.ExecAll(ctx, conn, createStatements()...)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("analytics load: create tables: %w", err)
	}
	data, err := w.prepare(ctx)
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("analytics load: %w", err)
	}
	pieces, err := sections(data)
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("analytics load: %w", err)
	}
	loaded := make(map[*table]*atomic.Int64, len(tables))
	for i := range tables {
		loaded[&tables[i]] = new(atomic.Int64)
	}
	err = runEach(ctx, db, loaders, len(pieces), func(ctx context.Context, conn *sql.Conn, i int) error {
		n, err := loadSection(ctx, conn, d, pieces[i])
		loaded[pieces[i].table].Add(n)
		return err
	})
	var stats workload.LoadStats
	for _, n := range loaded {
		stats.Records += n.Load()
	}
	if err == nil {
		err = checkLoaded(data, loaded)
	}
	if err == nil {
		err = runEach(ctx, db, loaders, len(indexStatements), func(ctx context.Context, conn *sql.Conn, i int) error {
			return sqlwork.ExecAll(ctx, conn, indexStatements[i])
		})
	}
	if err == nil {
		err = engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
			return sqlwork.Analyze(ctx, conn, d, tableNames()...)
		})
	}
	stats.Duration = time.Since(start)
	if err != nil {
		return stats, fmt.Errorf("analytics load: %w", err)
	}
	return stats, nil
}

// runEach runs do(0..n-1) on loaders parallel sessions
// (sqlwork.LoadChunks), each index once.
func runEach(ctx context.Context, db engine.DB, loaders, n int, do func(ctx context.Context, conn *sql.Conn, i int) error) error {
	var next atomic.Int64
	return sqlwork.LoadChunks(ctx, "analytics", db, loaders, func(ctx context.Context, conn *sql.Conn, buf []byte) ([]byte, bool, error) {
		i := int(next.Add(1) - 1)
		if i >= n {
			return buf, true, nil
		}
		return buf, false, do(ctx, conn, i)
	})
}

// checkLoaded compares the rows each table took with the generator's.
func checkLoaded(data *dataSet, loaded map[*table]*atomic.Int64) error {
	var short []string
	for i := range tables {
		t := &tables[i]
		if got, want := loaded[t].Load(), data.rows[t.name]; got != want {
			short = append(short, fmt.Sprintf("%s took %d rows of the generator's %d", t.name, got, want))
		}
	}
	if len(short) > 0 {
		return errors.New("bulk load lost rows: " + strings.Join(short, "; "))
	}
	return nil
}

// loadSection bulk-loads one piece of a table's file and returns the rows
// the server says it took.
func loadSection(ctx context.Context, conn *sql.Conn, d engine.Dialect, s section) (int64, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := io.NewSectionReader(f, s.off, s.n)
	var n int64
	if d == engine.Postgres {
		n, err = copyFrom(ctx, conn, s.table, r)
	} else {
		n, err = loadData(ctx, conn, s.table, r)
	}
	if err != nil {
		return n, fmt.Errorf("load %s bytes %d..%d: %w", s.table.name, s.off, s.off+s.n, err)
	}
	return n, nil
}

// copyFrom streams r into t with COPY FROM STDIN on the connection's own
// pgx connection: the generator's '|'-separated CSV as it is.
func copyFrom(ctx context.Context, conn *sql.Conn, t *table, r io.Reader) (int64, error) {
	q := "COPY " + t.name + " (" + t.columnList() + ") FROM STDIN WITH (FORMAT csv, DELIMITER '|')"
	var n int64
	err := conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("COPY needs a pgx connection, not a %T", dc)
		}
		tag, err := sc.Conn().PgConn().CopyFrom(ctx, r, q)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// readerSeq names each LOAD DATA's reader apart.
var readerSeq atomic.Int64

// loadData streams r into t with LOAD DATA LOCAL INFILE from a reader
// registered with the driver for this one statement (the driver serves
// the file itself; no path is opened to the server).
func loadData(ctx context.Context, conn *sql.Conn, t *table, r io.Reader) (int64, error) {
	name := "tierbench-tpch-" + strconv.FormatInt(readerSeq.Add(1), 10)
	mysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler(name)
	q := "LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE " + t.name +
		" CHARACTER SET utf8mb4 FIELDS TERMINATED BY '|' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY ''" +
		" LINES TERMINATED BY '\\n' (" + t.columnList() + ")"
	res, err := conn.ExecContext(ctx, q)
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1148 || me.Number == 4166) {
			return 0, fmt.Errorf("%w (the server must allow it: SET GLOBAL local_infile = ON)", err)
		}
		return 0, err
	}
	return res.RowsAffected()
}
