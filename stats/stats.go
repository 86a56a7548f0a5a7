// Package stats turns a study's runs into answers: per group (series x
// durability x clients, a series being a placement, with its driver and
// swept option values and cache state when the study varied them) the
// median throughput and p99 over its rounds with a 95% t interval on logs
// and the coefficient of variation, and for every series that is not a
// baseline its throughput ratio to its baseline (the baseline placement in
// the same swept combination) paired round by round (paired.go), with 95%
// and 90% intervals and one of four verdicts: better, worse, equivalent
// (within the study's margin) or inconclusive. Throughput is the study's
// figure: ops/s, or the workload's own (tpmC, docs/s, or a query set's
// elapsed time, where lower is better). Fewer than MinRounds rounds give
// no interval rather than a fake one. Everything is computed from the
// stored runs whenever results are shown, so old studies are judged the
// same way.
package stats

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tierbench/tierbench/results"
)

// Group is one placement x durability x clients cell over its rounds. Its
// JSON is an element of `groups` in `show --format json`.
type Group struct {
	// Series is the placement, or placement/driver when the study ran
	// several drivers (results.Study.Series). Its JSON name stays
	// "placement", as `show --format json` has always printed it.
	Series     string `json:"placement"`
	Durability string `json:"durability"`
	Clients    int    `json:"clients"`
	N          int    `json:"n"`
	Failed     int    `json:"failed"`
	// Disturbed counts its ok runs marked disturbed by other processes
	// (results.Run.Disturbed); they are among the N.
	Disturbed        int         `json:"disturbed,omitempty"`
	ThroughputMedian float64     `json:"throughput_median"`
	ThroughputCI     *[2]float64 `json:"throughput_ci95"`
	ThroughputCV     float64     `json:"throughput_cv"`
	P99Median        float64     `json:"p99_us_median"`
	P50Median        float64     `json:"p50_us_median"`
	// Ratio is the paired ratio to the baseline group (stats.Paired):
	// the geometric mean of the per-round ratios.
	Ratio float64 `json:"ratio_vs_baseline"`
	// RatioCI is the interval that matches the verdict: adjusted with
	// the study's family (simultaneous.go), at RatioCILevel;
	// RatioCIPerComparison is the comparison's own 95% interval.
	RatioCI              *[2]float64 `json:"ratio_ci95"`
	RatioCILevel         float64     `json:"ratio_ci_level,omitempty"`
	RatioCIPerComparison *[2]float64 `json:"ratio_ci95_per_comparison,omitempty"`
	// Why says why a comparison with rounds enough has no interval.
	Why string `json:"why,omitempty"`
	// RatioCI90 is the interval the equivalence test reads.
	RatioCI90 *[2]float64 `json:"ratio_ci90,omitempty"`
	// Pairs are the rounds compared; RoundsLeftOut those where only one
	// side has an ok run.
	Pairs         int    `json:"pairs,omitempty"`
	RoundsLeftOut int    `json:"rounds_left_out,omitempty"`
	Verdict       string `json:"verdict"`
	// P and PAdjusted are the comparison's raw p value and the one its
	// verdict is judged on, after the study's guard against many
	// comparisons (family.go); absent without an interval.
	P         *float64 `json:"p,omitempty"`
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	// JournalWritesMedian and JournalFlushesMedian are the writes and
	// flushes per second on the journal's tier (JournalWrites), with a CI
	// of the writes; zero when not measured.
	JournalWritesMedian  float64     `json:"journal_writes_per_s_median,omitempty"`
	JournalWritesCI      *[2]float64 `json:"journal_writes_per_s_ci95,omitempty"`
	JournalFlushesMedian float64     `json:"journal_flushes_per_s_median,omitempty"`

	// Runs are the group's ok runs, in execution order.
	Runs []results.Run `json:"-"`
	// Failures are the errors of its runs that did not finish ok, in
	// execution order: why there is nothing to compare when N is 0.
	Failures []string `json:"-"`
	// throughputs are the ok runs' throughputs in the study's figure
	// (results.Study.Throughput), in Runs' order.
	throughputs []float64
	// lowerIsBetter is true when that figure is an elapsed time.
	lowerIsBetter bool
	// margin is the study's equivalence margin.
	margin float64
	// base is the group this one is compared with; nil for a baseline.
	base *Group
	// cmp is the comparison the ratio fields show, adjusted with the
	// study's family; loadCmp that of the load generator's CPU per op.
	cmp     Comparison
	loadCmp *Comparison
}

// LoadPerOp is the load generator's CPU per operation (µs) of each ok run
// that recorded one.
func (g *Group) LoadPerOp() []float64 {
	var v []float64
	for _, r := range g.Runs {
		if t := r.Telemetry; t != nil && t.LoadGen != nil && t.LoadGen.CPUUsPerOp > 0 {
			v = append(v, t.LoadGen.CPUUsPerOp)
		}
	}
	return v
}

