package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/stats"
)

// TestGateText: a failed gate names each failing comparison on a line
// (what, ratio with its CI, adjusted p, verdict); a group with nothing to
// compare is named, failing only not-equivalent.
func TestGateText(t *testing.T) {
	p := 0.0004
	rows := []stats.Row{
		{Metric: "throughput", Unit: "ops/s", HigherBest: true, Group: "a sync c=4", Contender: "B", DiffPct: -97.9,
			DiffPctCI: &[2]float64{-98.9, -95}, PAdjusted: &p, Verdict: stats.Worse},
		{Metric: "p99 latency", Unit: "µs", Group: "a sync c=4", Contender: "B", DiffPct: 3, DiffPctCI: &[2]float64{-1, 7}, Verdict: stats.Equivalent},
		{Metric: "throughput", Unit: "ops/s", HigherBest: true, Group: "a sync c=16", Contender: "B", Verdict: stats.NoData,
			Note: "B: no ok run (1 failed: tier full), nothing to compare"},
	}
	for _, c := range []struct {
		failOn string
		want   []string
	}{
		{stats.FailOnWorse, []string{
			"gate --fail-on worse: FAILED: 1 of 3 comparisons worse; verdicts judged together over all of them (Holm)",
			"  FAIL throughput (ops/s, higher is better) of a sync c=4, B against A: 0.021x [0.011-0.05], adjusted p 0.0004: worse",
			"  not judged throughput (ops/s, higher is better) of a sync c=16, B against A: B: no ok run (1 failed: tier full), nothing to compare"}},
		{stats.FailOnNotEquivalent, []string{
			"gate --fail-on not-equivalent: FAILED: 2 of 3 comparisons not equivalent",
			"  FAIL throughput (ops/s, higher is better) of a sync c=4",
			"  FAIL throughput (ops/s, higher is better) of a sync c=16, B against A: B: no ok run"}},
	} {
		g, err := stats.JudgeGate(rows, c.failOn, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		GateText(&out, "A", g)
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(c.want) {
			t.Fatalf("--fail-on %s: %d lines, want %d:\n%s", c.failOn, len(lines), len(c.want), out.String())
		}
		for i, w := range c.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("--fail-on %s, line %d:\n got %s\nwant %s", c.failOn, i+1, lines[i], w)
			}
		}
	}
	g, _ := stats.JudgeGate(rows[1:2], stats.FailOnWorse, 0)
	var out strings.Builder
	GateText(&out, "A", g)
	if want := "gate --fail-on worse: passed: none of 1 comparison worse"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("a passed gate: %q, want %q", out.String(), want)
	}
}

// TestCSVTables: the groups and comparisons tables have a header row and
// one row per element of the JSON's groups and comparisons, every row as
// wide as its header, an interval's ends empty where it has none.
func TestCSVTables(t *testing.T) {
	f := newFixture(defaultOpts())
	doc := Build(f.st, f.runs)
	for _, c := range []struct {
		name  string
		write func(*bytes.Buffer) error
		rows  int
	}{
		{"groups", func(b *bytes.Buffer) error { return GroupsCSV(b, doc) }, len(doc.Groups)},
		{"comparisons", func(b *bytes.Buffer) error { return ComparisonsCSV(b, doc) }, len(doc.Comparisons)},
	} {
		var b bytes.Buffer
		if err := c.write(&b); err != nil {
			t.Fatal(err)
		}
		records, err := csv.NewReader(&b).ReadAll() // the reader refuses rows of another width
		if err != nil || len(records) != c.rows+1 || records[0][0] != "study_id" || c.rows == 0 {
			t.Errorf("%s: %d records for %d, %v", c.name, len(records), c.rows, err)
		}
	}
	var b bytes.Buffer
	GroupsCSV(&b, doc)
	baseline := strings.Split(b.String(), "\n")[1]
	if !strings.Contains(baseline, "all-disk,sync,4,3,0,0,") || !strings.Contains(baseline, ",1,,,,,") {
		t.Errorf("the baseline group's row (ratio 1, no interval): %s", baseline)
	}
}
