package hist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestPercentileCICoverage: the 95% interval of p99 (and p50) from a
// window's histogram holds the true percentile of a known distribution
// (log-normal latencies, median 1 ms) in 0.95 ± 0.02 of windows. With
// few values beyond the percentile the ranks are coarse and the interval
// holds it more often (500 values for p99: 0.98), which is logged.
func TestPercentileCICoverage(t *testing.T) {
	const trials = 1500
	const mu, sigma = 0.0, 0.8 // ln ms
	for _, c := range []struct {
		q      float64
		n      int
		coarse bool
	}{{99, 2000, false}, {99, 10_000, false}, {99, 500, true}, {50, 300, false}} {
		t.Run(fmt.Sprintf("p%g of %d", c.q, c.n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(62, uint64(c.n)))
			z := map[float64]float64{99: 2.326348, 50: 0}[c.q]
			truthUs := math.Exp(mu+sigma*z) * 1e3
			covered, missing := 0, 0
			for range trials {
				h := New()
				for range c.n {
					ms := math.Exp(mu + sigma*rng.NormFloat64())
					Record(h, time.Duration(ms*float64(time.Millisecond)))
				}
				ci, ok := PercentileCI(h, c.q)
				if !ok || ci.Open {
					missing++
					continue
				}
				if ci.Lo <= truthUs && truthUs <= ci.Hi {
					covered++
				}
			}
			cov := float64(covered) / float64(trials-missing)
			t.Logf("p%g of %d log-normal latencies: the 95%% interval held the truth (%.0f µs) in %.3f of %d windows", c.q, c.n, truthUs, cov, trials-missing)
			if missing > 0 || cov < 0.93 || cov > 0.97 && !c.coarse {
				t.Errorf("coverage %.3f (%d without an interval), want 0.95 ± 0.02", cov, missing)
			}
		})
	}
}

// TestPercentileCIOpen: a window with too few values for p99's upper end
// still bounds it below, and says its interval is open.
func TestPercentileCIOpen(t *testing.T) {
	h := New()
	for i := 1; i <= 264; i++ {
		Record(h, time.Duration(i)*time.Millisecond)
	}
	ci, ok := PercentileCI(h, 99)
	if !ok || !ci.Open || ci.Lo < 250_000 || ci.Hi < 263_000 {
		t.Errorf("p99 of 1..264 ms: %+v ok %v, want open above, from about 255 ms", ci, ok)
	}
	if ci, ok := PercentileCI(New(), 99); ok {
		t.Errorf("an empty histogram: %+v", ci)
	}
}

// TestOrderRanks: too few values for p99 give no interval; otherwise l
// is the largest rank and u the smallest whose binomial tails are each at
// most 2.5%.
func TestOrderRanks(t *testing.T) {
	for _, c := range []struct {
		n  int64
		q  float64
		ok bool
	}{{50, 0.99, false}, {300, 0.99, false}, {400, 0.99, true}, {1000, 0.5, true}, {1000, 0.99, true}, {100_000, 0.999, true}} {
		l, u, ok := orderRanks(c.n, c.q, 0.95)
		if ok != c.ok {
			t.Errorf("n=%d q=%g: ok %v, want %v", c.n, c.q, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		b := distuv.Binomial{N: float64(c.n), P: c.q}
		if !(b.CDF(float64(l-1)) <= 0.025 && b.CDF(float64(l)) > 0.025) {
			t.Errorf("n=%d q=%g: l=%d is not the largest rank with P(B < l) <= 2.5%%", c.n, c.q, l)
		}
		if !(b.Survival(float64(u-1)) <= 0.025 && b.Survival(float64(u-2)) > 0.025) {
			t.Errorf("n=%d q=%g: u=%d is not the smallest rank with P(B >= u) <= 2.5%%", c.n, c.q, u)
		}
	}
}

// TestCertainlyAboveHoldsWhateverFollows: once CertainlyAbove says a
// window's first values put its p99's lower end above the bound, every
// window of at most n values that holds them says so too, whatever the
// rest are: here the best the rest could be (all fast), or a window
// ended early with none of them. Seeded, over 200 windows whose share of
// slow values lies at and around the percentile's edge.
func TestCertainlyAboveHoldsWhateverFollows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const bound = 20_000.0 // µs
	fired := 0
	for trial := range 200 {
		n := int64(200 + rng.IntN(5_000))
		slowShare := 0.002 + 0.05*rng.Float64()
		h := New()
		for i := int64(0); i < n; i++ {
			v := int64(1_000_000 + rng.IntN(5_000_000)) // 1-6 ms
			if rng.Float64() < slowShare {
				v = int64(bound*1e3) + int64(rng.IntN(50_000_000)) // past the bound
			}
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			if (i+1)%100 != 0 || !CertainlyAbove(h, 99, bound, n) {
				continue // checked every 100 values, as a step checks every tick
			}
			fired++
			early, _ := PercentileCI(h, 99)
			rest := hdrCopy(t, h)
			if err := rest.RecordValues(1_000, n-i-1); err != nil { // 1 µs each: the best the rest could be
				t.Fatal(err)
			}
			full, _ := PercentileCI(rest, 99)
			if early.Lo <= bound || full.Lo <= bound {
				t.Fatalf("trial %d: CertainlyAbove at %d of %d values, yet the p99's lower end is %.0fµs ended there and %.0fµs with the rest fast, not above %.0fµs",
					trial, i+1, n, early.Lo, full.Lo, bound)
			}
			break
		}
	}
	if fired < 25 {
		t.Fatalf("CertainlyAbove fired in %d of 200 windows: the test checks too little", fired)
	}
	t.Logf("fired early in %d of 200 windows", fired)
}

// hdrCopy is a copy of h.
func hdrCopy(t *testing.T, h *hdr.Histogram) *hdr.Histogram {
	t.Helper()
	c := New()
	c.Merge(h)
	return c
}

// TestOrderRanksAboveGrowsWithN: the count of values above the lower
// rank (n-l) never shrinks as n grows, which CertainlyAbove's promise
// for a window that ends with fewer values than planned rests on.
func TestOrderRanksAboveGrowsWithN(t *testing.T) {
	before := int64(0)
	for n := int64(1); n <= 3000; n++ {
		l, _, _ := orderRanks(n, 0.99, 0.95)
		if n-l < before {
			t.Fatalf("n-l fell from %d to %d at n = %d", before, n-l, n)
		}
		before = n - l
	}
}
