package tpcc

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
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
	if s.Name != "tpcc" || !strings.Contains(s.Doc, "TPC-C-like, not audited") || strings.Contains(s.Doc, "\n") {
		t.Errorf("Name %q Doc %q: want tpcc, one line, TPC-C-like, not audited", s.Name, s.Doc)
	}
	w := newW(t, nil)
	if got := w.Ops(); !slices.Equal(got, []string{"new_order", "payment", "order_status", "delivery", "stock_level"}) {
		t.Errorf("Ops() = %v", got)
	}
	v, _ := s.Resolve(nil)
	p := v.Map()
	want := slices.DeleteFunc(s.ParamNames(), func(n string) bool { return n == pSeed }) // unset: random
	if !slices.Equal(slices.Sorted(maps.Keys(p)), want) {
		t.Errorf("recorded parameters %v, want %v", slices.Sorted(maps.Keys(p)), want)
	}
	if w.warehouses != 1 || w.keying || w.items != 100000 || w.customers != 3000 || w.firstNewOrder() != 2101 || w.newOrders() != 900 {
		t.Errorf("defaults: %+v", w)
	}
	if !validCLastDelta(w.cLastLoad, w.cLastRun) {
		t.Errorf("default C_LAST constants %d, %d break clause 2.1.6.1", w.cLastLoad, w.cLastRun)
	}
	w = newW(t, map[string]string{pWarehouses: "4", pKeying: "true", pSeed: "5"})
	if w.warehouses != 4 || !w.keying || !w.seeded || w.districts() != 40 {
		t.Errorf("overrides: %+v", w)
	}
	// About 100 MB per warehouse, as the issue sizes it; at least the
	// stock's 100,000 rows of 300 bytes.
	if b := w.EstimatedBytes() / 4; b < 60<<20 || b > 120<<20 {
		t.Errorf("EstimatedBytes per warehouse = %d", b)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string
	}{
		{"no warehouse", map[string]string{pWarehouses: "0"}, []string{"warehouses 0 is out of range: it must be from 1 to 100000"}},
		{"negative warehouses", map[string]string{pWarehouses: "-2"}, []string{"warehouses -2 is out of range"}},
		{"too many warehouses", map[string]string{pWarehouses: "100001"}, []string{"warehouses 100001 is out of range"}},
		{"warehouses text", map[string]string{pWarehouses: "many"}, []string{`warehouses "many" is not a whole number`}},
		{"keying text", map[string]string{pKeying: "sometimes"}, []string{`keying_time "sometimes" is not true or false`}},
		{"C_LAST delta too small", map[string]string{pCLastLoad: "100", pCLastRun: "150"}, []string{"workload tpcc: ", pCLastLoad, pCLastRun, "2.1.6.1"}},
		{"C_LAST delta 96", map[string]string{pCLastLoad: "0", pCLastRun: "96"}, []string{"not 96 or 112"}},
		{"C_LAST beyond A", map[string]string{pCLastRun: "256"}, []string{"c_last_run 256 is out of range: it must be from 0 to 255"}},
		{"C_LAST at load beyond A", map[string]string{pCLastLoad: "256"}, []string{"c_last_load 256 is out of range: it must be from 0 to 255"}},
		{"C_ID beyond A", map[string]string{pCID: "1024"}, []string{"c_id 1024 is out of range: it must be from 0 to 1023"}},
		{"OL_I_ID negative", map[string]string{pOLIID: "-1"}, []string{"ol_i_id -1 is out of range: it must be from 0 to 8191"}},
		{"seed text", map[string]string{pSeed: "x"}, []string{`seed "x" is not a whole number`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Spec().Build(tc.params)
			if err == nil {
				t.Fatalf("Build(%v) succeeded", tc.params)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
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

func TestCLastDelta(t *testing.T) {
	for _, tc := range []struct {
		load, run int64
		ok        bool
	}{{0, 65, true}, {200, 81, true}, {0, 119, true}, {0, 64, false}, {0, 120, false}, {10, 106, false}, {200, 88, false}, {5, 5, false}} {
		if got := validCLastDelta(tc.load, tc.run); got != tc.ok {
			t.Errorf("validCLastDelta(%d, %d) = %v", tc.load, tc.run, got)
		}
	}
}

// TestNURand draws a million values of NURand for C_LAST and C_ID and
// compares their histogram with the exact distribution of the formula
// (every pair of its two uniform draws enumerated) by a chi-square test;
// the same draws are far from uniform.
func TestNURand(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, c, x, y int64
	}{{"C_LAST", aCLast, 223, 0, 999}, {"C_ID", aCID, 259, 1, 3000}} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.y - tc.x + 1
			want := make([]float64, n)
			for a := int64(0); a <= tc.a; a++ {
				for b := tc.x; b <= tc.y; b++ {
					want[((a|b)+tc.c)%n]++
				}
			}
			pairs := float64((tc.a + 1) * n)
			const draws = 1_000_000
			got := make([]float64, n)
			r := rand.New(rand.NewPCG(1, 2))
			for range draws {
				v := nurand(r, tc.a, tc.c, tc.x, tc.y)
				if v < tc.x || v > tc.y {
					t.Fatalf("NURand %d outside [%d, %d]", v, tc.x, tc.y)
				}
				got[v-tc.x]++
			}
			var chi, chiUniform float64
			df := 0
			for i := range got {
				e := want[i] / pairs * draws
				if e == 0 {
					if got[i] != 0 {
						t.Fatalf("value %d drawn %v times, impossible by the formula", int64(i)+tc.x, got[i])
					}
					continue
				}
				chi += (got[i] - e) * (got[i] - e) / e
				u := float64(draws) / float64(n)
				chiUniform += (got[i] - u) * (got[i] - u) / u
				df++
			}
			df--
			// chi-square with df degrees of freedom: mean df, sd sqrt(2 df).
			limit := float64(df) + 5*math.Sqrt(2*float64(df))
			if chi > limit {
				t.Errorf("chi-square vs the formula %.0f > %.0f (df %d)", chi, limit, df)
			}
			if chiUniform < 10*limit {
				t.Errorf("chi-square vs uniform only %.0f: NURand looks uniform", chiUniform)
			}
			t.Logf("chi-square vs formula %.0f (df %d), vs uniform %.0f", chi, df, chiUniform)
		})
	}
	// OL_I_ID: A = 8191 over the 100,000 items, in range.
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		if v := nurand(r, aOLIID, 7911, 1, specItems); v < 1 || v > specItems {
			t.Fatalf("OL_I_ID %d", v)
		}
	}
}

