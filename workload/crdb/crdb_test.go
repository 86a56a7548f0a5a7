package crdb

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   workload.Spec
		params map[string]string
		want   []string // substrings of the error
	}{
		{"read_percent above 100", KVSpec(), map[string]string{pReadPercent: "101"}, []string{"read_percent 101 is out of range: it must be from 0 to 100%"}},
		{"read_percent negative", KVSpec(), map[string]string{pReadPercent: "-1"}, []string{"read_percent -1 is out of range"}},
		{"read_percent text", KVSpec(), map[string]string{pReadPercent: "half"}, []string{`read_percent "half" is not a whole percentage`}},
		{"block_bytes 0", KVSpec(), map[string]string{pBlockBytes: "0"}, []string{"block_bytes 0 is out of range: it must be from 1 to 1MiB"}},
		{"block_bytes too large", KVSpec(), map[string]string{pBlockBytes: "2MiB"}, []string{"block_bytes 2MiB is out of range"}},
		{"block_bytes text", KVSpec(), map[string]string{pBlockBytes: "big"}, []string{`block_bytes "big" is not a size`}},
		{"batch 0", KVSpec(), map[string]string{pBatch: "0"}, []string{"batch 0 is out of range: it must be from 1 to 1000"}},
		{"batch too large", KVSpec(), map[string]string{pBatch: "1001"}, []string{pBatch, "from 1 to 1000"}},
		{"upsert too large", KVSpec(), map[string]string{pBatch: "100", pBlockBytes: "1048576"}, []string{"workload kv: batch 100 x block_bytes 1048576", "max_allowed_packet"}},
		{"distribution unknown", KVSpec(), map[string]string{pDistribution: "uniform"}, []string{`distribution "uniform" must be hash, sequential or zipfian`}},
		{"kv seed text", KVSpec(), map[string]string{pSeed: "x"}, []string{`seed "x" is not a whole number`}},
		{"one account", BankSpec(), map[string]string{pRows: "1"}, []string{"rows 1 is out of range: it must be from 2 to 2147483647"}},
		{"payload negative", BankSpec(), map[string]string{pPayload: "-1"}, []string{`payload_bytes "-1" is not a size`}},
		{"payload too large", BankSpec(), map[string]string{pPayload: "65537"}, []string{"payload_bytes 65537 is out of range: it must be from 0 to 64KiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.spec.Build(tc.params)
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
	for _, p := range []string{"0", "100", " 50 ", "50%"} {
		if _, err := KVSpec().Build(map[string]string{pReadPercent: p}); err != nil {
			t.Errorf("read_percent %q: %v", p, err)
		}
	}
	if w := newKVTest(t, map[string]string{pBlockBytes: "1KiB", pReadPercent: "95"}); w.blockBytes != 1024 || w.readPercent != 95 {
		t.Errorf("block_bytes 1KiB, read_percent 95: %d bytes, %d%%", w.blockBytes, w.readPercent)
	}
	b, err := BankSpec().Build(map[string]string{pPayload: "0", pRows: "2"})
	if err != nil || b.(*Bank).payload != 0 || b.(*Bank).rows != 2 {
		t.Errorf("crdb-bank with payload_bytes 0 and 2 rows: %v", err)
	}
}

// TestParamsCheck checks every declared parameter of the three workloads.
func TestParamsCheck(t *testing.T) {
	for _, s := range []workload.Spec{KVSpec(), BankSpec(), MovrSpec()} {
		for _, p := range s.Params {
			if err := p.Check(); err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
	}
}

func newKVTest(t *testing.T, params map[string]string) *KV {
	t.Helper()
	w, err := KVSpec().Build(params)
	if err != nil {
		t.Fatal(err)
	}
	return w.(*KV)
}

// TestKeys checks each distribution: hashed keys are distinct, spread and
// non-negative; sequential keys count up; reads pick only keys of claimed
// sequence numbers; a zipfian batch holds no key twice; batches are sorted.
func TestKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))

	w := newKVTest(t, map[string]string{pDistribution: distSequential})
	g := w.newKeyGen(rng)
	if k := g.readKey(); k != 0 {
		t.Errorf("read before any write: %d, want 0", k)
	}
	for i := range int64(100) {
		if k := g.writeKey(); k != i {
			t.Fatalf("sequential write %d: key %d", i, k)
		}
	}
	for range 1000 {
		if k := g.readKey(); k < 0 || k >= 100 {
			t.Fatalf("sequential read %d outside the 100 written", k)
		}
	}

	w = newKVTest(t, nil)
	g = w.newKeyGen(rng)
	written := map[int64]bool{}
	var high int
	for range 10000 {
		k := g.writeKey()
		if k < 0 || written[k] {
			t.Fatalf("hashed key %d negative or repeated", k)
		}
		written[k] = true
		if k > 1<<62 {
			high++
		}
	}
	if high < 4000 || high > 6000 { // half of [0, 2^63) lies above 2^62
		t.Errorf("%d of 10000 hashed keys above 2^62, want about 5000", high)
	}
	for range 10000 {
		if k := g.readKey(); !written[k] {
			t.Fatalf("hashed read of key %d, never written", k)
		}
	}

	w = newKVTest(t, map[string]string{pDistribution: distZipfian})
	g = w.newKeyGen(rng)
	counts := map[int64]int{}
	keys := make([]int64, 20)
	for range 500 {
		g.writeKeys(keys)
		if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
			t.Fatalf("zipfian batch %v: not sorted or a key twice", keys)
		}
		for _, k := range keys {
			counts[k]++
		}
	}
	if counts[0] < counts[1] || counts[1] < counts[10] || counts[0] < 400 { // at most once per batch of 500
		t.Errorf("zipfian counts of keys 0, 1, 10: %d, %d, %d: want hot low keys", counts[0], counts[1], counts[10])
	}
	if w.seq.Load() < 10000 {
		t.Errorf("sequence %d after 10000 zipfian writes", w.seq.Load())
	}
}

