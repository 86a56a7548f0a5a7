package capacity

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
)

var search = results.Search{FromOpsS: 1000, Resolution: 0.05, MaxOpsS: 1e6}

// TestSearchFindsCapacity runs the search against placements whose true
// capacity is known (a step meets the objective at or below it) and checks
// it ends within the resolution below the truth, cold and warm.
func TestSearchFindsCapacity(t *testing.T) {
	for _, truth := range []float64{3, 700, 1000, 4321, 99999, 2e6} {
		for _, warm := range []bool{false, true} {
			start := search.FromOpsS
			if warm {
				start = truth * 1.03 // an earlier round's, a little off
			}
			var steps []Step
			for {
				rate, more := Next(search, start, warm, steps)
				if !more {
					break
				}
				if len(steps) > 40 {
					t.Fatalf("truth %g warm %v: search does not end: %v", truth, warm, steps)
				}
				steps = append(steps, Step{Rate: rate, Outcome: Outcome{Met: rate <= truth}})
			}
			got := Capacity(search, steps)
			want := min(truth, search.MaxOpsS)
			if got.OpsS > want || got.OpsS < want/(1+search.Resolution) {
				t.Errorf("truth %g warm %v: capacity %g, want within %g%% below %g (steps %v)", truth, warm, got.OpsS, search.Resolution*100, want, steps)
			}
			if got.AtLeast != (truth >= search.MaxOpsS) {
				t.Errorf("truth %g: at least = %v", truth, got.AtLeast)
			}
			if warm && len(steps) > 5 {
				t.Errorf("truth %g: a warm search took %d steps, want at most 5", truth, len(steps))
			}
		}
	}
}

// TestProbesNeverBoundTheCapacity runs cold searches whose climbing
// steps are probes that pass too easily (up to overshoot times the true
// capacity, as a short window near capacity can): the capacity still
// ends within the resolution below the truth, on full steps alone, and
// only climbing steps were probes.
func TestProbesNeverBoundTheCapacity(t *testing.T) {
	for _, truth := range []float64{3, 700, 1000, 4321, 99999, 2e6} {
		for _, overshoot := range []float64{1, 1.3, 2.5} {
			var steps []Step
			probes := 0
			for {
				rate, more := Next(search, search.FromOpsS, false, steps)
				if !more {
					break
				}
				if len(steps) > 40 {
					t.Fatalf("truth %g overshoot %g: search does not end: %v", truth, overshoot, steps)
				}
				if Probing(false, steps, rate) {
					for _, st := range steps {
						if !st.Met {
							t.Fatalf("truth %g: a probe at %g after a step that did not meet: %v", truth, rate, steps)
						}
					}
					probes++
					passed := rate <= truth*overshoot
					steps = append(steps, Step{Rate: rate, Outcome: Outcome{Met: passed}, Probe: passed})
					continue
				}
				steps = append(steps, Step{Rate: rate, Outcome: Outcome{Met: rate <= truth}})
			}
			got := Capacity(search, steps)
			want := min(truth, search.MaxOpsS)
			if got.OpsS > want || got.OpsS < want/(1+search.Resolution) {
				t.Errorf("truth %g overshoot %g: capacity %g, want within %g%% below %g (steps %v)", truth, overshoot, got.OpsS, search.Resolution*100, want, steps)
			}
			if last := lastAt(steps)[got.OpsS]; got.OpsS > 0 && last.Probe {
				t.Errorf("truth %g overshoot %g: the capacity %g rests on a probe (steps %v)", truth, overshoot, got.OpsS, steps)
			}
			if truth > search.FromOpsS && probes == 0 {
				t.Errorf("truth %g: a cold climb with no probe", truth)
			}
		}
	}
	if Probing(true, nil, 1000) {
		t.Error("a warm search's first step is a probe")
	}
}

func TestSearchWithNoCapacity(t *testing.T) {
	var steps []Step
	for {
		rate, more := Next(search, 1000, false, steps)
		if !more {
			break
		}
		steps = append(steps, Step{Rate: rate, Outcome: Outcome{Why: "p99 too high"}})
	}
	if got := Capacity(search, steps); got.OpsS != 0 || got.AtLeast {
		t.Errorf("capacity %+v, want none", got)
	}
	if last := steps[len(steps)-1].Rate; last < MinRate {
		t.Errorf("searched down to %g ops/s, below %g", last, MinRate)
	}
}