func TestLastNames(t *testing.T) {
	for n, want := range map[int64]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 40: "BARPRESBAR", 123: "OUGHTABLEPRI"} {
		if got := lastName(n); got != want {
			t.Errorf("lastName(%d) = %q, want %q", n, got, want)
		}
	}
	seen := map[string]bool{}
	for n := range int64(1000) {
		seen[lastName(n)] = true
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct names of 1000 numbers", len(seen))
	}
}

// TestMix deals 10,000 transactions and checks each type's share is
// within 1% of HammerDB's mix.
func TestMix(t *testing.T) {
	d := newDeck()
	r := rand.New(rand.NewPCG(7, 8))
	var counts [nOps]int
	const draws = 10000
	for range draws {
		counts[d.deal(r)]++
	}
	for op, n := range counts {
		share, want := float64(n)/draws, float64(mix[op])/23
		if math.Abs(share-want) > 0.01 {
			t.Errorf("%s: share %.4f, want %.4f within 0.01", opNames[op], share, want)
		}
	}
	// The deck is shuffled: two decks do not deal the same order.
	a, b := make([]int, 23), make([]int, 23)
	for i := range a {
		a[i] = d.deal(r)
	}
	for i := range b {
		b[i] = d.deal(r)
	}
	if slices.Equal(a, b) {
		t.Errorf("two decks dealt the same order %v", a)
	}
}

func TestStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	original := 0
	for range 10000 {
		s := string(appendData(nil, r))
		if len(s) < 26 || len(s) > 50 {
			t.Fatalf("data %q of length %d", s, len(s))
		}
		if strings.Contains(s, "ORIGINAL") {
			original++
		}
	}
	if original < 900 || original > 1100 {
		t.Errorf("%d of 10000 data strings hold ORIGINAL, want about 1000", original)
	}
	for _, tc := range []struct {
		v     int64
		scale int
		want  string
	}{{-1000, 2, "-10.00"}, {5, 2, "0.05"}, {30000000, 2, "300000.00"}, {1234, 4, "0.1234"}, {0, 4, "0.0000"}} {
		if got := string(appendFixed(nil, tc.v, tc.scale)); got != tc.want {
			t.Errorf("appendFixed(%d, %d) = %q, want %q", tc.v, tc.scale, got, tc.want)
		}
	}
}

