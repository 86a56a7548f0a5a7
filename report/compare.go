package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/stats"
)

// ANSI colours for verdicts on a terminal.
const (
	green = "\x1b[32m"
	red   = "\x1b[31m"
	reset = "\x1b[0m"
)

// CompareTable writes comparison rows: Metric, Group, Baseline, Contender
// (medians), Diff and Diff % with their 95% CIs, verdict. color paints
// better green and worse red.
func CompareTable(w io.Writer, baseLabel string, rows []stats.Row, color bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Metric\tGroup\tBaseline (%s)\tContender\tDiff [95%% CI]\tDiff %% [95%% CI]\tverdict\n", baseLabel)
	apart := false
	for _, r := range rows {
		if r.Note != "" {
			fmt.Fprintf(tw, "%s (%s)\t%s\t%s\n", r.Metric, r.Unit, r.Group, r.Note)
			continue
		}
		diff, pct := signedValue(r.Unit, r.Diff), fmt.Sprintf("%+.1f%%", r.DiffPct)
		if r.DiffCI != nil && r.DiffPctCI != nil {
			diff += fmt.Sprintf(" [%s..%s]", signedValue(r.Unit, r.DiffCI[0]), signedValue(r.Unit, r.DiffCI[1]))
			pct += fmt.Sprintf(" [%+.1f%%..%+.1f%%]", r.DiffPctCI[0], r.DiffPctCI[1])
		}
		if mediansApart(r) {
			// The medians point the other way from the estimate: say so
			// on the row, not only in the footnote.
			pct += " *"
			apart = true
		}
		verdict := r.Verdict
		if color {
			switch r.Verdict {
			case stats.Better:
				verdict = green + verdict + reset
			case stats.Worse:
				verdict = red + verdict + reset
			}
		}
		dir := "lower is better"
		if r.HigherBest {
			dir = "higher is better"
		}
		fmt.Fprintf(tw, "%s (%s, %s)\t%s\t%s\t%s: %s\t%s\t%s\t%s\n", r.Metric, r.Unit, dir, r.Group,
			metricValue(r.Unit, r.Baseline), r.Contender, metricValue(r.Unit, r.Value), diff, pct, verdict)
	}
	tw.Flush()
	if len(rows) > 0 {
		how := "the ratio paired round by round (the geometric mean of the per-round ratios; both sides ran in the same rounds of one study)"
		if !rows[0].Paired {
			how = "the ratio of geometric means with Welch's t interval on logs (the studies ran at different times, so drift between them is not controlled)"
		}
		fmt.Fprintf(w, "Baseline and Contender are medians. Diff %%, Diff and their intervals come from one estimator, %s: Diff %% is the ratio less 1, Diff the same change on the baseline's median. "+
			"Verdicts are judged over all %d rows at once (Holm's adjustment, as show's), and each [interval] is Holm-adjusted to match its verdict: "+
			"at the level Holm judged the row (95%% simultaneous over the undecided rows, wider than a row's own 95%% CI, which the JSON keeps), so it excludes 0 exactly when the verdict is better or worse.\n", how, len(rows))
		if apart {
			fmt.Fprintln(w, "* the two medians differ the other way: the rounds' ratios and the medians disagree, and the verdict judges the ratio.")
		}
	}
}

// mediansApart is true when the difference of the medians has the other
// sign from the estimated difference.
func mediansApart(r stats.Row) bool {
	d := r.Value - r.Baseline
	return (d > 0 && r.Diff < 0) || (d < 0 && r.Diff > 0)
}

func metricValue(unit string, v float64) string {
	if unit == "µs" {
		return hist.FormatMicros(v)
	}
	return fmt.Sprintf("%.0f", v)
}

func signedValue(unit string, v float64) string {
	sign := "+"
	if v < 0 {
		sign, v = "-", -v
	}
	return sign + metricValue(unit, v)
}
