package analytics

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// testScale is the tests' scale: 60,175 lineitem rows, 10.5 MB of files.
const testScale = "0.01"

// needGenerator skips t when the generator is not installed, as the
// server tests skip an engine that is not (scripts/setup.sh installs it).
func needGenerator(t *testing.T) {
	t.Helper()
	if err := checkGenerator(context.Background()); errors.Is(err, ErrNoGenerator) {
		testenv.Skip(t, err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// TestGeneratorCache generates a scale once: a second workload on the same
// cache runs no generator and reads the same counts; a generation killed
// before its marker is redone.
func TestGeneratorCache(t *testing.T) {
	needGenerator(t)
	ctx := context.Background()
	w := newW(t, map[string]string{pScale: testScale})
	d, err := w.prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := w.generated.Load(); n != 2 {
		t.Errorf("first prepare ran the generator %d times, want 2 (data, answers)", n)
	}
	want := map[string]int64{"lineitem": 60175, "orders": 15000, "partsupp": 8000, "part": 2000, "customer": 1500, "supplier": 100, "nation": 25, "region": 5}
	for name, n := range want {
		if d.rows[name] != n {
			t.Errorf("%s: generator wrote %d rows, want %d", name, d.rows[name], n)
		}
		if _, err := os.Stat(d.file(name)); err != nil {
			t.Error(err)
		}
	}
	if a := d.expected["q1"]; a.Rows != 4 || len(a.First) != 10 {
		t.Errorf("DuckDB's Q1: %+v", a)
	}
	if !strings.HasPrefix(d.version, "duckdb 1.4.4, tpch extension 1.4.4.") {
		t.Errorf("version %q", d.version)
	}
	entries, _ := os.ReadDir(d.dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".duckdb") {
			t.Errorf("the generator left its database %s", e.Name())
		}
	}

	again := newW(t, map[string]string{pScale: testScale})
	again.cacheDir = w.cacheDir
	if !again.cached() {
		t.Fatal("the scale is not cached after a generation")
	}
	d2, err := again.prepare(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := again.generated.Load(); n != 0 || d2.rows["lineitem"] != d.rows["lineitem"] || d2.expected["q6"].Rows != 1 {
		t.Errorf("second prepare ran the generator %d times; lineitem %d, q6 %+v", n, d2.rows["lineitem"], d2.expected["q6"])
	}

	// A killed generation: no marker, so the data is made again.
	if err := os.Remove(w.dataDir() + ".done"); err != nil {
		t.Fatal(err)
	}
	third := newW(t, map[string]string{pScale: testScale})
	third.cacheDir = w.cacheDir
	if _, err := third.prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if n := third.generated.Load(); n != 1 {
		t.Errorf("prepare after a killed generation ran the generator %d times, want 1 (the data)", n)
	}
}

// engineResult is what one engine answered.
type engineResult struct {
	rows   map[string]int64     // row count per query
	values map[string][]float64 // numeric columns of the first row of a few queries
}

// valueQueries are the queries whose first rows' numbers are compared
// between the engines and DuckDB, from column first on: Q1's sums and
// averages, Q6's, Q14's and Q19's single figure.
var valueQueries = map[int]int{1: 2, 6: 0, 14: 0, 19: 0}

// TestQueriesOnBothEngines loads scale 0.01 on PostgreSQL and MariaDB,
// checks Verify after the load, runs all 22 queries on two clients (each
// query twice, from two places in the set), verifies, deletes a row for
// Verify to find, and cross-checks the engines: the same row count for every query, and the same figures for
// Q1, Q6, Q14 and Q19, DuckDB's within rounding.
func TestQueriesOnBothEngines(t *testing.T) {
	needGenerator(t)
	ctx := context.Background()
	w := newW(t, map[string]string{pScale: testScale})
	results := map[string]engineResult{}
	for _, e := range enginetest.SQLEngines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := enginetest.Open(t, e)
			stats, err := w.Load(ctx, db, 3)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: loaded %d rows in %v", e.Name, stats.Records, stats.Duration)
			if stats.Records != 60175+15000+8000+2000+1500+100+25+5 {
				t.Errorf("loaded %d records", stats.Records)
			}
			checked, err := w.Verify(ctx, db)
			if err != nil {
				t.Fatalf("Verify after the load: %v", err)
			}
			if !strings.Contains(checked, "lineitem 60175") || !strings.Contains(checked, "not run: q1, q2") {
				t.Errorf("Verify after the load says %q", checked)
			}
			if errs := workloadtest.RunClients(t, w, db, 2, nQueries); len(errs) > 0 {
				t.Fatalf("%d of %d queries failed; first: %v", len(errs), 2*nQueries, errs[0])
			}
			checked, err = w.Verify(ctx, db)
			if err != nil {
				t.Fatalf("Verify after the queries: %v", err)
			}
			t.Logf("%s: %s", e.Name, checked)
			if !strings.Contains(checked, "q1 4 (x2)") || !strings.Contains(checked, "2 whole sets of 22 queries") || strings.Contains(checked, "not run") {
				t.Errorf("Verify says %q", checked)
			}
			res := engineResult{rows: map[string]int64{}, values: map[string][]float64{}}
			for k, name := range w.ops {
				res.rows[name] = w.stats.queries[k].rows.Load()
			}
			for n, from := range valueQueries {
				res.values[opName(n)] = firstRow(t, db, queryText(n, w.scale), from)
			}
			results[e.Name] = res

			// A lost row is named.
			enginetest.Exec(t, db, "DELETE FROM orders WHERE o_orderkey = 1")
			if _, err := w.Verify(ctx, db); err == nil || !strings.Contains(err.Error(), "orders holds 14999 rows, the generator wrote 15000") {
				t.Errorf("Verify with an order deleted = %v, want it named", err)
			}
		})
	}
	pg, okPG := results["postgres"]
	my, okMy := results["mariadb"]
	if !okPG || !okMy {
		testenv.Skip(t, "the cross-check needs both engines")
	}
	for _, name := range w.ops {
		if pg.rows[name] != my.rows[name] {
			t.Errorf("%s: postgres returned %d rows, mariadb %d", name, pg.rows[name], my.rows[name])
		}
	}
	for n, from := range valueQueries {
		name := opName(n)
		duck := w.data.expected[name].First[from:]
		for i := range pg.values[name] {
			d, err := strconv.ParseFloat(*duck[i], 64)
			if err != nil {
				t.Fatalf("DuckDB's %s column %d: %v", name, from+i, err)
			}
			p, m := pg.values[name][i], my.values[name][i]
			if !near(p, m) || !near(p, d) {
				t.Errorf("%s column %d: postgres %v, mariadb %v, duckdb %v", name, from+i, p, m, d)
			}
		}
	}
}

