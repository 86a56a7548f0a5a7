package oltp

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
)

func newW(t testing.TB, name string, overrides map[string]string) *Workload {
	t.Helper()
	s, ok := specNamed(name)
	if !ok {
		t.Fatalf("no spec %s", name)
	}
	w, err := s.Build(overrides)
	if err != nil {
		t.Fatal(err)
	}
	return w.(*Workload)
}

// resolved are the parameters of workload name with overrides, as a run
// resolves them (Spec.Resolve).
func resolved(t testing.TB, name string, overrides map[string]string) setting.Values {
	t.Helper()
	s, ok := specNamed(name)
	if !ok {
		t.Fatalf("no spec %s", name)
	}
	v, err := s.Resolve(overrides)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSpecsDefaults(t *testing.T) {
	specs := Specs()
	if len(specs) != 2 || specs[0].Name != ReadWrite || specs[1].Name != WriteOnly {
		t.Fatalf("specs %v", specs)
	}
	rw := newW(t, ReadWrite, nil)
	want := map[string]string{
		"tables": "1", "table_size": "10000", "range_size": "100", "point_selects": "10",
		"simple_ranges": "1", "sum_ranges": "1", "order_ranges": "1", "distinct_ranges": "1",
		"index_updates": "1", "non_index_updates": "1", "delete_inserts": "1",
		"range_selects": "true", "skip_trx": "false", "rand_type": "special",
	}
	got := resolved(t, ReadWrite, nil).Map()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("read-write %s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("read-write params %v", got)
	}
	if rw.Rows() != 10000 || !rw.readWrite || rw.opt.skipTrx || !rw.opt.rangeSelects {
		t.Errorf("read-write parsed %+v", rw.opt)
	}
	if ops := rw.Ops(); !slices.Equal(ops, []string{OpTransaction}) {
		t.Errorf("ops %v", ops)
	}
	wo := newW(t, WriteOnly, map[string]string{"tables": "3", "table_size": "500", "skip_trx": "on"})
	if _, has := specs[1].Param("point_selects"); has {
		t.Errorf("write-only declares read options: %v", specs[1].ParamNames())
	}
	if wo.Rows() != 1500 || wo.readWrite || !wo.opt.skipTrx {
		t.Errorf("write-only parsed %+v", wo.opt)
	}
	if u := wo.used(); u[sPoint] || u[sSimple] || !u[sIndexUpdate] || !u[sInsert] {
		t.Errorf("write-only statements %v", u)
	}
	if u := newW(t, ReadWrite, map[string]string{"range_selects": "off"}).used(); !u[sPoint] || u[sSum] {
		t.Errorf("range_selects off statements %v", u)
	}
	// sysbench's words for booleans, and Go's.
	for v, want := range map[string]bool{"on": true, "off": false, "yes": true, "no": false, "true": true, "false": false, "1": true, "0": false} {
		if got := newW(t, WriteOnly, map[string]string{"skip_trx": v}).opt.skipTrx; got != want {
			t.Errorf("skip_trx %s: %v", v, got)
		}
	}
}

func TestParamsCheck(t *testing.T) {
	for _, s := range Specs() {
		for _, p := range s.Params {
			if err := p.Check(); err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
	}
}

func TestBadParams(t *testing.T) {
	rw, _ := specNamed(ReadWrite)
	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"tables": "0"}, "tables 0 is out of range: it must be from 1 to 100000"},
		{map[string]string{"tables": "100001"}, "tables 100001 is out of range"},
		{map[string]string{"table_size": "x"}, `table_size "x" is not a whole number`},
		{map[string]string{"table_size": "3000000000"}, "table_size 3000000000 is out of range: it must be from 1 to 2147483647"},
		{map[string]string{"range_size": "0"}, "range_size 0 is out of range"},
		{map[string]string{"point_selects": "-1"}, "point_selects -1 is out of range: it must be from 0 to 1000000"},
		{map[string]string{"delete_inserts": "1000001"}, "delete_inserts 1000001 is out of range"},
		{map[string]string{"skip_trx": "maybe"}, `skip_trx "maybe" is not true or false`},
		{map[string]string{"rand_type": "zipfian"}, `rand_type "zipfian" must be uniform, gaussian, special or pareto`},
		{map[string]string{"seed": "x"}, `seed "x" is not a whole number`},
	} {
		if _, err := rw.Build(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.params, err, tc.want)
		}
	}
}