func TestRebind(t *testing.T) {
	q := statements[sCustomerDelivered]
	if got := rebind(engine.MySQL, q); got != q {
		t.Errorf("mysql: %s", got)
	}
	want := "UPDATE customer SET c_balance = c_balance + $1, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4"
	if got := rebind(engine.Postgres, q); got != want {
		t.Errorf("postgres: %s", got)
	}
	for i, q := range statements {
		if q == "" {
			t.Errorf("statement %d is empty", i)
		}
	}
	// The shaped statements of New-Order's lines.
	if got, want := rebind(engine.Postgres, stockUpdate(engine.Postgres, 1)),
		"UPDATE stock SET s_quantity = CASE s_i_id WHEN $1 THEN $2::int END, s_ytd = s_ytd + CASE s_i_id WHEN $3 THEN $4::int END, "+
			"s_order_cnt = s_order_cnt + CASE s_i_id WHEN $5 THEN $6::int END, s_remote_cnt = s_remote_cnt + CASE s_i_id WHEN $7 THEN $8::int END "+
			"WHERE s_w_id = $9 AND s_i_id IN ($10)"; got != want {
		t.Errorf("stock update:\n got %s\nwant %s", got, want)
	}
	if got := stockUpdate(engine.MySQL, 2); strings.Count(got, "?") != 9*2+1 || strings.Contains(got, "::") {
		t.Errorf("stock update on MySQL: %s", got)
	}
	if got := itemsQuery(3); !strings.HasSuffix(got, "WHERE i_id IN (?, ?, ?)") {
		t.Errorf("items: %s", got)
	}
	if got := orderLinesInsert(2); strings.Count(got, "?") != 18 || !strings.HasSuffix(got, "?), (?, ?, ?, ?, ?, ?, ?, ?, ?)") {
		t.Errorf("order lines: %s", got)
	}
}

// TestNewOrderInput checks New-Order's inputs: 5-15 lines sorted by
// warehouse and item, about 1% with the unused item, about 1% remote lines
// with several warehouses and none with one.
func TestNewOrderInput(t *testing.T) {
	for _, wh := range []string{"1", "3"} {
		w := newW(t, map[string]string{pWarehouses: wh, pSeed: "1"})
		c := &Client{w: w, rng: w.newRand(streamClient, 0), wid: 1, did: 1}
		var orders, rollbacks, lines, remote int
		for range 20000 {
			in := c.newOrderInput()
			orders++
			if len(in.lines) < 5 || len(in.lines) > 15 {
				t.Fatalf("%d lines", len(in.lines))
			}
			for i, l := range in.lines {
				lines++
				if l.supplyW != 1 {
					remote++
				}
				if l.item == w.items+1 {
					rollbacks++
				}
				if p := in.lines[max(i-1, 0)]; i > 0 && (l.supplyW < p.supplyW || l.supplyW == p.supplyW && l.item < p.item) {
					t.Fatalf("lines not sorted by warehouse and item: %+v", in.lines)
				}
			}
		}
		if share := float64(rollbacks) / float64(orders); share < 0.007 || share > 0.013 {
			t.Errorf("%s warehouses: %.4f of orders roll back, want 0.01", wh, share)
		}
		share := float64(remote) / float64(lines)
		if wh == "1" && remote != 0 || wh == "3" && (share < 0.008 || share > 0.012) {
			t.Errorf("%s warehouses: %.4f of lines remote", wh, share)
		}
	}
}

// TestThinkTime checks the keying_time waits: think times are
// exponential with the specification's mean, capped at 10 times it.
func TestThinkTime(t *testing.T) {
	w := newW(t, map[string]string{pKeying: "true", pSeed: "3"})
	c := &Client{w: w, rng: w.newRand(streamClient, 0)}
	for op := range nOps {
		var sum float64
		const draws = 20000
		for range draws {
			d := c.think(op)
			if d < 0 || d > 10*thinkTime[op] {
				t.Fatalf("%s: think time %v outside [0, %v]", opNames[op], d, 10*thinkTime[op])
			}
			sum += d.Seconds()
		}
		if mean := sum / draws; math.Abs(mean-thinkTime[op].Seconds()) > 0.03*thinkTime[op].Seconds() {
			t.Errorf("%s: mean think time %.2fs, want %v", opNames[op], mean, thinkTime[op])
		}
	}
	if keyingTime[opNewOrder].Seconds() != 18 || keyingTime[opPayment].Seconds() != 3 || thinkTime[opDelivery].Seconds() != 5 {
		t.Errorf("keying %v, think %v", keyingTime, thinkTime)
	}
}
