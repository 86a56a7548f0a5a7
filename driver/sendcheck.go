package driver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"
)

// The check of an open-loop run's arrivals, as Lancet (USENIX ATC 2019)
// checks each step: the gaps between the send times the clients actually
// issued (each operation's actual start, which lags its intended one when
// a client is busy or a timer fires late), not the pacer's schedule, which
// is exponential or constant by construction. Each client's gaps are
// tested together: a client's own process is Poisson of rate target/n
// (the clients' superposition is then Poisson of the target), and a busy
// client shows in its own gaps first (too few short ones), where the
// merged stream of many clients would hide it.

// ArrivalSample bounds the gaps a run keeps for its check (a reservoir
// over the measured window, shared evenly between the clients): enough
// for the test to reject a uniform or constant spacing every time, and a
// fixed size, so that the test's power does not grow with the run's
// length: a long step is held to the standard of a short one.
const ArrivalSample = 500

// ArrivalAlpha is the level of the Poisson check: a run whose gaps'
// Anderson-Darling p value is below it fails, as a true Poisson run does
// in 5% of runs (a capacity step so failed is unsure and repeated once).
const ArrivalAlpha = 0.05

// MaxConstantSpread is the most a constant run's gaps may spread around
// the intended interval (the median of |gap - interval|/interval): beyond
// it the typical send was half an interval off, as when the clients are
// too busy to hold the spacing and send back to back, or timers wake late
// against a sub-millisecond interval. The median, not a mean, so that one
// stall (already counted in the latencies, from the intended starts) does
// not fail a run. capacity reports it and does not judge by it.
const MaxConstantSpread = 0.5

// ArrivalCheck is what the check of a run's send times found.
type ArrivalCheck struct {
	Process Arrival
	// Gaps is the sample size; MeanGap its mean gap and IntendedGap the
	// pacer's mean gap, per client.
	Gaps        int
	MeanGap     time.Duration
	IntendedGap time.Duration
	// A2 is the Anderson-Darling statistic of the gaps against an
	// exponential of their own mean, P its p value (Poisson only).
	A2, P float64
	// Spread is the median of |gap - IntendedGap|/IntendedGap (constant
	// only).
	Spread float64
	// OK is true when the arrivals pass: P >= ArrivalAlpha, or Spread <=
	// MaxConstantSpread; Why says otherwise.
	OK  bool
	Why string
}

// CheckArrivals checks gaps (in any order) sent by process a, whose
// intended mean gap per client is intended; nil when there are too few
// gaps to test (fewer than 20).
func CheckArrivals(a Arrival, intended time.Duration, gaps []time.Duration) *ArrivalCheck {
	if len(gaps) < 20 || intended <= 0 {
		return nil
	}
	if a == "" {
		a = Constant
	}
	c := &ArrivalCheck{Process: a, Gaps: len(gaps), IntendedGap: intended}
	xs := make([]float64, len(gaps))
	var sum time.Duration
	for i, g := range gaps {
		xs[i] = float64(g)
		sum += g
	}
	c.MeanGap = sum / time.Duration(len(gaps))
	switch a {
	case Poisson:
		c.A2 = ExpAD(xs)
		c.P = ExpADP(c.A2, len(xs))
		c.OK = c.P >= ArrivalAlpha
		if !c.OK {
			c.Why = fmt.Sprintf("arrivals not Poisson (A² = %.2f, p = %.3g, %d gaps)", c.A2, c.P, c.Gaps)
		}
	default:
		devs := make([]float64, len(xs))
		for i, x := range xs {
			devs[i] = math.Abs(x-float64(intended)) / float64(intended)
		}
		slices.Sort(devs)
		c.Spread = devs[len(devs)/2]
		c.OK = c.Spread <= MaxConstantSpread
		if !c.OK {
			c.Why = fmt.Sprintf("arrivals not evenly spaced (median gap %.0f%% off %s, %d gaps)", c.Spread*100, intended, c.Gaps)
		}
	}
	return c
}