// TestDDL checks the text of sysbench's create_table (oltp_common.lua) with
// auto_inc on, per driver.
func TestDDL(t *testing.T) {
	pg := createTable(engine.Postgres, 1)
	wantPG := "CREATE TABLE sbtest1(\n  id SERIAL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n)"
	if pg != wantPG {
		t.Errorf("postgres DDL:\n%s\nwant\n%s", pg, wantPG)
	}
	my := createTable(engine.MySQL, 12)
	wantMy := "CREATE TABLE sbtest12(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */"
	if my != wantMy {
		t.Errorf("mysql DDL:\n%s\nwant\n%s", my, wantMy)
	}
	if got := createIndex(3); got != "CREATE INDEX k_3 ON sbtest3(k)" {
		t.Errorf("index: %s", got)
	}
	if got := finishTable(engine.Postgres, 2, 500); !slices.Equal(got, []string{"CREATE INDEX k_2 ON sbtest2(k)", "SELECT setval(pg_get_serial_sequence('sbtest2', 'id'), 500)"}) {
		t.Errorf("postgres finish: %q", got)
	}
	if got := finishTable(engine.MySQL, 2, 500); !slices.Equal(got, []string{"CREATE INDEX k_2 ON sbtest2(k)"}) {
		t.Errorf("mysql finish: %q", got)
	}
}

func TestStatements(t *testing.T) {
	pg := statements(engine.Postgres, 2)
	for i, want := range []string{
		"SELECT c FROM sbtest2 WHERE id=$1",
		"SELECT c FROM sbtest2 WHERE id BETWEEN $1 AND $2",
		"SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN $1 AND $2",
		"SELECT c FROM sbtest2 WHERE id BETWEEN $1 AND $2 ORDER BY c",
		"SELECT DISTINCT c FROM sbtest2 WHERE id BETWEEN $1 AND $2 ORDER BY c",
		"UPDATE sbtest2 SET k=k+1 WHERE id=$1",
		"UPDATE sbtest2 SET c=$1 WHERE id=$2",
		"DELETE FROM sbtest2 WHERE id=$1",
		"INSERT INTO sbtest2 (id, k, c, pad) VALUES ($1, $2, $3, $4)",
	} {
		if pg[i] != want {
			t.Errorf("%s: %s, want %s", stmtNames[i], pg[i], want)
		}
	}
	if my := statements(engine.MySQL, 1); my[sInsert] != "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)" || my[sNonIndexUpdate] != "UPDATE sbtest1 SET c=? WHERE id=?" {
		t.Errorf("mysql: %q", my)
	}
}

// TestChunks checks that the load plan covers every row of every table
// once.
func TestChunks(t *testing.T) {
	for _, tc := range []struct{ tables, size int64 }{{1, 10000}, {1, 1}, {3, 25001}, {2, 20000}} {
		w := newW(t, WriteOnly, map[string]string{"tables": strconv.FormatInt(tc.tables, 10), "table_size": strconv.FormatInt(tc.size, 10)})
		next := make([]int64, tc.tables+1)
		for i := range next {
			next[i] = 1
		}
		n := int64(0)
		for ; ; n++ {
			tbl, first, count, ok := w.chunk(n)
			if !ok {
				break
			}
			if first != next[tbl] || count < 1 || count > chunkRows {
				t.Fatalf("%+v chunk %d: table %d rows %d+%d, want from %d", tc, n, tbl, first, count, next[tbl])
			}
			next[tbl] += count
		}
		for tbl := int64(1); tbl <= tc.tables; tbl++ {
			if next[tbl] != tc.size+1 {
				t.Errorf("%+v: table %d loaded to %d", tc, tbl, next[tbl]-1)
			}
		}
		if _, _, _, ok := w.chunk(-1); ok {
			t.Errorf("chunk -1")
		}
	}
}

var rowRE = regexp.MustCompile(`^\((\d+), (\d+), '(\d{11}-){9}\d{11}', '(\d{11}-){4}\d{11}'\)$`)

