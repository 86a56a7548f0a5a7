package stats

import (
	"math"
	"testing"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
)

func study() *results.Study {
	return &results.Study{Baseline: "base", Durability: []string{"sync"}, Clients: []int{4},
		Placements: []results.Placement{{Name: "base"}, {Name: "fast"}, {Name: "same"}, {Name: "slow"}, {Name: "few"}}}
}

func runs(p string, tps ...float64) []results.Run {
	var out []results.Run
	for i, tp := range tps {
		out = append(out, results.Run{Placement: p, Durability: "sync", Clients: 4, Status: results.RunOK, Repeat: i + 1,
			ThroughputOpsS: tp, Latency: hist.Summary{P50: tp / 100, P99: tp / 10}})
	}
	return out
}

func TestAnalyzeVerdicts(t *testing.T) {
	var all []results.Run
	all = append(all, runs("base", 100, 102, 98, 101, 99)...)
	all = append(all, runs("fast", 200, 205, 195, 210, 190)...)
	all = append(all, runs("same", 99, 104, 97, 102, 100)...)
	all = append(all, runs("slow", 50, 52, 48, 51, 49)...)
	all = append(all, runs("few", 300)...)
	all = append(all, results.Run{Placement: "few", Durability: "sync", Clients: 4, Repeat: 2, Status: results.RunFailed})
	a := Analyze(study(), all)
	cases := []struct {
		placement string
		verdict   string
		ratio     float64
		pairs     int
		leftOut   int
	}{
		{"base", IsBaseline, 1, 0, 0},
		{"fast", Better, 2, 5, 0},
		{"same", Equivalent, 1, 5, 0},
		{"slow", Worse, 0.5, 5, 0},
		{"few", Inconclusive, 3, 1, 4}, // one round: no interval; the others have no ok run of it
	}
	for _, tc := range cases {
		g := a.Group(Key{tc.placement, "sync", 4})
		if g.Verdict != tc.verdict || g.Pairs != tc.pairs || g.RoundsLeftOut != tc.leftOut {
			t.Errorf("%s: verdict %q pairs %d left out %d, want %q %d %d", tc.placement, g.Verdict, g.Pairs, g.RoundsLeftOut, tc.verdict, tc.pairs, tc.leftOut)
		}
		if math.Abs(g.Ratio-tc.ratio) > 0.011 {
			t.Errorf("%s: ratio %.3f, want %.2f", tc.placement, g.Ratio, tc.ratio)
		}
	}
	if g := a.Group(Key{"few", "sync", 4}); g.RatioCI != nil || g.ThroughputCI != nil || g.Failed != 1 || g.N != 1 {
		t.Errorf("one round must give no interval: %+v", g)
	}
	fast := a.Group(Key{"fast", "sync", 4})
	if fast.RatioCI == nil || fast.RatioCI[0] > 2 || fast.RatioCI[1] < 2 || fast.RatioCI[0] <= 1 {
		t.Errorf("fast ratio CI %v should hold 2 and exclude 1", fast.RatioCI)
	}
	if fast.ThroughputCI == nil || fast.ThroughputCI[0] > 200 || fast.ThroughputCI[1] < 200 {
		t.Errorf("fast throughput CI %v should hold the median 200", fast.ThroughputCI)
	}
	if fast.ThroughputCV <= 0 || fast.ThroughputCV > 0.05 {
		t.Errorf("fast CV %v", fast.ThroughputCV)
	}
}

// TestPairingFollowsRounds: a round where one side failed is left out and
// counted, and the ratio is that of the rounds both ran, whichever order
// the runs were stored in.
func TestPairingFollowsRounds(t *testing.T) {
	base := map[int]float64{1: 100, 2: 50, 3: 80, 4: 120}
	other := map[int]float64{4: 132 * 1.01, 2: 55 / 1.01, 1: 110} // round 3 failed
	c := Paired(other, base, true, 0.05)
	if c.Pairs != 3 || c.LeftOut != 1 || math.Abs(c.Ratio-1.1) > 1e-9 || c.Verdict != Better {
		t.Errorf("paired: %+v", c)
	}
	// The same figures unpaired: the rounds' drift (50..120) hides the
	// 10% that pairing sees.
	u := Welch([]float64{132, 55, 110}, []float64{100, 50, 80, 120}, true, 0.05)
	if u.Verdict != Inconclusive || u.Paired {
		t.Errorf("welch: %+v", u)
	}
}

