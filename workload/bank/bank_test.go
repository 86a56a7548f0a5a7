package bank

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

func newW(t *testing.T, params map[string]string) *Workload {
	t.Helper()
	w, err := Spec().Build(params)
	if err != nil {
		t.Fatalf("Build(%v): %v", params, err)
	}
	return w.(*Workload)
}

func TestSpec(t *testing.T) {
	s := Spec()
	if s.Name != "bank" || s.Doc == "" || strings.Contains(s.Doc, "\n") {
		t.Errorf("Name %q Doc %q: want bank and one line", s.Name, s.Doc)
	}
	w := newW(t, nil)
	if got := w.Ops(); !slices.Equal(got, []string{"transfer"}) {
		t.Errorf("Ops() = %v, want [transfer]", got)
	}
	for _, p := range s.Params {
		if err := p.Check(); err != nil {
			t.Error(err)
		}
	}
	v, _ := s.Resolve(nil)
	p := v.Map()
	if want := []string{pAccounts, pInitial}; !slices.Equal(slices.Sorted(maps.Keys(p)), want) {
		t.Errorf("recorded parameters %v, want %v (the seed is unset)", slices.Sorted(maps.Keys(p)), want)
	}
	if p[pAccounts] != "10000" || p[pInitial] != "1000" || p[pSeed] != "" {
		t.Errorf("defaults %v", p)
	}
	if w.Total() != 10_000_000 {
		t.Errorf("Total() = %d, want 10000000", w.Total())
	}
	w = newW(t, map[string]string{pAccounts: "2", pInitial: "0", pSeed: "-7"})
	if w.accounts != 2 || w.initial != 0 || w.Total() != 0 || !w.seeded || w.seed != -7 {
		t.Errorf("smallest values: %+v", w)
	}
	w = newW(t, map[string]string{pAccounts: strconv.Itoa(math.MaxInt32)})
	if w.accounts != math.MaxInt32 {
		t.Errorf("largest accounts: %d", w.accounts)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string // substrings of the error
	}{
		{"one account", map[string]string{pAccounts: "1"}, []string{"accounts 1 is out of range: it must be from 2 to 2147483647"}},
		{"no accounts", map[string]string{pAccounts: "0"}, []string{"accounts 0 is out of range"}},
		{"negative accounts", map[string]string{pAccounts: "-10"}, []string{"accounts -10 is out of range"}},
		{"accounts text", map[string]string{pAccounts: "many"}, []string{`accounts "many" is not a whole number`}},
		{"accounts empty", map[string]string{pAccounts: ""}, []string{`accounts "" is not a whole number`}},
		{"accounts beyond 32-bit ids", map[string]string{pAccounts: strconv.Itoa(math.MaxInt32 + 1)}, []string{"accounts 2147483648 is out of range: it must be from 2 to 2147483647"}},
		{"negative balance", map[string]string{pInitial: "-1"}, []string{"initial_balance -1 is out of range: it must be at least 0"}},
		{"balance in exponent form", map[string]string{pInitial: "1e3"}, []string{`initial_balance "1e3" is not a whole number`}},
		{"total overflows", map[string]string{pAccounts: "10", pInitial: strconv.FormatInt(math.MaxInt64/5, 10)}, []string{"workload bank: initial_balance", "overflows"}},
		{"seed text", map[string]string{pSeed: "x"}, []string{`seed "x" is not a whole number`}},
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
	for _, tc := range []struct {
		d    engine.Dialect
		want [nStmts]string
	}{
		{engine.Postgres, [nStmts]string{
			"SELECT balance FROM bank_accounts WHERE id = $1 FOR UPDATE",
			"UPDATE bank_accounts SET balance = $1 WHERE id = $2",
			"SELECT balance FROM bank_accounts WHERE id = $1",
		}},
		{engine.MySQL, [nStmts]string{
			"SELECT balance FROM bank_accounts WHERE id = ? FOR UPDATE",
			"UPDATE bank_accounts SET balance = ? WHERE id = ?",
			"SELECT balance FROM bank_accounts WHERE id = ?",
		}},
	} {
		if got := statements(tc.d); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.d, got, tc.want)
		}
	}
	if createTable != "CREATE TABLE bank_accounts (id INT NOT NULL PRIMARY KEY, balance BIGINT NOT NULL)" {
		t.Errorf("DDL: %s", createTable)
	}
	if got := string(appendInsert(nil, 9, 3, 1000)); got != "INSERT INTO bank_accounts (id, balance) VALUES (9, 1000), (10, 1000), (11, 1000)" {
		t.Errorf("insert: %s", got)
	}
}

// TestPick checks that transfers are between two distinct accounts in
// range, that every ordered pair occurs, and that amounts span [1, 100].
func TestPick(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int64{2, 3, 5} {
		pairs := map[[2]int64]int{}
		amounts := map[int64]bool{}
		for range 20000 {
			from, to, amount := pick(rng, n)
			if from == to || from < 1 || to < 1 || from > n || to > n {
				t.Fatalf("n=%d: transfer %d -> %d", n, from, to)
			}
			if amount < 1 || amount > maxAmount {
				t.Fatalf("amount %d", amount)
			}
			pairs[[2]int64{from, to}]++
			amounts[amount] = true
		}
		if want := int(n * (n - 1)); len(pairs) != want {
			t.Errorf("n=%d: %d distinct ordered pairs, want %d", n, len(pairs), want)
		}
		expect := 20000 / float64(n*(n-1))
		for p, c := range pairs {
			if math.Abs(float64(c)-expect) > 0.15*expect {
				t.Errorf("n=%d: pair %v drawn %d times, expected about %.0f", n, p, c, expect)
			}
		}
		if len(amounts) != maxAmount {
			t.Errorf("n=%d: %d distinct amounts, want %d", n, len(amounts), maxAmount)
		}
	}
}
