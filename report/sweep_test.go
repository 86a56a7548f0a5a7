package report

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// sweptFixture is the fixture as a study sweeping heap (1g, 2g) stores it:
// every run twice, the 2g runs 1.5 times as fast.
func sweptFixture() *fixture {
	f := newFixture(defaultOpts())
	f.st.Axes = []results.Axis{{Name: "heap", Values: []string{"1073741824", "2147483648"}, Labels: []string{"1g", "2g"}}}
	var runs []results.Run
	for _, r := range f.runs {
		small, big := r, r
		small.Options = map[string]string{"heap": "1073741824"}
		big.Options = map[string]string{"heap": "2147483648"}
		big.ID += "-2g"
		big.ThroughputOpsS *= 1.5
		runs = append(runs, small, big)
	}
	f.runs = runs
	return f
}

// TestSweptOptionIsComparedWithinAndAcross checks a swept option's report:
// each placement is compared with the baseline at the same heap, and each
// heap with the first on every placement.
func TestSweptOptionIsComparedWithinAndAcross(t *testing.T) {
	f := sweptFixture()
	view, runs := results.SeriesView(f.st, f.runs)
	a := stats.Analyze(view, runs)
	g := a.Group(stats.Key{Series: "wal-ram heap=2g", Durability: "sync", Clients: 16})
	base := a.Group(stats.Key{Series: "all-disk heap=2g", Durability: "sync", Clients: 16})
	if g == nil || base == nil || base.Verdict != stats.IsBaseline {
		t.Fatalf("series by heap: %+v, baseline %+v", g, base)
	}
	if want := stats.Paired(g.Rounds(), base.Rounds(), true, 0.05).Ratio; g.Ratio != want {
		t.Errorf("wal-ram heap=2g ratio %v, want %v (against all-disk heap=2g)", g.Ratio, want)
	}
	vs := strings.Join(Verdicts(view, a, 16), "\n")
	for _, want := range []string{
		"the throughput of all-disk heap=1g",
		"the throughput of all-disk heap=2g",
		"With synced commits, heap=2g against heap=1g: all-disk 1.50x",
	} {
		if !strings.Contains(vs, want) {
			t.Errorf("verdicts lack %q:\n%s", want, vs)
		}
	}
	out := renderHTML(t, Input{Study: f.st, Runs: f.runs, Analysis: stats.Analyze(f.st, f.runs), Histogram: f.histogram})
	for _, want := range []string{"all-disk, in the same heap", "wal-ram heap=2g", "heap=2g against heap=1g"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var b strings.Builder
	if err := Show(&b, f.st, f.runs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "vs baseline") || !strings.Contains(b.String(), "baseline: all-disk, in the same heap") {
		t.Errorf("show's table does not compare within the heap:\n%s", b.String())
	}
}