// LoadPerOpRatio compares the load generator's CPU per operation with the
// baseline group's (two drivers on the same server: which costs it more
// CPU per transaction), paired by round; lower is better. ok is false for
// a baseline group or without figures on both sides.
func (g *Group) LoadPerOpRatio() (c Comparison, ok bool) {
	if g.loadCmp != nil {
		return *g.loadCmp, true
	}
	return g.loadPerOpRatio()
}

// loadPerOpRatio computes LoadPerOpRatio before the study's adjustment.
func (g *Group) loadPerOpRatio() (c Comparison, ok bool) {
	if g.base == nil {
		return Comparison{}, false
	}
	mine, theirs := g.byRound(loadPerOp), g.base.byRound(loadPerOp)
	if len(mine) == 0 || len(theirs) == 0 {
		return Comparison{}, false
	}
	c = Paired(mine, theirs, false, g.margin)
	return c, c.Pairs > 0
}

// loadPerOp is a run's load generator CPU per operation (µs), 0 when not
// recorded.
func loadPerOp(r results.Run) float64 {
	if t := r.Telemetry; t != nil && t.LoadGen != nil {
		return t.LoadGen.CPUUsPerOp
	}
	return 0
}

// byRound maps each round (results.Run.Repeat) of the group's ok runs to
// the figure of, leaving out runs where it is not positive. A round has one
// run of a group: on resume a failed attempt is replaced.
func (g *Group) byRound(of func(results.Run) float64) map[int]float64 {
	out := map[int]float64{}
	for _, r := range g.Runs {
		if v := of(r); v > 0 {
			out[r.Repeat] = v
		}
	}
	return out
}

// Rounds maps each round to the group's throughput in that round.
func (g *Group) Rounds() map[int]float64 {
	out := map[int]float64{}
	for i, r := range g.Runs {
		out[r.Repeat] = g.throughputs[i]
	}
	return out
}

// NoRunText says why a group has no ok run, for sentences that would
// otherwise compare it: "no ok run (2 failed: tier tiny full)", or "not
// run" when no run of it was stored (an interrupted study).
func (g *Group) NoRunText() string {
	return NoRunText(g.Failures)
}

// NoRunText says why a set of runs with the given failure errors has no ok
// run (see Group.NoRunText).
func NoRunText(failures []string) string {
	if len(failures) == 0 {
		return "not run"
	}
	first := shortError(failures[0])
	same := true
	for _, f := range failures[1:] {
		same = same && shortError(f) == first
	}
	if same {
		return fmt.Sprintf("no ok run (%d failed: %s)", len(failures), first)
	}
	return fmt.Sprintf("no ok run (%d failed; the first: %s)", len(failures), first)
}

// maxErrorText bounds a failure's error in a sentence; the whole error is
// in the run's record and the failed-runs list.
const maxErrorText = 120

// shortError is an error on one line, cut to maxErrorText characters.
func shortError(e string) string {
	e = strings.Join(strings.Fields(e), " ")
	if e == "" {
		return "no error recorded"
	}
	if r := []rune(e); len(r) > maxErrorText {
		return string(r[:maxErrorText-1]) + "…"
	}
	return e
}

// Key identifies a group.
type Key struct {
	Series     string // the placement, or placement/driver
	Durability string
	Clients    int
}

// Key returns the group's key.
func (g *Group) Key() Key { return Key{g.Series, g.Durability, g.Clients} }

// Throughputs returns the group's per-run throughputs, in the study's
// figure: ops/s, or the workload's own (tpmC).
func (g *Group) Throughputs() []float64 { return g.throughputs }

// Analysis is a study's groups in report order: durability, clients, then
// placement in the study's order.
type Analysis struct {
	Groups []*Group
	// Comparisons are every comparison the study judged, adjusted
	// together (family.go).
	Comparisons []*Judged
	index       map[Key]*Group
	versus      map[[2]Key]*Group
}

// Group finds a group.
func (a *Analysis) Group(k Key) *Group { return a.index[k] }

