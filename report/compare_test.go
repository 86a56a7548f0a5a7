package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// TestCompareTableShowsWhyNothingToCompare: a note row is printed as its
// sentence, not as figures of zero.
func TestCompareTableShowsWhyNothingToCompare(t *testing.T) {
	rows := []stats.Row{
		{Metric: "throughput", Unit: "ops/s", Group: "sync c=16", Contender: "wal-ram", Baseline: 100, Value: 150, Diff: 50, DiffPct: 50,
			Verdict: stats.Inconclusive, HigherBest: true},
		{Metric: "throughput", Unit: "ops/s", Group: "sync c=64", Contender: "wal-quick", Verdict: stats.NoData, HigherBest: true,
			Note: "wal-quick: no ok run (2 failed: tier quick full), nothing to compare"},
	}
	var b strings.Builder
	CompareTable(&b, "all-disk", rows, false)
	out := b.String()
	if !strings.Contains(out, "sync c=64  wal-quick: no ok run (2 failed: tier quick full), nothing to compare") {
		t.Errorf("note row missing or garbled:\n%s", out)
	}
	if strings.Contains(out, "wal-quick: 0") {
		t.Errorf("note row printed as zeros:\n%s", out)
	}
}

// TestCompareTableOneEstimator: the difference and its percentage are
// printed with their CIs from one estimator, so they share a sign, and a
// row whose medians point the other way is marked.
func TestCompareTableOneEstimator(t *testing.T) {
	st := &results.Study{ID: "s", Durability: []string{"sync"}, Clients: []int{4},
		Placements: []results.Placement{{Name: "base"}, {Name: "other"}}}
	var runs []results.Run
	// p99 by round: the per-round ratios are mostly above 1 while the
	// other side's median is below the base's.
	for i, p99 := range [][2]float64{{100, 150}, {200, 190}, {300, 500}} {
		for j, name := range []string{"base", "other"} {
			runs = append(runs, results.Run{Placement: name, Durability: "sync", Clients: 4, Repeat: i + 1, Status: results.RunOK,
				ThroughputOpsS: 1000, Latency: hist.Summary{P50: 10, P99: p99[j]}})
		}
	}
	rows := stats.Compare(stats.StudySide("base", st, runs, "base"), []stats.Side{stats.StudySide("other", st, runs, "other")})
	var p99 stats.Row
	for _, r := range rows {
		if r.Metric == "p99 latency" {
			p99 = r
		}
	}
	if !mediansApart(p99) {
		t.Fatalf("the case does not have medians apart from the estimate: %+v", p99)
	}
	var b strings.Builder
	CompareTable(&b, "base", rows, false)
	out := b.String()
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "p99 latency") {
			line = l
		}
	}
	diff := fmt.Sprintf("%s [%s..%s]", signedValue(p99.Unit, p99.Diff), signedValue(p99.Unit, p99.DiffCI[0]), signedValue(p99.Unit, p99.DiffCI[1]))
	pct := fmt.Sprintf("%+.1f%% [%+.1f%%..%+.1f%%] *", p99.DiffPct, p99.DiffPctCI[0], p99.DiffPctCI[1])
	if !strings.Contains(line, diff) || !strings.Contains(line, pct) {
		t.Errorf("p99 row %q lacks %q and %q", line, diff, pct)
	}
	if !strings.Contains(out, "* the two medians differ the other way") {
		t.Errorf("no footnote for the marked row:\n%s", out)
	}
}
