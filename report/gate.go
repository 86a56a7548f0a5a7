package report

import (
	"fmt"
	"io"
	"math"

	"github.com/tierbench/tierbench/stats"
)

// GateText writes a regression gate's judgement (compare --fail-on): a
// line saying passed or failed over how many comparisons, each failing
// comparison on a line of its own (what, its ratio with its adjusted interval, the
// adjusted p its verdict was judged on, the verdict), then the groups
// with nothing to compare, which the verdicts could not reach.
func GateText(w io.Writer, baseLabel string, g stats.Gate) {
	const guard = "verdicts judged together over all of them (Holm)"
	if g.Passed() {
		fmt.Fprintf(w, "gate --fail-on %s: passed: none of %d comparison%s %s; %s\n", g.FailOn, g.Rows, plural(g.Rows), g.Condition(), guard)
	} else {
		fmt.Fprintf(w, "gate --fail-on %s: FAILED: %d of %d comparison%s %s; %s\n", g.FailOn, len(g.Failed), g.Rows, plural(g.Rows), g.Condition(), guard)
	}
	for _, r := range g.Failed {
		if r.Verdict == stats.NoData {
			continue // named below
		}
		fmt.Fprintf(w, "  FAIL %s: %s, adjusted p %s: %s\n", rowWhat(baseLabel, r), rowRatio(r), pText(r.PAdjusted), r.Verdict)
	}
	for _, r := range g.Tolerated {
		fmt.Fprintf(w, "  within tolerance %s: %s, adjusted p %s: %s, but its adjusted interval reaches within %g%%\n", rowWhat(baseLabel, r), rowRatio(r), pText(r.PAdjusted), r.Verdict, g.Tolerance*100)
	}
	for _, r := range g.NoData {
		mark := "  not judged"
		if g.FailOn == stats.FailOnNotEquivalent {
			mark = "  FAIL"
		}
		fmt.Fprintf(w, "%s %s: %s\n", mark, rowWhat(baseLabel, r), r.Note)
	}
}

// rowWhat names a compare row: "throughput (ops/s, higher is better) of
// all-fast sync c=4, B against A".
func rowWhat(baseLabel string, r stats.Row) string {
	dir := "lower is better"
	if r.HigherBest {
		dir = "higher is better"
	}
	return fmt.Sprintf("%s (%s, %s) of %s, %s against %s", r.Metric, r.Unit, dir, r.Group, r.Contender, baseLabel)
}

// rowRatio is a row's ratio with its adjusted interval: "0.021x [0.011-0.041]".
func rowRatio(r stats.Row) string {
	ratio, ci := r.Ratio()
	if ci == nil {
		return ratioFigure(ratio) + "x (no interval)"
	}
	return fmt.Sprintf("%sx [%s-%s]", ratioFigure(ratio), ratioFigure(ci[0]), ratioFigure(ci[1]))
}

// ratioFigure prints a ratio with two decimals, or two significant
// figures below 0.1, where two decimals would read 0.00.
func ratioFigure(v float64) string {
	if math.Abs(v) < 0.1 {
		return fmt.Sprintf("%.2g", v)
	}
	return fmt.Sprintf("%.2f", v)
}
