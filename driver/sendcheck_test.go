package driver

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestExpADKnownDistributions: over many seeded samples, the Poisson
// check (ExpAD, ExpADP at ArrivalAlpha) rejects exponential gaps at about
// its level, whatever their mean, and rejects the spacings a lagging
// client sends (uniform, constant, exponential above a floor) nearly
// always.
func TestExpADKnownDistributions(t *testing.T) {
	const samples, n = 400, 200
	for _, c := range []struct {
		name           string
		draw           func(rng *rand.Rand) float64
		minRej, maxRej float64
	}{
		{"exponential, mean 1", func(rng *rand.Rand) float64 { return rng.ExpFloat64() }, 0.02, 0.08},
		{"exponential, mean 3ms", func(rng *rand.Rand) float64 { return 3e6 * rng.ExpFloat64() }, 0.02, 0.08},
		{"uniform over twice the mean", func(rng *rand.Rand) float64 { return 2 * rng.Float64() }, 0.95, 1},
		{"constant with 1% jitter", func(rng *rand.Rand) float64 { return 1 + 0.01*rng.NormFloat64() }, 1, 1},
		{"exponential above a floor of half the mean", func(rng *rand.Rand) float64 { return 0.5 + 0.5*rng.ExpFloat64() }, 0.95, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2019, 56))
			xs := make([]float64, n)
			rejected := 0
			for range samples {
				for i := range xs {
					xs[i] = c.draw(rng)
				}
				if ExpADP(ExpAD(xs), n) < ArrivalAlpha {
					rejected++
				}
			}
			rate := float64(rejected) / samples
			t.Logf("%s: rejected %d of %d samples of %d gaps (%.3f) at alpha %.2f", c.name, rejected, samples, n, rate, ArrivalAlpha)
			if rate < c.minRej || rate > c.maxRej {
				t.Errorf("rejection rate %.3f, want within [%.2f, %.2f]", rate, c.minRej, c.maxRej)
			}
		})
	}
}

// TestExpADPMatchesStephens: the simulated null puts the modified
// statistic A²(1 + 0.6/n) = 1.321 at p about 0.05 and 1.959 at about
// 0.01 (Stephens' table for the exponential with estimated mean,
// D'Agostino and Stephens 1986, table 4.14).
func TestExpADPMatchesStephens(t *testing.T) {
	for _, c := range []struct {
		n         int
		modified  float64
		wantP, by float64
	}{
		{100, 1.321, 0.05, 0.01},
		{500, 1.321, 0.05, 0.01},
		{500, 1.959, 0.01, 0.004},
		{500, 0.736, 0.25, 0.03},
	} {
		p := ExpADP(c.modified/(1+0.6/float64(c.n)), c.n)
		if math.Abs(p-c.wantP) > c.by {
			t.Errorf("n %d, A*=%.3f: p %.4f, want %.2f ± %.3f", c.n, c.modified, p, c.wantP, c.by)
		}
	}
}

// TestCheckArrivals: what a run's check records and when it fails.
func TestCheckArrivals(t *testing.T) {
	const gap = time.Millisecond
	rng := rand.New(rand.NewPCG(3, 2))
	gaps := func(f func() time.Duration) []time.Duration {
		out := make([]time.Duration, ArrivalSample)
		for i := range out {
			out[i] = f()
		}
		return out
	}
	exp := gaps(func() time.Duration { return time.Duration(rng.ExpFloat64() * float64(gap)) })
	even := gaps(func() time.Duration { return gap + time.Duration(rng.NormFloat64()*float64(gap)/20) })
	bunched := gaps(func() time.Duration { return time.Duration(rng.IntN(2)) * 2 * gap })
	for _, c := range []struct {
		name  string
		a     Arrival
		gaps  []time.Duration
		nilOK bool
		ok    bool
		why   string
	}{
		{"poisson sends", Poisson, exp, false, true, ""},
		{"even sends checked as poisson", Poisson, even, false, false, "arrivals not Poisson (A² = "},
		{"even sends", Constant, even, false, true, ""},
		{"the default is constant", "", even, false, true, ""},
		{"bunched sends", Constant, bunched, false, false, "arrivals not evenly spaced (median gap 100% off 1ms"},
		{"too few to test", Poisson, exp[:10], true, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CheckArrivals(c.a, gap, c.gaps)
			if c.nilOK {
				if got != nil {
					t.Fatalf("check %+v, want none", got)
				}
				return
			}
			if got == nil {
				t.Fatal("no check")
			}
			if got.OK != c.ok || got.Gaps != len(c.gaps) || got.IntendedGap != gap || len(got.Why) < len(c.why) || got.Why[:len(c.why)] != c.why {
				t.Errorf("check %+v, want ok %v and a reason starting %q", got, c.ok, c.why)
			}
		})
	}
}