func TestRow(t *testing.T) {
	w := newW(t, ReadWrite, map[string]string{"table_size": "100"})
	r := rand.New(rand.NewPCG(1, 2))
	for id := int64(1); id <= 100; id++ {
		row := string(w.appendRow(nil, r, id))
		m := rowRE.FindStringSubmatch(row)
		if m == nil {
			t.Fatalf("row %s", row)
		}
		if m[1] != strconv.FormatInt(id, 10) {
			t.Errorf("row %s: id", row)
		}
		if k, _ := strconv.Atoi(m[2]); k < 1 || k > 100 {
			t.Errorf("row %s: k out of range", row)
		}
	}
	if len(cTemplate) != 119 || len(padTemplate) != 59 {
		t.Errorf("templates %d, %d characters, want sysbench's 119 and 59", len(cTemplate), len(padTemplate))
	}
}

// TestDistributions checks the shape of sysbench's distributions over
// 1..10000: every draw in range; special puts 75% of draws (plus the
// gaussian part's share) on the ~1% of ids around the centre.
func TestDistributions(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const n = 200000
	for _, name := range randTypes {
		d, err := distributionOf(name)
		if err != nil {
			t.Fatal(err)
		}
		hot := 0
		counts := map[uint32]int{}
		for range n {
			v := d(r, 1, 10000)
			if v < 1 || v > 10000 {
				t.Fatalf("%s: %d out of [1, 10000]", name, v)
			}
			counts[v]++
			if v >= 4975 && v <= 5051 {
				hot++
			}
		}
		share := float64(hot) / n
		t.Logf("%s: %.3f of draws on ids 4975..5051, %d distinct ids", name, share, len(counts))
		switch name {
		case randSpecial:
			// 0.75 from the special part, ~0.25*0.036 from the gaussian.
			if share < 0.745 || share > 0.775 {
				t.Errorf("special: hot share %.3f, want about 0.76", share)
			}
		case randUniform:
			if share < 0.006 || share > 0.0095 || len(counts) < 9900 {
				t.Errorf("uniform: hot share %.4f, %d distinct", share, len(counts))
			}
		}
	}
	// Degenerate ranges stay in range.
	for _, name := range randTypes {
		d, _ := distributionOf(name)
		if v := d(r, 1, 1); v != 1 {
			t.Errorf("%s over [1, 1]: %d", name, v)
		}
	}
	b := appendRandString(nil, r, "##-@#")
	if !regexp.MustCompile(`^\d\d-@\d$`).Match(b) {
		t.Errorf("rand string %q", b)
	}
}

func TestSysbenchArgs(t *testing.T) {
	args, err := SysbenchArgs(ReadWrite, resolved(t, ReadWrite, map[string]string{"table_size": "2000", "skip_trx": "false", "seed": "42"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--tables=1", "--table_size=2000", "--range_size=100", "--point_selects=10", "--simple_ranges=1",
		"--sum_ranges=1", "--order_ranges=1", "--distinct_ranges=1", "--range_selects=on", "--index_updates=1",
		"--non_index_updates=1", "--delete_inserts=1", "--skip_trx=off", "--rand-type=special", "--rand-seed=42"}
	if !slices.Equal(args, want) {
		t.Errorf("args\n%q\nwant\n%q", args, want)
	}
	args, err = SysbenchArgs(WriteOnly, resolved(t, WriteOnly, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--tables=1", "--table_size=10000", "--index_updates=1", "--non_index_updates=1", "--delete_inserts=1",
		"--skip_trx=off", "--rand-type=special"}; !slices.Equal(args, want) {
		t.Errorf("write-only args %q", args)
	}
	if _, err := SysbenchArgs(WriteOnly, resolved(t, WriteOnly, map[string]string{"seed": "0"})); err == nil {
		t.Errorf("seed 0 accepted; sysbench reads it as no seed")
	}
	if _, err := SysbenchArgs("tpcb", setting.Values{}); err == nil {
		t.Errorf("tpcb accepted")
	}
	if s, ok := Script(WriteOnly); !ok || s != "oltp_write_only" {
		t.Errorf("script %s", s)
	}
}