func TestBracketIgnoresNoiseBelowSuccess(t *testing.T) {
	steps := []Step{{Rate: 1000, Outcome: Outcome{Met: true}}, {Rate: 2000}, {Rate: 1414, Outcome: Outcome{Met: true}}, {Rate: 1200}}
	if lo, hi := Bracket(steps); lo != 1414 || hi != 2000 {
		t.Errorf("bracket %g..%g, want 1414..2000", lo, hi)
	}
}

func TestJudge(t *testing.T) {
	errs := 0.01
	slo := results.SLO{Percentile: "p99", BoundUs: 20000, Errors: &errs}
	run := func(p99 float64, ops, errors int64, achieved float64) results.Run {
		return results.Run{Status: results.RunOK, Ops: ops, Errors: errors, TargetRate: 1000, ThroughputOpsS: achieved, Latency: hist.Summary{P99: p99}}
	}
	for _, c := range []struct {
		name     string
		r        results.Run
		met      bool
		whyHolds string
	}{
		{"met", run(15000, 1000, 0, 1000), true, ""},
		{"latency", run(31000, 1000, 0, 990), false, "p99 31.00ms > 20.00ms"},
		{"errors", run(100, 900, 100, 1000), false, "errors 10.00%"},
		{"behind", run(100, 800, 0, 800), false, "achieved 800 of 1000"},
		{"failed", results.Run{Status: results.RunFailed}, false, "run failed"},
	} {
		got := Judge(slo, c.r)
		if got.Met != c.met || !strings.Contains(got.Why, c.whyHolds) {
			t.Errorf("%s: %+v, want met %v why containing %q", c.name, got, c.met, c.whyHolds)
		}
	}
}

// TestJudgeWithInterval: a step that recorded its percentile's interval
// meets the objective only when the interval's upper end is within it,
// misses only when its lower end is beyond, and is unsure otherwise, or
// without an interval for lack of operations.
func TestJudgeWithInterval(t *testing.T) {
	slo := results.SLO{Percentile: "p99", BoundUs: 20000}
	run := func(p99 float64, ci map[string]hist.CI) results.Run {
		return results.Run{Status: results.RunOK, Ops: 5000, TargetRate: 1000, ThroughputOpsS: 1000, Latency: hist.Summary{P99: p99}, LatencyCI: ci}
	}
	for _, c := range []struct {
		name        string
		r           results.Run
		met, unsure bool
		whyHolds    string
	}{
		{"within", run(15000, map[string]hist.CI{"p99": {Lo: 12000, Hi: 18000}}), true, false, ""},
		{"beyond", run(31000, map[string]hist.CI{"p99": {Lo: 25000, Hi: 40000}}), false, false, "p99 31.00ms [25.00ms-40.00ms] > 20.00ms"},
		{"straddles, below", run(18000, map[string]hist.CI{"p99": {Lo: 15000, Hi: 24000}}), false, true, "straddles 20.00ms"},
		{"straddles, above", run(22000, map[string]hist.CI{"p99": {Lo: 15000, Hi: 24000}}), false, true, "straddles"},
		{"too few operations", run(15000, map[string]hist.CI{"p50": {Lo: 1, Hi: 2}}), false, false, "too few to show it"},
		{"too few, open above", run(15000, map[string]hist.CI{"p99": {Lo: 9000, Hi: 19000, Open: true}}), false, false, "raise duration"},
		{"too few, yet beyond", run(150000, map[string]hist.CI{"p99": {Lo: 90000, Hi: 190000, Open: true}}), false, false, "p99 150.00ms [90.00ms-open] > 20.00ms"},
		{"stored before intervals", run(15000, nil), true, false, ""},
	} {
		got := Judge(slo, c.r)
		if got.Met != c.met || got.Unsure != c.unsure || !strings.Contains(got.Why, c.whyHolds) {
			t.Errorf("%s: %+v, want met %v unsure %v why containing %q", c.name, got, c.met, c.unsure, c.whyHolds)
		}
	}
}