// near says whether a and b agree within rounding: averages and ratios
// carry a different number of decimals on each engine.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// firstRow runs q and returns the first row's columns from column from on,
// as numbers.
func firstRow(t *testing.T, db engine.DB, q string, from int) []float64 {
	t.Helper()
	var out []float64
	err := engine.WithSQL(context.Background(), db, func(conn *sql.Conn, _ engine.Dialect) error {
		rows, err := conn.QueryContext(context.Background(), q)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		if !rows.Next() {
			return errors.New("no row")
		}
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for _, v := range vals[from:] {
			f, err := strconv.ParseFloat(v.String, 64)
			if err != nil {
				return err
			}
			out = append(out, f)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// TestNotSQL checks the messages on a key-value engine.
func TestNotSQL(t *testing.T) {
	w := newW(t, map[string]string{pScale: testScale})
	workloadtest.CheckNotSQL(t, w)
	if n := w.generated.Load(); n != 0 {
		t.Errorf("the generator ran %d times for an engine that cannot load", n)
	}
}

// TestMissingDataFile checks that a cache whose file went missing fails
// the load naming the file: the cache here is complete but for the files.
func TestMissingDataFile(t *testing.T) {
	w := newW(t, map[string]string{pScale: testScale})
	rows, _ := json.Marshal(map[string]int64{"nation": 25})
	for dir, f := range map[string]struct {
		name    string
		content []byte
	}{w.dataDir(): {"rows.json", rows}, w.expectedDir(): {"expected.json", []byte("{}")}} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for path, b := range map[string][]byte{filepath.Join(dir, f.name): f.content, dir + ".done": []byte("test\n")} {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	db := enginetest.Open(t, enginetest.SQLEngines(t)[0])
	_, err := w.Load(context.Background(), db, 1)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(w.dataDir(), "lineitem.tbl")) {
		t.Errorf("Load = %v, want the missing file named", err)
	}
	if n := w.generated.Load(); n != 0 {
		t.Errorf("the generator ran %d times on a complete cache", n)
	}
}

// TestPreflight checks that a machine with the generator passes, and that
// a scale whose files do not fit the cache's filesystem is refused with
// the figures.
func TestPreflight(t *testing.T) {
	needGenerator(t)
	if err := newW(t, map[string]string{pScale: testScale}).Preflight(); err != nil {
		t.Errorf("Preflight at scale %s: %v", testScale, err)
	}
	err := newW(t, map[string]string{pScale: "10000"}).Preflight()
	if err == nil || !strings.Contains(err.Error(), "the TPC-H data at scale 10000 takes about 10 TiB in ") || !strings.Contains(err.Error(), "free: free space there or lower the scale") {
		t.Errorf("Preflight at scale 10000 = %v, want the space refused", err)
	}
}