func TestJudge(t *testing.T) {
	cases := []struct {
		name       string
		ci95, ci90 [2]float64
		higher     bool
		want       string
	}{
		{"above 1, higher is better", [2]float64{1.1, 1.3}, [2]float64{1.12, 1.28}, true, Better},
		{"above 1, an elapsed time", [2]float64{1.1, 1.3}, [2]float64{1.12, 1.28}, false, Worse},
		{"below 1", [2]float64{0.7, 0.9}, [2]float64{0.72, 0.88}, true, Worse},
		{"below 1, an elapsed time", [2]float64{0.7, 0.9}, [2]float64{0.72, 0.88}, false, Better},
		{"tight around 1", [2]float64{0.97, 1.04}, [2]float64{0.975, 1.035}, true, Equivalent},
		{"margin edge", [2]float64{0.94, 1.06}, [2]float64{1 / 1.05, 1.05}, true, Equivalent},
		{"wide", [2]float64{0.8, 1.3}, [2]float64{0.85, 1.2}, true, Inconclusive},
		{"90% past the margin", [2]float64{0.99, 1.1}, [2]float64{1.0, 1.08}, true, Inconclusive},
	}
	for _, tc := range cases {
		if got := Judge(tc.ci95, tc.ci90, tc.higher, 0.05); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestMinSamplesFor(t *testing.T) {
	cases := map[float64]int64{50: 1, 90: 10, 99: 100, 99.9: 1000, 99.99: 10000}
	for p, want := range cases {
		if got := MinSamplesFor(p); got != want {
			t.Errorf("p%v: %d, want %d", p, got, want)
		}
	}
}

func TestMedianMeanCV(t *testing.T) {
	cases := []struct {
		v          []float64
		median, cv float64
	}{
		{[]float64{3, 1, 2}, 2, 0.5},
		{[]float64{4, 1, 3, 2}, 2.5, 0.5164},
		{[]float64{7}, 7, 0},
	}
	for _, tc := range cases {
		if got := Median(tc.v); got != tc.median {
			t.Errorf("median %v: %v", tc.v, got)
		}
		if got := CV(tc.v); math.Abs(got-tc.cv) > 1e-3 {
			t.Errorf("cv %v: %v, want %v", tc.v, got, tc.cv)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("median of nothing should be NaN")
	}
}

// TestLoadPerOpRatio compares each series' load generator CPU per
// operation with the baseline's: a ratio with a CI from enough repeats,
// none for the baseline itself or without figures.
func TestLoadPerOpRatio(t *testing.T) {
	withCPU := func(p string, perOp ...float64) []results.Run {
		rs := runs(p, 100, 100, 100)
		for i := range rs {
			if i < len(perOp) {
				rs[i].Telemetry = &telemetry.Summary{LoadGen: &telemetry.LoadGenSummary{Name: "x", CPUUsPerOp: perOp[i]}}
			}
		}
		return rs
	}
	var all []results.Run
	all = append(all, withCPU("base", 200, 210, 190)...)
	all = append(all, withCPU("fast", 100, 106, 95)...)
	all = append(all, withCPU("same", 99)...)
	all = append(all, withCPU("slow")...)
	a := Analyze(study(), all)
	for _, c := range []struct {
		series string
		ok     bool
		ratio  float64
		ci     bool
	}{
		{"base", false, 0, false},
		{"fast", true, 0.5, true},
		{"same", true, 99.0 / 200, false}, // one run: no interval
		{"slow", false, 0, false},         // nothing recorded
	} {
		g := a.Group(Key{c.series, "sync", 4})
		cmp, ok := g.LoadPerOpRatio()
		ratio, ci := cmp.Ratio, cmp.CI95
		if ok != c.ok || math.Abs(ratio-c.ratio) > 0.01 || (ci != nil) != c.ci {
			t.Errorf("%s: ratio %v, ci %v, ok %v; want %v, ci %v, ok %v", c.series, ratio, ci, ok, c.ratio, c.ci, c.ok)
		}
		if ci != nil && (ci[0] > ratio || ci[1] < ratio) {
			t.Errorf("%s: CI %v does not hold the ratio %v", c.series, ci, ratio)
		}
	}
}
