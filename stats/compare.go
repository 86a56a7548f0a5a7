package stats

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/results"
)

// Metric is a figure compared between runs, with the direction of "better".
type Metric struct {
	Name           string
	Unit           string
	HigherIsBetter bool
	Of             func(results.Run) float64
}

// Metrics compared by `tierbench compare`.
var Metrics = []Metric{
	{"throughput", "ops/s", true, func(r results.Run) float64 { return r.ThroughputOpsS }},
	{"p50 latency", "µs", false, func(r results.Run) float64 { return r.Latency.P50 }},
	{"p99 latency", "µs", false, func(r results.Run) float64 { return r.Latency.P99 }},
}

// Side is one side of a comparison: a label and its ok runs per group.
type Side struct {
	Label string
	// Runs by group label (e.g. "wal-ram sync c=16"); groups present on both
	// sides are compared.
	Runs map[string][]results.Run
	// Order lists group labels in display order.
	Order []string
	// Failed holds, by group label, the errors of runs that did not finish
	// ok: why a group has nothing to compare.
	Failed map[string][]string
	// Study is the study the runs come from: two sides of one study are
	// compared round by round (Paired), sides of two studies are not
	// (Welch), since nothing ran them back to back.
	Study string
	// Margin is the study's equivalence margin.
	Margin float64
}

// Row is one metric of one group: baseline vs contender. Baseline and
// Value are the two sides' medians, as measured. Diff, DiffPct, their CIs
// and the verdict all come from one estimator, the comparison's ratio R
// (paired by round within a study, Welch's between studies): DiffPct is
// x 100 and Diff the same change in the metric's unit, on the
// baseline's median, Baseline x. So they never disagree in sign;
// Value - Baseline may, when the rounds' ratios and the medians point
// different ways.
type Row struct {
	Metric    string  `json:"metric"`
	Unit      string  `json:"unit"`
	Group     string  `json:"group"`
	Contender string  `json:"contender"`
	Baseline  float64 `json:"baseline"`
	Value     float64 `json:"value"`
	Diff      float64 `json:"diff"`
	// DiffCI and DiffPctCI are the intervals that match the verdict,
	// adjusted over every row at CILevel (simultaneous.go);
	// DiffPctCIPerComparison is the row's own 95% interval.
	DiffCI                 *[2]float64 `json:"diff_ci95"`
	DiffPct                float64     `json:"diff_pct"`
	DiffPctCI              *[2]float64 `json:"diff_pct_ci95"`
	CILevel                float64     `json:"ci_level,omitempty"`
	DiffPctCIPerComparison *[2]float64 `json:"diff_pct_ci95_per_comparison,omitempty"`
	Verdict                string      `json:"verdict"`
	// P and PAdjusted are the comparison's raw p value and the one its
	// verdict is judged on, Holm-adjusted over every row of the compare
	// (Adjust); absent without an interval.
	P         *float64 `json:"p,omitempty"`
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	// Paired says the runs were compared round by round (two sides of
	// one study); between studies the comparison is Welch's, and drift
	// between the studies is not controlled.
	Paired     bool `json:"paired"`
	HigherBest bool `json:"higher_is_better"`
	// Note, on a row with verdict "no data", says which side has no ok run
	// and why: "wal-quick: no ok run (2 failed: tier full), nothing to
	// compare".
	Note string `json:"note,omitempty"`
}

// Compare compares each contender with the baseline side, metric by metric,
// over the groups both have: Baseline and Value are medians over the
// runs; Diff, DiffPct, their CIs and the verdict come from the ratio on
// logs, paired by round when both sides are of one study (Paired) and
// Welch's otherwise (see Row).
func Compare(base Side, contenders []Side) []Row {
	var rows []Row
	var judged []*Comparison
	var at []int
	for _, c := range contenders {
		paired := base.Study != "" && base.Study == c.Study
		for _, group := range base.Order {
			b, cr := base.Runs[group], c.Runs[group]
			if len(b) == 0 || len(cr) == 0 {
				if note := nothingToCompare(group, base, c); note != "" {
					rows = append(rows, Row{Metric: Metrics[0].Name, Unit: Metrics[0].Unit, Group: group, Contender: c.Label,
						HigherBest: Metrics[0].HigherIsBetter, Verdict: NoData, Note: note, Paired: paired})
				}
				continue
			}
			for _, m := range Metrics {
				bv, cv := values(b, m), values(cr, m)
				row := Row{Metric: m.Name, Unit: m.Unit, Group: group, Contender: c.Label, HigherBest: m.HigherIsBetter,
					Baseline: Median(bv), Value: Median(cv), Paired: paired}
				var cmp Comparison
				if paired {
					cmp = Paired(rounds(cr, m), rounds(b, m), m.HigherIsBetter, base.Margin)
				} else {
					cmp = Welch(cv, bv, m.HigherIsBetter, base.Margin)
				}
				judged, at = append(judged, &cmp), append(at, len(rows))
				if cmp.Ratio > 0 {
					row.DiffPct = (cmp.Ratio - 1) * 100
					row.Diff = row.Baseline * (cmp.Ratio - 1)
				}
				rows = append(rows, row)
			}
		}
	}
	// Every row is a comparison: judged together, as a study's are.
	Adjust(judged)
	for i, c := range judged {
		r := &rows[at[i]]
		r.Verdict, r.P, r.PAdjusted = c.Verdict, finite(c.P), finite(c.PAdjusted)
		if ci := c.ShownCI(); ci != nil {
			r.DiffPctCI = &[2]float64{(ci[0] - 1) * 100, (ci[1] - 1) * 100}
			r.DiffCI = &[2]float64{r.Baseline * (ci[0] - 1), r.Baseline * (ci[1] - 1)}
			r.CILevel = c.AdjustedLevel
		}
		if ci := c.CI95; ci != nil {
			r.DiffPctCIPerComparison = &[2]float64{(ci[0] - 1) * 100, (ci[1] - 1) * 100}
		}
	}
	return rows
}