// TestUnsureStep: where a search goes after an unsure step, and what it
// ends with. An unsure step at the bound (its percentile's interval
// straddled it) says the capacity is about its rate: with nothing tried
// above, the search looks a resolution above it; with a miss there, a
// resolution below; once a met rate lies a resolution below it and a miss
// a resolution above, the search ends and the round's estimate is its rate
// (the highest of a run of them). A step unsure for its arrivals alone
// runs again, and a step unsure twice counts as not met. At 5% resolution.
func TestUnsureStep(t *testing.T) {
	met := func(r float64) Step { return Step{Rate: r, Outcome: Outcome{Met: true}} }
	missed := func(r float64) Step { return Step{Rate: r} }
	unsure := func(r float64) Step { return Step{Rate: r, Outcome: Outcome{Unsure: true, AtBound: true}} }
	arrivals := func(r float64) Step { return Step{Rate: r, Outcome: Outcome{Unsure: true}} }
	const end = 0.0
	for _, tc := range []struct {
		name     string
		warm     bool
		steps    []Step
		next     float64 // end: the search ends
		estimate float64 // when it ends with an unsure step's rate
	}{
		{"nothing above: look a resolution up", false, []Step{met(1000), unsure(2000)}, 2100, 0},
		{"a miss a resolution up: look a resolution down", false, []Step{met(1000), unsure(2000), missed(2100)}, 2000 / 1.05, 0},
		{"a met rate a resolution down: end", false, []Step{met(1000), unsure(2000), missed(2100), met(2000 / 1.05)}, end, 2000},
		{"a warm first step up, then a miss above: end", true, []Step{met(1000), unsure(1050), missed(1102.5)}, end, 1050},
		{"a warm first step up, met above: on up", true, []Step{met(1000), unsure(1050), met(1102.5)}, 1102.5 * 1.1, 0},
		{"a run of them below a miss: the highest", true, []Step{met(1000), unsure(1050), unsure(1102.5), missed(1157.625)}, end, 1102.5},
		{"a run of them below a miss, no met rate below: look below the run", false, []Step{met(800), missed(1600), unsure(1131), unsure(1187.55), missed(1246.9275)}, 1131 / 1.05, 0},
		{"then met: end at the highest", false, []Step{met(800), missed(1600), unsure(1131), unsure(1187.55), missed(1246.9275), met(1131 / 1.05)}, end, 1187.55},
		{"no met rate below: look a resolution down", true, []Step{missed(1100), unsure(1049)}, 1049 / 1.05, 0},
		{"the last bisection: end", false, []Step{met(1000), missed(1100), unsure(1049)}, end, 1049},
		{"a wider bracket's middle: look a resolution up", false, []Step{met(1000), missed(1200), unsure(1095)}, 1095 * 1.05, 0},
		{"then a resolution down", false, []Step{met(1000), missed(1200), unsure(1095), missed(1095 * 1.05)}, 1095 / 1.05, 0},
		{"then met: end", false, []Step{met(1000), missed(1200), unsure(1095), missed(1095 * 1.05), met(1095 / 1.05)}, end, 1095},
		{"met a resolution up: the bracket above it", false, []Step{met(1000), missed(1400), unsure(1095), met(1095 * 1.05)}, math.Sqrt(1095 * 1.05 * 1400), 0},
		{"no look below the lowest rate a search tries: again", true, []Step{missed(1.04), unsure(1)}, 1, 0},
		{"unsure for its arrivals: again", false, []Step{met(1000), arrivals(2000)}, 2000, 0},
		{"unsure twice: not met, on", false, []Step{met(1000), missed(4000), arrivals(2000), arrivals(2000)}, math.Sqrt(1000 * 2000), 0},
	} {
		rate, more := Next(search, 1000, tc.warm, tc.steps)
		switch {
		case tc.next == end && more:
			t.Errorf("%s: the search goes on at %g, want it ended", tc.name, rate)
		case tc.next != end && (!more || math.Abs(rate-tc.next) > 1e-6):
			t.Errorf("%s: next %g (more %v), want %g", tc.name, rate, more, tc.next)
		}
		if tc.estimate > 0 {
			if f := Capacity(search, tc.steps); f.EstimateOpsS != tc.estimate {
				t.Errorf("%s: estimate %g, want the unsure %g", tc.name, f.EstimateOpsS, tc.estimate)
			}
		}
	}
}

