package report

import (
	"strings"
	"testing"

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
