package report

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// tpccFixture is the fixture as a tpcc study stores it: the workload's own
// figure is tpmC, and 10/23 of each run's ops are new_order.
func tpccFixture() *fixture {
	f := newFixture(defaultOpts())
	f.st.Workload = "tpcc"
	f.st.Metric = &results.Metric{Name: "tpmC", Op: "new_order", PerMinute: true}
	for i := range f.runs {
		r := &f.runs[i]
		r.ByOp = map[string]results.OpSummary{"new_order": {Ops: r.Ops * 10 / 23}, "payment": {Ops: r.Ops * 10 / 23}}
	}
	return f
}

// TestWorkloadMetricReplacesOpsS checks a study whose workload has its own
// throughput figure is judged and drawn in it: groups, ratios, verdicts,
// tables and charts speak of tpmC, computed from the counted op.
func TestWorkloadMetricReplacesOpsS(t *testing.T) {
	f := tpccFixture()
	in := f.input()
	g := in.Analysis.Group(stats.Key{Series: "wal-ram", Durability: "sync", Clients: 4})
	var want []float64
	for _, r := range f.runs {
		if r.Placement == "wal-ram" && r.Durability == "sync" && r.Clients == 4 && r.Status == results.RunOK {
			want = append(want, float64(r.Ops*10/23)/r.DurationS*60)
		}
	}
	if got := g.ThroughputMedian; math.Abs(got-stats.Median(want)) > 1e-6 {
		t.Errorf("group median = %v, want the median tpmC %v", got, stats.Median(want))
	}
	out := renderHTML(t, in)
	for _, s := range []string{"median tpmC", "Throughput is tpmC: new_order ops per minute.", `<th class="num">tpmC</th>`} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	vs := Verdicts(f.st, in.Analysis, 16)
	if !strings.Contains(vs[0], "the tpmC of all-disk") {
		t.Errorf("verdict %q does not speak of tpmC", vs[0])
	}
	var b strings.Builder
	if err := Show(&b, f.st, f.runs); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`placement +tpmC`).MatchString(b.String()) {
		t.Errorf("show's table lacks the tpmC column:\n%s", b.String())
	}
}

// TestElapsedMetricIsLowerIsBetter checks a workload whose figure is an
// elapsed time (a query set's): a placement taking half the time is
// judged better, and the sentences say it takes, not delivers.
func TestElapsedMetricIsLowerIsBetter(t *testing.T) {
	f := newFixture(defaultOpts())
	f.st.Workload = "analytics"
	f.st.Metric = &results.Metric{Name: "query set elapsed s", Elapsed: true}
	for i := range f.runs {
		r := &f.runs[i]
		// Elapsed time falls as the fixture's throughput rises.
		mean := 1e9 / r.ThroughputOpsS
		r.ByOp = map[string]results.OpSummary{"q1": {Ops: 3, ServiceTime: hist.Summary{Mean: mean}}, "q6": {Ops: 3, ServiceTime: hist.Summary{Mean: mean}}}
		if r.Placement == "wal-ram" && r.Clients == 4 {
			// q6 never ran: the pass is not whole.
			r.ByOp["q6"] = results.OpSummary{}
		}
	}
	in := f.input()
	g := in.Analysis.Group(stats.Key{Series: "all-ram", Durability: "sync", Clients: 16})
	if g.Ratio >= 1 || g.Verdict != stats.Better {
		t.Errorf("all-ram ratio %.2f verdict %q: a shorter elapsed time is better", g.Ratio, g.Verdict)
	}
	if part := in.Analysis.Group(stats.Key{Series: "wal-ram", Durability: "sync", Clients: 4}); part.N != 0 ||
		!strings.Contains(part.NoRunText(), "not every op ran in the measured window") {
		t.Errorf("runs with an incomplete pass have a figure: n=%d, %q", part.N, part.NoRunText())
	}
	vs := Verdicts(f.st, in.Analysis, 16)
	if !strings.Contains(vs[0], "all-ram takes") && !strings.Contains(vs[0], "wal-ram takes") {
		t.Errorf("verdict %q should say what a placement takes", vs[0])
	}
	if out := renderHTML(t, in); !strings.Contains(out, "lower is better") || !strings.Contains(out, "below the dashed 1.0 line is faster") {
		t.Error("the report does not say lower is better")
	}
}