// TestStepsOfTellsGeneratorBound: a missed step counts against the engine
// when its service time grew with the load, and as generator-bound when it
// stayed flat (operations waited for a free client).
func TestStepsOfTellsGeneratorBound(t *testing.T) {
	slo := results.SLO{Percentile: "p99", BoundUs: 20000}
	step := func(rate, p99, svc50 float64) results.Run {
		return results.Run{Status: results.RunOK, Ops: 1000, Clients: 1, TargetRate: rate, ThroughputOpsS: rate,
			Latency: hist.Summary{P99: p99}, ServiceTime: hist.Summary{Mean: svc50}}
	}
	// One client: at 2000 ops/s and 500 µs an operation it is always busy.
	idle := step(1500, 90000, 450)
	idle.Clients = 4 // busy 17% of the time: a free client was there
	steps := StepsOf(slo, []results.Run{step(1000, 2000, 400), step(2000, 90000, 500), step(4000, 90000, 2000), idle})
	if !steps[0].Met || !steps[1].GeneratorBound || steps[2].GeneratorBound || steps[3].GeneratorBound {
		t.Errorf("steps %+v: want met, generator-bound (clients busy, service flat), engine-bound (service 5x), engine's tail (clients idle)", steps)
	}
	if !strings.Contains(steps[1].Why, "the 1 clients were busy 100% of the time") {
		t.Errorf("why %q", steps[1].Why)
	}
}

func TestCapacityAtLeastWhenClientsBound(t *testing.T) {
	steps := []Step{{Rate: 1000, Outcome: Outcome{Met: true}}, {Rate: 2000, Outcome: Outcome{GeneratorBound: true, Why: "queued"}}}
	got := Capacity(search, steps)
	if got.OpsS != 1000 || !got.AtLeast || !strings.Contains(got.Above, "2000 ops/s: queued") {
		t.Errorf("capacity %+v", got)
	}
}

func TestPlacementCost(t *testing.T) {
	costs := &results.Costs{
		Tiers: map[string]results.Cost{"fast": {PerGiBMonth: 0.5}, "disk": {PerMonth: 20}},
		Host:  &results.Cost{PerMonth: 100},
		Sizes: map[string]int64{"data": 10 * GiB},
	}
	p := results.Placement{Name: "wal-fast", Components: map[string]string{"wal": "fast", "data": "disk"}}
	runs := []results.Run{{Footprint: map[string]int64{"wal": GiB}}, {Footprint: map[string]int64{"wal": 2 * GiB}}}
	got, ok := PlacementCost(costs, p, runs)
	if !ok || got.PerMonth != 2*0.5+20+100 {
		t.Errorf("cost %+v, want 121", got)
	}
	if strings.Join(got.Parts, "; ") != "wal on fast: 2.0 GiB measured x $0.5/GiB; tier disk: $20; host: $100" {
		t.Errorf("parts %q", got.Parts)
	}
	unpriced, _ := PlacementCost(costs, results.Placement{Components: map[string]string{"data": "nvme"}}, nil)
	if len(unpriced.Unpriced) != 1 || unpriced.Unpriced[0] != "nvme" {
		t.Errorf("unpriced %v", unpriced.Unpriced)
	}
	if _, ok := PlacementCost(nil, p, runs); ok {
		t.Error("a study without costs priced a placement")
	}
}

func TestPerMillionOps(t *testing.T) {
	// 730 h at 1000 ops/s is 2628 million operations.
	if got := PerMillionOps(2628, 1000); got < 0.999 || got > 1.001 {
		t.Errorf("per million ops %g, want 1", got)
	}
}

