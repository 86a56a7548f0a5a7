package analytics

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// newW builds the workload from overrides with its cache in a fresh
// folder, failing t on a refused parameter.
func newW(t *testing.T, overrides map[string]string) *Workload {
	t.Helper()
	w, err := Spec().Build(overrides)
	if err != nil {
		t.Fatal(err)
	}
	a := w.(*Workload)
	a.cacheDir = t.TempDir()
	return a
}

// TestParams checks the parameters read, and bad ones refused with a
// message that names the parameter and what to write.
func TestParams(t *testing.T) {
	cases := []struct {
		name      string
		overrides map[string]string
		ops       []string
		bytes     int64
		err       string // "" when accepted
	}{
		{name: "defaults", ops: []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11",
			"q12", "q13", "q14", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22"}, bytes: 1.1e9},
		{name: "a list in its order", overrides: map[string]string{pQueries: "6, q1,Q22", pScale: "0.01"}, ops: []string{"q6", "q1", "q22"}, bytes: 11e6},
		{name: "scale 10", overrides: map[string]string{pScale: "10", pQueries: "all"}, bytes: 11e9},
		{name: "tiny scale", overrides: map[string]string{pScale: "0.0001"}, bytes: 110000},
		{name: "scale zero", overrides: map[string]string{pScale: "0"}, err: `workload analytics: scale 0: the scale factor must be above 0; write e.g. scale: 0.01`},
		{name: "negative scale", overrides: map[string]string{pScale: "-1"}, err: `scale -1 is out of range: it must be from 0 to 10000`},
		{name: "scale not a number", overrides: map[string]string{pScale: "big"}, err: `scale "big" is not a decimal number`},
		{name: "scale NaN", overrides: map[string]string{pScale: "NaN"}, err: `scale "NaN" is not a decimal number`},
		{name: "scale beyond the keys", overrides: map[string]string{pScale: "20000"}, err: `scale 20000 is out of range: it must be from 0 to 10000`},
		{name: "query 0", overrides: map[string]string{pQueries: "0"}, err: `queries "0": "0" is not a query: write all, or query numbers from 1 to 22`},
		{name: "query 23", overrides: map[string]string{pQueries: "1,23"}, err: `"23" is not a query`},
		{name: "empty item", overrides: map[string]string{pQueries: "1,,2"}, err: `"" is not a query`},
		{name: "twice", overrides: map[string]string{pQueries: "3,q3"}, err: `queries "3,q3": query 3 is listed twice`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := Spec().Build(c.overrides)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Build(%v) = %v, want an error containing %q", c.overrides, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.ops != nil && !slices.Equal(w.Ops(), c.ops) {
				t.Errorf("Ops() = %v, want %v", w.Ops(), c.ops)
			}
			if got := w.(*Workload).EstimatedBytes(); got != c.bytes {
				t.Errorf("EstimatedBytes() = %d, want %d", got, c.bytes)
			}
		})
	}
}

func TestParamsCheck(t *testing.T) {
	for _, p := range Spec().Params {
		if err := p.Check(); err != nil {
			t.Error(err)
		}
	}
}

// TestWalk checks that each client walks the whole set in order from its
// own place, and says when it has run a whole set.
func TestWalk(t *testing.T) {
	cases := []struct {
		n, id int
		want  []int
		sets  []int // steps (from 0) that complete a set
	}{
		{n: 3, id: 0, want: []int{0, 1, 2, 0, 1, 2, 0}, sets: []int{2, 5}},
		{n: 3, id: 4, want: []int{1, 2, 0, 1, 2, 0, 1}, sets: []int{2, 5}},
		{n: 22, id: 21, want: []int{21, 0, 1}},
		{n: 1, id: 7, want: []int{0, 0, 0}, sets: []int{0, 1, 2}},
	}
	for _, c := range cases {
		w := newWalk(c.n, c.id)
		var got, sets []int
		for k := range c.want {
			i, done := w.step()
			got = append(got, i)
			if done {
				sets = append(sets, k)
			}
		}
		if !slices.Equal(got, c.want) || !slices.Equal(sets, c.sets) {
			t.Errorf("walk of %d from client %d: %v, sets done at %v; want %v, %v", c.n, c.id, got, sets, c.want, c.sets)
		}
	}
}

// TestSplitLines checks that a file is cut into whole lines that add up
// to it, whatever the piece size.
func TestSplitLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.tbl")
	var content []byte
	for i := range 100 {
		content = append(content, strings.Repeat("x", i%17)+"|y\n"...)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{1, 5, 64, 1000, 1 << 20} {
		pieces, err := splitLines(path, size)
		if err != nil {
			t.Fatal(err)
		}
		var joined []byte
		for _, p := range pieces {
			part := content[p[0] : p[0]+p[1]]
			if len(part) == 0 || part[len(part)-1] != '\n' {
				t.Fatalf("size %d: piece %v does not end a line", size, p)
			}
			joined = append(joined, part...)
		}
		if !bytes.Equal(joined, content) {
			t.Errorf("size %d: %d pieces do not add up to the file", size, len(pieces))
		}
		if size >= int64(len(content)) && len(pieces) != 1 {
			t.Errorf("size %d: %d pieces of a %d-byte file", size, len(pieces), len(content))
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.tbl")
	os.WriteFile(empty, nil, 0o644)
	if pieces, err := splitLines(empty, 10); err != nil || len(pieces) != 0 {
		t.Errorf("empty file: %v, %v", pieces, err)
	}
}

// TestQueryTexts checks what varies with the scale (Q11's FRACTION,
// 0.0001/SF) and that every text names its tables.
func TestQueryTexts(t *testing.T) {
	for _, c := range []struct {
		scale float64
		want  string
	}{{1, "* 0.000100000000"}, {0.01, "* 0.010000000000"}, {100, "* 0.000001000000"}} {
		if q := queryText(11, c.scale); !strings.Contains(q, c.want) || strings.Contains(q, "FRACTION") {
			t.Errorf("Q11 at scale %v lacks %q:\n%s", c.scale, c.want, q)
		}
	}
	for n := 1; n <= nQueries; n++ {
		if q := queryText(n, 1); !strings.HasPrefix(q, "SELECT") && !strings.HasPrefix(q, "WITH") {
			t.Errorf("query %d: %q", n, q)
		}
	}
}

// TestPreflightNoGenerator checks that a machine without the generator is
// told how to install it, unless the scale is already in the cache.
func TestPreflightNoGenerator(t *testing.T) {
	t.Setenv(venvEnv, filepath.Join(t.TempDir(), "venv"))
	w := newW(t, map[string]string{pScale: "0.01"})
	err := w.Preflight()
	if !errors.Is(err, ErrNoGenerator) || !strings.Contains(err.Error(), "make setup") ||
		!strings.Contains(err.Error(), "pip install duckdb==1.4.4 'duckdb-ext-tpch==1.4.4.*'") {
		t.Fatalf("Preflight = %v, want ErrNoGenerator with the install command", err)
	}
	for _, d := range []string{w.dataDir(), w.expectedDir()} {
		if err := os.WriteFile(d+".done", []byte("test\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Preflight(); err != nil {
		t.Errorf("Preflight with the scale cached = %v", err)
	}
}