// rounds maps each run's round to its figure of m.
func rounds(runs []results.Run, m Metric) map[int]float64 {
	out := map[int]float64{}
	for _, r := range runs {
		out[r.Repeat] = m.Of(r)
	}
	return out
}

// nothingToCompare says why group cannot be compared between base and c,
// naming each side without an ok run; "" when a side's matrix does not
// have the group (studies with other client counts) or neither side has
// anything of it.
func nothingToCompare(group string, base, c Side) string {
	var why []string
	found := false
	for _, s := range []Side{base, c} {
		failed := s.Failed[group]
		if len(s.Runs[group]) > 0 || len(failed) > 0 {
			found = true
		} else if !slices.Contains(s.Order, group) {
			return ""
		}
		if len(s.Runs[group]) == 0 {
			why = append(why, s.Label+": "+NoRunText(failed))
		}
	}
	if !found {
		return ""
	}
	return strings.Join(why, "; ") + ", nothing to compare"
}

func values(runs []results.Run, m Metric) []float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = m.Of(r)
	}
	return v
}

// StudySide groups a study's ok runs by placement, durability and clients,
// optionally keeping only one placement (whose name is then left out of the
// group label, so placements of one study can be compared with each other).
func StudySide(label string, st *results.Study, runs []results.Run, onlyPlacement string) Side {
	s := Side{Label: label, Runs: map[string][]results.Run{}, Failed: map[string][]string{}, Study: st.ID, Margin: st.EquivalenceMargin()}
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			for _, p := range st.Placements {
				if onlyPlacement != "" && p.Name != onlyPlacement {
					continue
				}
				s.Order = append(s.Order, groupLabel(p.Name, d, c, onlyPlacement != ""))
			}
		}
	}
	for _, r := range runs {
		if onlyPlacement != "" && r.Placement != onlyPlacement {
			continue
		}
		s.add(groupLabel(r.Placement, r.Durability, r.Clients, onlyPlacement != ""), r)
	}
	return s
}

// add files r under group k: its ok runs are compared, the others explain
// a gap.
func (s *Side) add(k string, r results.Run) {
	if r.Status == results.RunOK {
		s.Runs[k] = append(s.Runs[k], r)
	} else {
		s.Failed[k] = append(s.Failed[k], r.Error)
	}
}

// DurabilitySide keeps one durability mode of a study, grouped by placement
// and clients, so the modes of one study can be compared with each other
// (FSYNC against LOG_ONLY on every placement).
func DurabilitySide(st *results.Study, runs []results.Run, durability string) Side {
	s := Side{Label: durability, Runs: map[string][]results.Run{}, Failed: map[string][]string{}, Study: st.ID, Margin: st.EquivalenceMargin()}
	label := func(placement string, clients int) string { return fmt.Sprintf("%s c=%d", placement, clients) }
	for _, c := range st.Clients {
		for _, p := range st.Placements {
			s.Order = append(s.Order, label(p.Name, c))
		}
	}
	for _, r := range runs {
		if r.Durability == durability {
			s.add(label(r.Placement, r.Clients), r)
		}
	}
	return s
}

func groupLabel(placement, durability string, clients int, omitPlacement bool) string {
	if omitPlacement {
		return fmt.Sprintf("%s c=%d", durability, clients)
	}
	return fmt.Sprintf("%s %s c=%d", placement, durability, clients)
}

// Comparable explains why two studies should not be compared: a different
// engine, workload, record count or machine (hostenv.Env.SameMachine:
// between machines a difference may be the machine's, not the change's).
// Empty when they are comparable.
func Comparable(a, b *results.Study) []string {
	var why []string
	if a.Engine != b.Engine {
		why = append(why, fmt.Sprintf("engine differs: %s has %s, %s has %s", a.ID, a.Engine, b.ID, b.Engine))
	}
	if a.Workload != b.Workload {
		why = append(why, fmt.Sprintf("workload differs: %s has %s, %s has %s", a.ID, a.Workload, b.ID, b.Workload))
	}
	if ra, rb := a.WorkloadParams["records"], b.WorkloadParams["records"]; ra != rb {
		why = append(why, fmt.Sprintf("record count differs: %s has %s, %s has %s", a.ID, ra, b.ID, rb))
	}
	if !a.Env.SameMachine(b.Env) {
		why = append(why, fmt.Sprintf("host differs: %s ran on %s, %s on %s", a.ID, a.Env.Machine(), b.ID, b.Env.Machine()))
	}
	return why
}