// TestJudgeChecksArrivals: a step whose Poisson sends failed their check
// is not trusted as met: it is unsure, says why, and the search repeats
// it; one that passed is met as before and says how its arrivals fared;
// a miss stays a miss; constant sends' spread is said, not judged.
func TestJudgeChecksArrivals(t *testing.T) {
	slo := results.SLO{Percentile: "p99", BoundUs: 20000}
	f := func(v float64) *float64 { return &v }
	notPoisson := &results.ArrivalCheck{Process: "poisson", Gaps: 500, IntendedGapUs: 1000, A2: f(3.4), P: f(0.012),
		Why: "arrivals not Poisson (A² = 3.40, p = 0.012, 500 gaps)"}
	poisson := &results.ArrivalCheck{Process: "poisson", Gaps: 500, IntendedGapUs: 1000, A2: f(0.61), P: f(0.42), OK: true}
	even := &results.ArrivalCheck{Process: "constant", Gaps: 500, IntendedGapUs: 1000, Spread: f(0.03), OK: true}
	bunched := &results.ArrivalCheck{Process: "constant", Gaps: 500, IntendedGapUs: 1000, Spread: f(0.9), Why: "arrivals not evenly spaced (median gap 90% off 1ms, 500 gaps)"}
	run := func(p99, lo, hi float64, a *results.ArrivalCheck) results.Run {
		return results.Run{Status: results.RunOK, Ops: 5000, TargetRate: 1000, ThroughputOpsS: 1000, Latency: hist.Summary{P99: p99},
			LatencyCI: map[string]hist.CI{"p99": {Lo: lo, Hi: hi}}, Arrivals: a}
	}
	for _, c := range []struct {
		name          string
		r             results.Run
		met, unsure   bool
		why, arrivals string
	}{
		{"within, Poisson", run(15000, 12000, 18000, poisson), true, false, "", "arrivals Poisson (A² = 0.61, p = 0.42)"},
		{"within, evenly spaced", run(15000, 12000, 18000, even), true, false, "", "arrivals evenly spaced (median gap 3% off 1.00ms)"},
		{"within, not Poisson", run(15000, 12000, 18000, notPoisson), false, true, "p99 15.00ms [12.00ms-18.00ms] within 20.00ms, but arrivals not Poisson (A² = 3.40, p = 0.012", "arrivals not Poisson"},
		{"within, bunched: reported, not judged", run(15000, 12000, 18000, bunched), true, false, "", "arrivals not evenly spaced (median gap 90% off 1ms"},
		{"straddles, not Poisson", run(18000, 15000, 24000, notPoisson), false, true, "straddles 20.00ms, and arrivals not Poisson", "arrivals not Poisson"},
		{"beyond, not Poisson", run(31000, 25000, 40000, notPoisson), false, false, "p99 31.00ms [25.00ms-40.00ms] > 20.00ms", ""},
		{"no check stored", run(15000, 12000, 18000, nil), true, false, "", ""},
	} {
		got := Judge(slo, c.r)
		if got.Met != c.met || got.Unsure != c.unsure || !strings.Contains(got.Why, c.why) || !strings.Contains(got.Arrivals, c.arrivals) {
			t.Errorf("%s: %+v, want met %v unsure %v why containing %q arrivals %q", c.name, got, c.met, c.unsure, c.why, c.arrivals)
		}
	}
	low := run(5000, 4000, 6000, poisson)
	low.TargetRate, low.ThroughputOpsS = 500, 500
	steps := StepsOf(slo, []results.Run{low, run(15000, 12000, 18000, notPoisson)})
	if rate, more := Next(search, 500, false, steps); !more || rate != 1000 {
		t.Errorf("after a step whose arrivals failed: %g %v, want its rate, 1000, again", rate, more)
	}
	if got := Judge(slo, run(18000, 15000, 24000, poisson)); !got.AtBound {
		t.Errorf("straddles, Poisson: %+v, want at the bound", got)
	}
	if got := Judge(slo, run(18000, 15000, 24000, notPoisson)); got.AtBound {
		t.Errorf("straddles, not Poisson: %+v, want not at the bound (its load was smoother than asked)", got)
	}
}