func TestStatements(t *testing.T) {
	r, wr := kvStatements(engine.Postgres, 2)
	if r != "SELECT k, v FROM kv WHERE k IN ($1, $2)" ||
		wr != "INSERT INTO kv (k, v) VALUES ($1, $2), ($3, $4) ON CONFLICT (k) DO UPDATE SET v = excluded.v" {
		t.Errorf("postgres:\n%s\n%s", r, wr)
	}
	r, wr = kvStatements(engine.MySQL, 1)
	if r != "SELECT k, v FROM kv WHERE k IN (?)" || wr != "INSERT INTO kv (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)" {
		t.Errorf("mysql:\n%s\n%s", r, wr)
	}
	if got := kvDDL(engine.MySQL)[1]; got != "CREATE TABLE kv (k BIGINT NOT NULL PRIMARY KEY, v LONGBLOB NOT NULL)" {
		t.Errorf("mysql DDL: %s", got)
	}
	if got := transferStatement(engine.Postgres); got != "UPDATE crdb_bank SET balance = CASE id WHEN $1 THEN balance - $2 WHEN $3 THEN balance + $4 END WHERE id IN ($5, $6)" {
		t.Errorf("transfer: %s", got)
	}
	got := string(appendAccounts(nil, rand.New(rand.NewPCG(1, 1)), 3, 7, 2))
	if !strings.HasPrefix(got, "INSERT INTO crdb_bank (id, balance, payload) VALUES (7, 0, '") || len(got) != len("INSERT INTO crdb_bank (id, balance, payload) VALUES (7, 0, 'abc'), (8, 0, 'abc')") {
		t.Errorf("insert: %s", got)
	}
}

func TestPickTransfer(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pairs := map[[2]int64]bool{}
	for range 5000 {
		from, to, amount := pickTransfer(rng, 3)
		if from == to || from < 0 || to < 0 || from > 2 || to > 2 || amount < 0 || amount >= maxTransfer {
			t.Fatalf("transfer %d -> %d of %d", from, to, amount)
		}
		pairs[[2]int64{from, to}] = true
	}
	if len(pairs) != 6 {
		t.Errorf("%d ordered pairs of 3 accounts, want 6", len(pairs))
	}
}
