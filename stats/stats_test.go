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
	for _, tp := range tps {
		out = append(out, results.Run{Placement: p, Durability: "sync", Clients: 4, Status: results.RunOK,
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
	all = append(all, runs("few", 300, 310)...)
	all = append(all, results.Run{Placement: "few", Durability: "sync", Clients: 4, Status: results.RunFailed})
	a := Analyze(study(), all)
	cases := []struct {
		placement string
		verdict   string
		ratio     float64
	}{
		{"base", IsBaseline, 1},
		{"fast", Better, 2},
		{"same", Noise, 1},
		{"slow", Worse, 0.5},
		{"few", NoInterval, 3.05},
	}
	for _, tc := range cases {
		g := a.Group(Key{tc.placement, "sync", 4})
		if g.Verdict != tc.verdict {
			t.Errorf("%s: verdict %q, want %q", tc.placement, g.Verdict, tc.verdict)
		}
		if math.Abs(g.Ratio-tc.ratio) > 0.011 {
			t.Errorf("%s: ratio %.3f, want %.2f", tc.placement, g.Ratio, tc.ratio)
		}
	}
	if g := a.Group(Key{"few", "sync", 4}); g.RatioCI != nil || g.ThroughputCI != nil || g.Failed != 1 || g.N != 2 {
		t.Errorf("fewer than 3 repeats must give no interval: %+v", g)
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
	// Seeded: the same input gives the same intervals.
	again := Analyze(study(), all).Group(Key{"fast", "sync", 4})
	if *again.RatioCI != *fast.RatioCI {
		t.Errorf("bootstrap not reproducible: %v vs %v", again.RatioCI, fast.RatioCI)
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

func TestVerdictDirection(t *testing.T) {
	cases := []struct {
		lo, hi float64
		higher bool
		want   string
	}{
		{1.1, 1.3, true, Better}, {1.1, 1.3, false, Worse},
		{0.7, 0.9, true, Worse}, {0.7, 0.9, false, Better},
		{0.9, 1.1, true, Noise},
	}
	for _, tc := range cases {
		if got := VerdictFor(tc.lo, tc.hi, tc.higher); got != tc.want {
			t.Errorf("%+v: %s", tc, got)
		}
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
	all = append(all, withCPU("fast", 100, 105, 95)...)
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
		ratio, ci, ok := g.LoadPerOpRatio()
		if ok != c.ok || math.Abs(ratio-c.ratio) > 1e-9 || (ci != nil) != c.ci {
			t.Errorf("%s: ratio %v, ci %v, ok %v; want %v, ci %v, ok %v", c.series, ratio, ci, ok, c.ratio, c.ci, c.ok)
		}
		if ci != nil && (ci[0] > ratio || ci[1] < ratio) {
			t.Errorf("%s: CI %v does not hold the ratio %v", c.series, ci, ratio)
		}
	}
}