// TestStartFromTheBracketBefore: a later round starts within the final
// bracket of the round before (Start). When the truth held still its
// search ends in two steps, bracketing the truth; whatever the bracket
// before, the round's estimate (the middle of its final bracket) is off
// the truth by at most half a resolution, and on average not at all: a
// seeded simulation of 4,000 rounds, each started from the round before's
// steps, keeps the mean log error within 0.5% of a resolution's.
func TestStartFromTheBracketBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 4))
	const truth = 4321.0
	run := func(start float64, warm bool) []Step {
		var steps []Step
		for len(steps) < 40 {
			rate, more := Next(search, start, warm, steps)
			if !more {
				break
			}
			steps = append(steps, Step{Rate: rate, Outcome: Outcome{Met: rate <= truth}})
		}
		return steps
	}
	before := run(Start(search, nil, rng.Float64()))
	var sum float64
	const rounds = 4000
	for i := range rounds {
		start, warm := Start(search, before, rng.Float64())
		if !warm {
			t.Fatalf("round %d: a start from a closed bracket %v is not warm", i+2, before)
		}
		steps := run(start, warm)
		if len(steps) != 2 {
			t.Fatalf("round %d: the truth held still, yet the search from %g took %d steps: %v", i+2, start, len(steps), steps)
		}
		got := Capacity(search, steps)
		lo, hi := Bracket(steps)
		if lo > truth || hi <= truth {
			t.Fatalf("round %d: bracket [%g, %g] misses the truth %g", i+2, lo, hi, truth)
		}
		e := math.Log(got.EstimateOpsS/truth) / math.Log(1+search.Resolution)
		if math.Abs(e) > 0.5+1e-9 {
			t.Fatalf("round %d: estimate %g is %.2f resolutions off the truth %g", i+2, got.EstimateOpsS, e, truth)
		}
		sum += e
		before = steps
	}
	if mean := sum / rounds; math.Abs(mean) > 0.02 {
		t.Errorf("mean error %.4f resolutions, want about 0 (a uniform share of a resolution either side)", mean)
	}
}

// TestProbePassed: a probe passes only after its least time, keeping up
// with its rate over its window, its errors within the objective's share,
// and its percentile's interval closed within the bound.
func TestProbePassed(t *testing.T) {
	share := 0.01
	slo := results.SLO{Percentile: "p99", BoundUs: 20000, Errors: &share}
	// fillAt records n operations of us µs, every slowEvery-th of 50 ms.
	fillAt := func(n int, us int64, slowEvery int) *hdr.Histogram {
		h := hist.New()
		for i := range n {
			v := us
			if slowEvery > 0 && i%slowEvery == 0 {
				v = 50000
			}
			_ = h.RecordValue(v * 1000)
		}
		return h
	}
	fill := func(n int, slowEvery int) *hdr.Histogram { return fillAt(n, 2000, slowEvery) }
	for _, tc := range []struct {
		name            string
		h               *hdr.Histogram
		rate            float64
		errs            int64
		window, elapsed time.Duration
		want            bool
	}{
		{"fast and enough", fill(2000, 0), 1000, 0, 2 * time.Second, 2 * time.Second, true},
		{"before its least", fill(2000, 0), 1000, 0, time.Second, time.Second, false},
		{"behind its rate", fill(1500, 0), 1000, 0, 2 * time.Second, 2 * time.Second, false},
		{"keeping up over the window after its cut", fill(2000, 0), 1000, 0, 2 * time.Second, 3 * time.Second, true},
		{"behind its rate over the window after its cut", fill(2000, 0), 1000, 0, 2500 * time.Millisecond, 3 * time.Second, false},
		{"too few for an upper end", fill(300, 0), 100, 0, 3 * time.Second, 3 * time.Second, false},
		{"tail past the bound", fill(2000, 20), 1000, 0, 2 * time.Second, 2 * time.Second, false},
		{"a few slow, the percentile within", fill(2000, 200), 1000, 0, 2 * time.Second, 2 * time.Second, true},
		{"errors past their share", fill(2000, 0), 1000, 100, 2 * time.Second, 2 * time.Second, false},
		{"no window", fill(2000, 0), 1000, 0, 0, 2 * time.Second, false},
		{"within the bound, past 60% of it", fillAt(2000, 13000, 0), 1000, 0, 2 * time.Second, 2 * time.Second, false},
		{"within 60% of the bound", fillAt(2000, 11000, 0), 1000, 0, 2 * time.Second, 2 * time.Second, true},
	} {
		look := ProbeLook{Latency: tc.h, Errors: tc.errs, Window: tc.window, Elapsed: tc.elapsed}
		if got := ProbePassed(slo, tc.rate, look, ProbeLeast(10*time.Second)); got != tc.want {
			t.Errorf("%s: passed %v, want %v", tc.name, got, tc.want)
		}
	}
}