// TestOpenRunRecordsItsArrivals: a paced run records the check of the
// sends its clients actually made: a Poisson run its A² and p value, a
// constant run its spread; and a client too slow for its schedule sends
// back to back, which the Poisson check rejects (a busier machine only
// makes the sends lag more). Whether the quick clients' sends pass is
// the machine's: on a loaded one, timers wake late and short gaps bunch.
func TestOpenRunRecordsItsArrivals(t *testing.T) {
	slow := ClientFunc(func(context.Context) (int, error) { time.Sleep(8 * time.Millisecond); return 0, nil })
	for _, c := range []struct {
		name    string
		arrival Arrival
		rate    float64
		client  Client
		failed  bool
	}{
		{"poisson", Poisson, 1000, noop, false},
		{"constant", Constant, 1000, noop, false},
		{"poisson, clients too slow", Poisson, 1000, slow, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), Config{Ops: []string{"read"}, Warmup: 100 * time.Millisecond, Duration: 700 * time.Millisecond,
				TargetRate: c.rate, Arrival: c.arrival, Seed: 5}, clients(4, c.client))
			if err != nil {
				t.Fatal(err)
			}
			a := res.Arrivals
			if a == nil {
				t.Fatal("no check of the arrivals recorded")
			}
			t.Logf("%+v", *a)
			if a.Process != c.arrival || a.Gaps < 20 || a.Gaps > ArrivalSample || a.IntendedGap != 4*time.Millisecond {
				t.Errorf("check %+v", *a)
			}
			if c.arrival == Poisson && (math.IsNaN(a.A2) || a.P <= 0 || a.P > 1) || c.arrival == Constant && a.A2 != 0 {
				t.Errorf("check %+v: the statistic of the wrong process", *a)
			}
			if c.failed && (a.OK || a.Why == "") {
				t.Errorf("check %+v passed sends that lagged their schedule", *a)
			}
		})
	}
	res, err := Run(context.Background(), Config{Ops: []string{"read"}, Duration: 200 * time.Millisecond}, clients(2, noop))
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrivals != nil {
		t.Errorf("closed loop recorded a check of arrivals: %+v", *res.Arrivals)
	}
}

// TestCheckSendsBoundsTheSample: the clients' samples are checked
// together, at most ArrivalSample gaps, against each client's own gap.
func TestCheckSendsBoundsTheSample(t *testing.T) {
	const clients = 700
	rng := rand.New(rand.NewPCG(9, 9))
	workers := make([]*worker, clients)
	for i := range workers {
		workers[i] = newWorker(1, true)
		workers[i].gaps = []time.Duration{time.Duration(rng.ExpFloat64() * float64(time.Second))}
	}
	got := checkSends(Config{TargetRate: 700, Arrival: Poisson}, workers)
	if got == nil || got.Gaps != ArrivalSample || got.IntendedGap != time.Second || got.Process != Poisson {
		t.Errorf("check %+v, want %d gaps of an intended 1s", got, ArrivalSample)
	}
}