// ExpAD is the Anderson-Darling statistic A² of xs against an
// exponential distribution whose mean is estimated as xs' own (Stephens
// 1974's case 3 for the exponential): A² weights the tails, where late
// sends show (a busy client's missing short gaps, a timer's floor), more
// than Kolmogorov-Smirnov's largest gap between the distributions does,
// and it is the test Lancet uses. xs is not changed; a zero gap counts as
// the smallest representable one.
func ExpAD(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var mean float64
	for _, x := range s {
		mean += x
	}
	mean /= float64(n)
	if mean <= 0 {
		return math.Inf(1)
	}
	// z_i = F(x_(i)); ln z_i and ln(1 - z_(n+1-i)) computed without loss
	// in the tails: ln(1 - e^-u) = ln(-expm1(-u)), ln e^-u = -u.
	var acc float64
	for i := range n {
		lo := math.Log(-math.Expm1(-math.Max(s[i]/mean, 1e-300)))
		hi := -s[n-1-i] / mean
		acc += float64(2*i+1) * (lo + hi)
	}
	return -float64(n) - acc/float64(n)
}

// adNullDraws is how many samples ExpADP simulates under the null.
const adNullDraws = 5000

// adNull holds, per sample size, the sorted A² of adNullDraws exponential
// samples of that size.
var adNull sync.Map // int -> []float64

// ExpADP is the p value of A² (ExpAD) from n gaps: the share of
// adNullDraws exponential samples of n, simulated once per n from a fixed
// seed, whose A² is at least a2. A² with the mean estimated is free of the
// true mean but has no closed form, and Stephens' tables give only a few
// points of it (the test checks the simulation's 95% point against his).
func ExpADP(a2 float64, n int) float64 {
	if n < 1 || math.IsNaN(a2) {
		return math.NaN()
	}
	v, ok := adNull.Load(n)
	if !ok {
		rng := rand.New(rand.NewPCG(56, uint64(n)))
		null := make([]float64, adNullDraws)
		xs := make([]float64, n)
		for k := range null {
			for i := range xs {
				xs[i] = rng.ExpFloat64()
			}
			null[k] = ExpAD(xs)
		}
		slices.Sort(null)
		v, _ = adNull.LoadOrStore(n, null)
	}
	null := v.([]float64)
	above := len(null) - sort.SearchFloat64s(null, a2)
	return float64(above+1) / float64(len(null)+1)
}

// gapSample is one client's reservoir of its send gaps in the measured
// window (Vitter's algorithm R), kept by the client's goroutine alone.
type gapSample struct {
	max  int
	seen int
	gaps []time.Duration
	rng  *rand.Rand
}

func newGapSample(max int, seed uint64, client int) *gapSample {
	return &gapSample{max: max, gaps: make([]time.Duration, 0, max), rng: rand.New(rand.NewPCG(seed^0x5e4d, uint64(client)))}
}

// add offers one gap.
func (g *gapSample) add(d time.Duration) {
	g.seen++
	if len(g.gaps) < g.max {
		g.gaps = append(g.gaps, d)
		return
	}
	if j := g.rng.IntN(g.seen); j < g.max {
		g.gaps[j] = d
	}
}

// checkSends checks the gaps the workers' clients sampled once they have
// stopped (a hung client's are missing).
func checkSends(cfg Config, workers []*worker) *ArrivalCheck {
	var gaps []time.Duration
	for _, w := range workers {
		w.mu.Lock()
		gaps = append(gaps, w.gaps...)
		w.mu.Unlock()
	}
	// Each client's reservoir is a random sample of its gaps, so keeping
	// the first clients' whole when the shares overshoot stays one.
	gaps = gaps[:min(len(gaps), ArrivalSample)]
	intended := time.Duration(float64(time.Second) / (cfg.TargetRate / float64(len(workers))))
	return CheckArrivals(cfg.Arrival, intended, gaps)
}