// Analyze computes every group of st from its runs.
func Analyze(st *results.Study, runs []results.Run) *Analysis {
	if st.SLO != nil && st.Search != nil {
		// A capacity study's figure is each search's capacity, in ops/s:
		// the middle of its final bracket, compared as any figure.
		runs = capacityRuns(st, runs)
	}
	a := &Analysis{index: map[Key]*Group{}}
	baselineOf := map[string]string{}
	crashed := map[string]bool{}
	for _, p := range st.Series() {
		baselineOf[p.Name] = st.BaselineOf(p)
		crashed[p.Name] = p.CrashRun()
	}
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			for _, p := range st.Series() {
				g := &Group{Series: p.Name, Durability: d, Clients: c, lowerIsBetter: !st.HigherIsBetter(), margin: st.EquivalenceMargin()}
				a.Groups = append(a.Groups, g)
				a.index[g.Key()] = g
			}
		}
	}
	for _, r := range runs {
		g := a.index[Key{st.SeriesOf(r), r.Durability, r.Clients}]
		if g == nil {
			continue
		}
		tp := st.Throughput(r)
		switch {
		case r.Status == results.RunOK && math.IsNaN(tp):
			// An elapsed time over an incomplete pass is no figure.
			g.Failed++
			g.Failures = append(g.Failures, "not every op ran in the measured window: raise duration above one pass")
		case r.Status == results.RunOK:
			g.Runs = append(g.Runs, r)
			g.throughputs = append(g.throughputs, tp)
			if r.Disturbed {
				g.Disturbed++
			}
		default:
			g.Failed++
			g.Failures = append(g.Failures, r.Error)
		}
	}
	for _, g := range a.Groups {
		summarize(st, g)
	}
	for _, g := range a.Groups {
		if crashed[g.Series] {
			g.Verdict = CrashRun
			continue
		}
		b := baselineOf[g.Series]
		if g.Series != b {
			g.base = a.index[Key{b, g.Durability, g.Clients}]
		}
		compareWithBaseline(g, a.index[Key{b, g.Durability, g.Clients}], g.Series == b)
	}
	a.judge(st)
	return a
}

func summarize(st *results.Study, g *Group) {
	g.N = len(g.Runs)
	if g.N == 0 {
		return
	}
	tp := g.Throughputs()
	g.ThroughputMedian = Median(tp)
	g.ThroughputCV = CV(tp)
	p99 := make([]float64, g.N)
	p50 := make([]float64, g.N)
	for i, r := range g.Runs {
		p99[i], p50[i] = r.Latency.P99, r.Latency.P50
	}
	g.P99Median, g.P50Median = Median(p99), Median(p50)
	journal(st, g)
	g.ThroughputCI = LogInterval(tp)
}

func compareWithBaseline(g, base *Group, isBase bool) {
	switch {
	case isBase:
		g.Verdict = IsBaseline
		if g.N > 0 {
			g.Ratio = 1
		}
		return
	case g.N == 0 || base == nil || base.N == 0:
		g.Verdict = NoData
		return
	}
	g.cmp = Paired(g.Rounds(), base.Rounds(), !g.lowerIsBetter, g.margin)
	g.fromCmp()
}

// fromCmp shows g.cmp in g's ratio fields.
func (g *Group) fromCmp() {
	c := g.cmp
	if g.Verdict == IsBaseline || c.Verdict == "" {
		return // not compared: a baseline, no data, a crash run
	}
	g.Ratio, g.RatioCI, g.RatioCI90, g.Verdict = c.Ratio, c.ShownCI(), c.CI90, c.Verdict
	g.RatioCIPerComparison, g.RatioCILevel, g.Why = c.CI95, c.AdjustedLevel, c.Why
	g.Pairs, g.RoundsLeftOut = c.Pairs, c.LeftOut
	g.P, g.PAdjusted = finite(c.P), finite(c.PAdjusted)
	if c.Pairs == 0 {
		// Both sides ran, never in the same round: nothing pairs.
		g.Ratio = 0
	}
}

// Comparison is g's comparison with its baseline as computed by Analyze.
func (g *Group) Comparison() Comparison {
	return g.cmp
}

// Median of v (v is not modified). NaN for an empty slice.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Mean of v.
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// CV is the sample standard deviation over the mean (0 for fewer than 2).
func CV(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := Mean(v)
	if m == 0 {
		return 0
	}
	return sd(v) / m
}

// MinSamplesFor is the fewest recorded operations for which a percentile is
// shown: the tail beyond it must hold at least one sample, so p99 needs 100,
// p99.9 needs 1,000 and p99.99 needs 10,000.
func MinSamplesFor(percentile float64) int64 {
	if percentile <= 50 {
		return 1
	}
	n := 1 / (1 - percentile/100)
	return int64(math.Ceil(n - 1e-6)) // 1/(1-0.999) is 1000.0000000000009 in floating point
}

// Versus returns a copy of g holding its ratio to other (the same placement
// in another durability mode, say) with a CI and verdict; g is unchanged.
func Versus(g, other *Group) *Group {
	c := *g
	c.Ratio, c.RatioCI, c.RatioCI90, c.Verdict, c.Pairs, c.RoundsLeftOut = 0, nil, nil, "", 0, 0
	c.RatioCIPerComparison, c.RatioCILevel, c.Why = nil, 0, ""
	c.cmp, c.P, c.PAdjusted, c.loadCmp = Comparison{}, nil, nil, nil
	compareWithBaseline(&c, other, false)
	return &c
}
