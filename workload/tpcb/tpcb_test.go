package tpcb

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

func newW(t testing.TB, params map[string]string) *Workload {
	t.Helper()
	w, err := Spec().Build(params)
	if err != nil {
		t.Fatalf("Build(%v): %v", params, err)
	}
	return w.(*Workload)
}

func TestSpec(t *testing.T) {
	s := Spec()
	if s.Name != "tpcb" || s.Doc == "" || strings.Contains(s.Doc, "\n") {
		t.Errorf("Name %q Doc %q: want tpcb and one line", s.Name, s.Doc)
	}
	w := newW(t, nil)
	if got := w.Ops(); !slices.Equal(got, []string{"tpcb"}) {
		t.Errorf("Ops() = %v, want [tpcb]", got)
	}
	for _, p := range s.Params {
		if err := p.Check(); err != nil {
			t.Error(err)
		}
	}
	v, _ := s.Resolve(nil)
	p := v.Map()
	if want := []string{pScale}; !slices.Equal(slices.Sorted(maps.Keys(p)), want) {
		t.Errorf("recorded parameters %v, want %v (the seed is unset)", slices.Sorted(maps.Keys(p)), want)
	}
	if p[pScale] != "1" || p[pSeed] != "" {
		t.Errorf("defaults %v, want scale 1 and no seed", p)
	}
	if w.branches() != 1 || w.tellers() != 10 || w.accounts() != 100000 {
		t.Errorf("scale 1: %d branches, %d tellers, %d accounts; want pgbench's 1, 10, 100000",
			w.branches(), w.tellers(), w.accounts())
	}
	w = newW(t, map[string]string{pScale: " 7 ", pSeed: "42"})
	if w.Scale() != 7 || w.accounts() != 700000 || w.tellers() != 70 || w.branches() != 7 || !w.seeded || w.seed != 42 {
		t.Errorf("scale 7 seed 42: %+v", w)
	}
	if w := newW(t, map[string]string{pScale: strconv.Itoa(maxScale)}); w.Scale() != maxScale {
		t.Errorf("largest scale not accepted")
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string // substrings of the error
	}{
		{"scale zero", map[string]string{pScale: "0"}, []string{"scale 0 is out of range: it must be from 1 to 214748364"}},
		{"scale negative", map[string]string{pScale: "-3"}, []string{"scale -3 is out of range"}},
		{"scale empty", map[string]string{pScale: ""}, []string{`scale "" is not a whole number`}},
		{"scale fractional", map[string]string{pScale: "1.5"}, []string{`scale "1.5" is not a whole number`}},
		{"scale text", map[string]string{pScale: "big"}, []string{`scale "big" is not a whole number`}},
		{"scale overflows teller ids", map[string]string{pScale: strconv.Itoa(maxScale + 1)}, []string{"scale 214748365 is out of range: it must be from 1 to 214748364"}},
		{"scale beyond int64", map[string]string{pScale: "99999999999999999999"}, []string{pScale}},
		{"seed text", map[string]string{pSeed: "abc"}, []string{`seed "abc" is not a whole number`}},
		{"seed float", map[string]string{pSeed: "1.0"}, []string{`seed "1.0"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Spec().Build(tc.params)
			if err == nil {
				t.Fatalf("Build(%v) succeeded, want an error", tc.params)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestStatementsPerDialect(t *testing.T) {
	pg := statements(engine.Postgres)
	my := statements(engine.MySQL)
	wantPG := [nStmts]string{
		"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
		"SELECT abalance FROM pgbench_accounts WHERE aid = $1",
		"UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2",
		"UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2",
		"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
	}
	wantMy := [nStmts]string{
		"UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?",
		"SELECT abalance FROM pgbench_accounts WHERE aid = ?",
		"UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?",
		"UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?",
		"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",
	}
	for i := range pg {
		if pg[i] != wantPG[i] {
			t.Errorf("postgres %s:\n got %s\nwant %s", stmtNames[i], pg[i], wantPG[i])
		}
		if my[i] != wantMy[i] {
			t.Errorf("mysql %s:\n got %s\nwant %s", stmtNames[i], my[i], wantMy[i])
		}
	}
}

func TestCreateTables(t *testing.T) {
	for _, tc := range []struct {
		scale   int64
		aidType string
	}{{1, "aid INT"}, {bigintScale - 1, "aid INT"}, {bigintScale, "aid BIGINT"}} {
		ddl := strings.Join(createTables(tc.scale), "\n")
		for _, want := range []string{
			"CREATE TABLE pgbench_branches (bid INT NOT NULL PRIMARY KEY, bbalance INT, filler CHAR(88))",
			"CREATE TABLE pgbench_tellers (tid INT NOT NULL PRIMARY KEY, bid INT, tbalance INT, filler CHAR(84))",
			"CREATE TABLE pgbench_accounts (" + tc.aidType + " NOT NULL PRIMARY KEY, bid INT, abalance INT, filler CHAR(84))",
			"CREATE TABLE pgbench_history (tid INT, bid INT, " + tc.aidType + ", delta INT, mtime TIMESTAMP, filler CHAR(22))",
		} {
			if !strings.Contains(ddl, want) {
				t.Errorf("scale %d: DDL lacks %q:\n%s", tc.scale, want, ddl)
			}
		}
	}
	if got := strings.Join(dropTables(), "; "); got != "DROP TABLE IF EXISTS pgbench_branches; DROP TABLE IF EXISTS pgbench_tellers; DROP TABLE IF EXISTS pgbench_accounts; DROP TABLE IF EXISTS pgbench_history" {
		t.Errorf("drops: %s", got)
	}
	if got := analyze(engine.Postgres); got != "VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history" {
		t.Errorf("postgres analyze: %s", got)
	}
	if got := analyze(engine.MySQL); got != "ANALYZE TABLE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history" {
		t.Errorf("mysql analyze: %s", got)
	}
}

func TestAppendInsert(t *testing.T) {
	tables := newW(t, map[string]string{pScale: "2"}).loadTables()
	for _, tc := range []struct {
		table       int
		first, n    int64
		want        string
		description string
	}{
		{0, 1, 2, "INSERT INTO pgbench_branches (bid, bbalance) VALUES (1, 0), (2, 0)", "branches, filler NULL"},
		{1, 9, 4, "INSERT INTO pgbench_tellers (tid, bid, tbalance) VALUES (9, 1, 0), (10, 1, 0), (11, 2, 0), (12, 2, 0)", "tellers 10 per branch"},
		{2, 100000, 2, "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) VALUES (100000, 1, 0, ''), (100001, 2, 0, '')", "accounts 100000 per branch"},
	} {
		if got := string(appendInsert(nil, tables[tc.table], tc.first, tc.n)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.description, got, tc.want)
		}
	}
}

// TestChunker checks that the chunks cover every row of every table once.
func TestChunker(t *testing.T) {
	for _, scale := range []int64{1, 3} {
		tables := newW(t, map[string]string{pScale: strconv.FormatInt(scale, 10)}).loadTables()
		c := newChunker(tables)
		covered := map[string]int64{} // table -> next expected first row
		for i := int64(0); ; i++ {
			tb, first, n, ok := c.chunk(i)
			if !ok {
				if i != c.chunks {
					t.Fatalf("scale %d: chunks end at %d, want %d", scale, i, c.chunks)
				}
				break
			}
			if n < 1 || n > chunkRows {
				t.Fatalf("scale %d chunk %d: %d rows", scale, i, n)
			}
			if want := covered[tb.name] + 1; first != want {
				t.Fatalf("scale %d chunk %d: %s from row %d, want %d", scale, i, tb.name, first, want)
			}
			covered[tb.name] = first + n - 1
		}
		for _, tb := range tables {
			if covered[tb.name] != tb.n {
				t.Errorf("scale %d: %s covered to row %d, want %d", scale, tb.name, covered[tb.name], tb.n)
			}
		}
		if _, _, _, ok := c.chunk(-1); ok {
			t.Errorf("chunk -1 exists")
		}
	}
}

func TestBalancesConsistent(t *testing.T) {
	if !(Balances{5, 5, 5, 5}).Consistent() {
		t.Error("equal sums reported inconsistent")
	}
	for _, b := range []Balances{{1, 5, 5, 5}, {5, 1, 5, 5}, {5, 5, 1, 5}, {5, 5, 5, 1}} {
		if b.Consistent() {
			t.Errorf("%+v reported consistent", b)
		}
	}
}
