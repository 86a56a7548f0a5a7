package stats

import (
	"fmt"
	"strings"
)

// A regression gate (`compare --fail-on`) turns a compare's verdicts into
// pass or fail for a CI job. It reads the verdicts as they are, judged
// together over every row of the compare (Adjust), so a gate over many
// metrics and groups is no likelier to fail on noise than one over one.

// What fails a gate.
const (
	// FailOnWorse fails on any comparison judged worse: a regression
	// shown at 5% after the guard. An inconclusive one passes.
	FailOnWorse = "worse"
	// FailOnNotEquivalent fails on any comparison not judged equivalent
	// within the study's margin: worse, better, inconclusive, or one
	// with nothing to compare.
	FailOnNotEquivalent = "not-equivalent"
)

// FailOnValues are the values --fail-on takes.
var FailOnValues = []string{FailOnWorse, FailOnNotEquivalent}

// Gate is a gate's judgement of a compare's rows.
type Gate struct {
	FailOn string
	// Tolerance, under worse, lets a worse row pass unless its whole
	// interval (Holm-adjusted, the one printed beside its verdict) lies
	// beyond it (a fraction: 0.05 fails only a regression shown
	// to exceed 5%): between two studies, run apart, a shift of a few
	// percent is often real yet no regression of the code.
	Tolerance float64
	// Tolerated are the worse rows the tolerance let pass.
	Tolerated []Row
	// Rows counts the compare's rows, those with nothing to compare
	// included.
	Rows int
	// Failed are the rows that fail the gate, in the compare's order.
	Failed []Row
	// NoData are the rows with nothing to compare (a side without an ok
	// run): they fail not-equivalent, and under worse are named, since a
	// group that did not run cannot show a regression.
	NoData []Row
}

// Condition says in words what fails the gate: "worse", "not equivalent".
func (g Gate) Condition() string {
	c := strings.ReplaceAll(g.FailOn, "-", " ")
	if g.Tolerance > 0 {
		c += fmt.Sprintf(" by more than %g%%", g.Tolerance*100)
	}
	return c
}

// Passed reports whether no row failed the gate.
func (g Gate) Passed() bool { return len(g.Failed) == 0 }

// JudgeGate judges rows (stats.Compare's, adjusted together) under
// failOn, one of FailOnValues, with a tolerance (a fraction, 0 for none)
// that only worse takes.
func JudgeGate(rows []Row, failOn string, tolerance float64) (Gate, error) {
	fails := map[string]func(Row) bool{
		FailOnWorse:         func(r Row) bool { return r.Verdict == Worse },
		FailOnNotEquivalent: func(r Row) bool { return r.Verdict != Equivalent },
	}[failOn]
	switch {
	case fails == nil:
		return Gate{}, fmt.Errorf("unknown --fail-on %q: use %s", failOn, strings.Join(FailOnValues, " or "))
	case tolerance < 0 || tolerance >= 1:
		return Gate{}, fmt.Errorf("--tolerance %g%% must be from 0%% to below 100%%, e.g. --tolerance 5%%", tolerance*100)
	case tolerance > 0 && failOn != FailOnWorse:
		return Gate{}, fmt.Errorf("--tolerance goes with --fail-on worse (not-equivalent judges within the study's margin); remove one")
	}
	g := Gate{FailOn: failOn, Rows: len(rows), Tolerance: tolerance}
	for _, r := range rows {
		if r.Verdict == NoData {
			g.NoData = append(g.NoData, r)
		}
		switch {
		case !fails(r):
		case tolerance > 0 && !beyond(r, tolerance):
			g.Tolerated = append(g.Tolerated, r)
		default:
			g.Failed = append(g.Failed, r)
		}
	}
	return g, nil
}

// beyond reports whether row r's whole interval of its difference (the
// adjusted one its verdict matches) lies past tolerance on the worse side.
func beyond(r Row, tolerance float64) bool {
	ci := r.DiffPctCI
	if ci == nil {
		return false
	}
	if r.HigherBest {
		return ci[1] < -tolerance*100
	}
	return ci[0] > tolerance*100
}

// Ratio is the row's ratio of contender to baseline, with its adjusted
// interval (nil without one): what its Diff % is read from.
func (r Row) Ratio() (ratio float64, ci *[2]float64) {
	ratio = 1 + r.DiffPct/100
	if r.DiffPctCI != nil {
		ci = &[2]float64{1 + r.DiffPctCI[0]/100, 1 + r.DiffPctCI[1]/100}
	}
	return ratio, ci
}
