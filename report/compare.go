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

// CompareTable writes comparison rows: Metric, Group, Baseline, Contender,
// Diff, Diff %, 95% CI, verdict. color paints better green and worse red.
func CompareTable(w io.Writer, baseLabel string, rows []stats.Row, color bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Metric\tGroup\tBaseline (%s)\tContender\tDiff\tDiff %%\t95%% CI\tverdict\n", baseLabel)
	for _, r := range rows {
		if r.Note != "" {
			fmt.Fprintf(tw, "%s (%s)\t%s\t%s\n", r.Metric, r.Unit, r.Group, r.Note)
			continue
		}
		ci := "-"
		if r.DiffPctCI != nil {
			ci = fmt.Sprintf("%+.1f%% .. %+.1f%%", r.DiffPctCI[0], r.DiffPctCI[1])
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
		fmt.Fprintf(tw, "%s (%s, %s)\t%s\t%s\t%s: %s\t%s\t%+.1f%%\t%s\t%s\n", r.Metric, r.Unit, dir, r.Group,
			metricValue(r.Unit, r.Baseline), r.Contender, metricValue(r.Unit, r.Value), signedValue(r.Unit, r.Diff),
			r.DiffPct, ci, verdict)
	}
	tw.Flush()
	if len(rows) > 0 {
		if rows[0].Paired {
			fmt.Fprintln(w, "Diff % and its 95% CI come from the ratio paired round by round (both sides ran in the same rounds of one study).")
		} else {
			fmt.Fprintln(w, "Diff % and its 95% CI come from Welch's t on logs: the studies ran at different times, so drift between them is not controlled.")
		}
	}
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
