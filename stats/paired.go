package stats

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tierbench/tierbench/results"
)

// Verdicts on a comparison of two series: the words `show`, the reports
// and the JSON use, and no others.
const (
	// Better and Worse: the 95% CI of the ratio excludes 1.
	Better = "better"
	Worse  = "worse"
	// Equivalent: the 90% CI lies within [1/(1+m), 1+m] for the study's
	// margin m (two one-sided tests at 5%, TOST).
	Equivalent = "equivalent"
	// Inconclusive is every other outcome, a comparison with too few
	// rounds for an interval among them.
	Inconclusive = "inconclusive"
)

// States of a group that is not judged against anything.
const (
	IsBaseline = "baseline"
	NoData     = "no data"
	// CrashRun is a series that ran with a crash: its window ends at the
	// crash, so its throughput is not compared; the crash trade-off says
	// what the crash cost (results.Placement.CrashRun).
	CrashRun = "crash run"
)

// MinRounds is the fewest paired rounds (or ok runs, for a group's own
// interval) that give a 95% interval: a t interval needs two values to
// estimate a spread. With two the interval is wide (t = 12.7), as it
// should be.
const MinRounds = 2

// Comparison is the ratio of a series to the one it is compared with,
// computed on logs (throughput ratios multiply), with its intervals and
// verdict.
type Comparison struct {
	// Ratio is exp(mean d): the geometric mean of the per-round ratios
	// when paired, the ratio of geometric means when not.
	Ratio float64
	// CI95 and CI90 are nil below MinRounds.
	CI95, CI90 *[2]float64
	// Pairs is the number of rounds compared (paired), or the smaller
	// side's ok runs (unpaired).
	Pairs int
	// LeftOut counts rounds where only one side has an ok run: left out
	// of a paired comparison.
	LeftOut int
	// Paired is false for a Welch comparison between studies, whose
	// drift is not controlled.
	Paired  bool
	Verdict string
	// P is the two-sided p value of "the ratio is 1" (a t test on the
	// logs), PEquivalence that of "the ratio lies outside the margin" (the
	// larger of the two one-sided tests, TOST); both NaN without an
	// interval. PAdjusted and PEquivalenceAdjusted are the same after the
	// study's guard against many comparisons (family.go); Verdict is
	// judged on them once the study's family is adjusted, on the raw ones
	// before.
	P, PEquivalence                 float64
	PAdjusted, PEquivalenceAdjusted float64
	// higherIsBetter says which way better lies, for the verdict the
	// adjusted p values give.
	higherIsBetter bool
	// AdjustedCI95 is the interval that matches the adjusted verdict
	// (simultaneous.go); nil until the comparison is judged in a family.
	AdjustedCI95 *[2]float64
	// AdjustedLevel is AdjustedCI95's confidence level.
	AdjustedLevel float64
	// Why says why a comparison with rounds enough has no interval: every
	// round gave the same ratio.
	Why string
	// m, se and df are the log ratio, its standard error and degrees of
	// freedom, kept to redraw the intervals at another level: a look's
	// (sequential.go) or the family's (simultaneous.go). Share is the part
	// of alpha the look spends, 0 when judged without looks.
	m, se, df float64
	Share     float64
}

// HalfWidth is the relative half-width of the 95% CI on the ratio's
// log scale, exp(t s / sqrt(n)) - 1: 0.05 for "ratio +-5%". +Inf without
// an interval.
func (c Comparison) HalfWidth() float64 {
	if c.Ratio <= 0 {
		return math.Inf(1)
	}
	return halfWidth(c.CI95)
}

// halfWidth is the relative half-width of an interval symmetric on the
// log scale (a t interval on logs): sqrt(hi/lo) - 1; +Inf for none.
func halfWidth(ci *[2]float64) float64 {
	if ci == nil {
		return math.Inf(1)
	}
	return math.Sqrt(ci[1]/ci[0]) - 1
}

// Paired compares a with b round by round: d_r = ln a_r - ln b_r over the
// rounds both have a positive figure for; ratio exp(mean d) with Student t
// intervals of n-1 degrees of freedom. Pairing takes the drift between
// rounds out of the comparison, since both sides of a pair ran back to
// back under the same machine conditions. Capacities are compared so too:
// each round's is the middle of its search's final bracket, whose
// rounding errors do not repeat from round to round (stats/capacity.go).
func Paired(a, b map[int]float64, higherIsBetter bool, margin float64) Comparison {
	c := Comparison{Paired: true, higherIsBetter: higherIsBetter}
	c.noTest()
	var d []float64
	for _, r := range roundsOf(a, b) {
		va, okA := a[r]
		vb, okB := b[r]
		if okA && okB && va > 0 && vb > 0 {
			d = append(d, math.Log(va)-math.Log(vb))
		} else {
			c.LeftOut++
		}
	}
	c.Pairs = len(d)
	if len(d) == 0 {
		c.Verdict = NoData
		return c
	}
	m := Mean(d)
	c.Ratio = math.Exp(m)
	if len(d) < MinRounds {
		c.Verdict = Inconclusive
		return c
	}
	se := sd(d) / math.Sqrt(float64(len(d)))
	c.test(m, se, float64(len(d)-1), margin)
	return c
}

// test fills the intervals, p values and unadjusted verdict of a log
// ratio m with standard error se on df degrees of freedom.
func (c *Comparison) test(m, se, df, margin float64) {
	if margin <= 0 {
		margin = results.DefaultMargin
	}
	c.m, c.se, c.df = m, se, df
	if noSpread(m, se) {
		c.Verdict, c.Why = Inconclusive, ZeroSpread
		return
	}
	c.CI95, c.CI90 = expInterval(m, se, df)
	c.P, c.PEquivalence = pValues(m, se, df, math.Log1p(margin))
	c.PAdjusted, c.PEquivalenceAdjusted = c.P, c.PEquivalence
	c.Verdict = Judge(*c.CI95, *c.CI90, c.higherIsBetter, margin)
}

// noTest marks a comparison without an interval: no p values.
func (c *Comparison) noTest() {
	c.P, c.PEquivalence, c.PAdjusted, c.PEquivalenceAdjusted = math.NaN(), math.NaN(), math.NaN(), math.NaN()
}

// pValues are the two-sided p value of m = 0 and the TOST p value of
// |m| >= bound, for a t statistic with df degrees of freedom. Their
// thresholds at 5% are the verdicts' intervals: p < 0.05 exactly when the
// 95% CI excludes 1, pEq < 0.05 exactly when the 90% CI lies within the
// margin. A spread of 0 (identical ratios every round) decides outright.
func pValues(m, se, df, bound float64) (p, pEq float64) {
	if se == 0 {
		p, pEq = 1, 1
		if m != 0 {
			p = 0
		}
		if math.Abs(m) < bound {
			pEq = 0
		}
		return p, pEq
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	p = 2 * t.Survival(math.Abs(m)/se)
	below := t.Survival((m + bound) / se) // H0: m <= -bound
	above := t.CDF((m - bound) / se)      // H0: m >= bound
	return p, max(below, above)
}

// Welch compares two sets of runs that did not run in the same rounds
// (two studies): the ratio of geometric means with Welch's t interval on
// logs. It says nothing about drift between them.
func Welch(a, b []float64, higherIsBetter bool, margin float64) Comparison {
	la, lb := logs(a), logs(b)
	c := Comparison{Pairs: min(len(la), len(lb)), higherIsBetter: higherIsBetter}
	c.noTest()
	if len(la) == 0 || len(lb) == 0 {
		c.Verdict = NoData
		return c
	}
	m := Mean(la) - Mean(lb)
	c.Ratio = math.Exp(m)
	if len(la) < MinRounds || len(lb) < MinRounds {
		c.Verdict = Inconclusive
		return c
	}
	va, vb := sq(sd(la))/float64(len(la)), sq(sd(lb))/float64(len(lb))
	se := math.Sqrt(va + vb)
	df := float64(len(la) + len(lb) - 2)
	if se > 0 { // Welch-Satterthwaite
		df = sq(va+vb) / (sq(va)/float64(len(la)-1) + sq(vb)/float64(len(lb)-1))
	}
	c.test(m, se, df, margin)
	return c
}

// LogInterval is the 95% t interval of v's geometric mean (the median of
// log-normal figures), nil below MinRounds values or with one not
// positive.
func LogInterval(v []float64) *[2]float64 {
	l := logs(v)
	if len(l) < MinRounds || len(l) != len(v) {
		return nil
	}
	ci95, _ := expInterval(Mean(l), sd(l)/math.Sqrt(float64(len(l))), float64(len(l)-1))
	return ci95
}

// MeanInterval is the 95% t interval of v's mean, for counts that may be
// zero (lost writes) where LogInterval cannot go; nil below MinRounds
// values.
func MeanInterval(v []float64) *[2]float64 {
	if len(v) < MinRounds {
		return nil
	}
	m, h := Mean(v), tQuantile(0.975, float64(len(v)-1))*sd(v)/math.Sqrt(float64(len(v)))
	return &[2]float64{m - h, m + h}
}

// Judge gives the verdict of a ratio's 95% and 90% intervals: better or
// worse when the 95% CI excludes 1 (which way depends on higherIsBetter),
// equivalent when the 90% CI lies within [1/(1+margin), 1+margin],
// inconclusive otherwise.
func Judge(ci95, ci90 [2]float64, higherIsBetter bool, margin float64) string {
	if margin <= 0 {
		margin = results.DefaultMargin
	}
	switch {
	case ci95[0] > 1:
		if higherIsBetter {
			return Better
		}
		return Worse
	case ci95[1] < 1:
		if higherIsBetter {
			return Worse
		}
		return Better
	case ci90[0] >= 1/(1+margin) && ci90[1] <= 1+margin:
		return Equivalent
	}
	return Inconclusive
}

// tQuantile is Student's t quantile p with df degrees of freedom,
// remembered for whole df (paired rounds): a sequential study's
// simulation asks the same few thousands of times.
func tQuantile(p, df float64) float64 {
	if df != math.Trunc(df) || df > 1000 {
		return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
	}
	k := [2]float64{p, df}
	if q, ok := tQuantiles.Load(k); ok {
		return q.(float64)
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
	tQuantiles.Store(k, q)
	return q
}

// tQuantiles memoizes tQuantile: a pure function's values, never changed.
var tQuantiles sync.Map

// expInterval is exp(m +- t se) at 95% and 90%.
func expInterval(m, se, df float64) (ci95, ci90 *[2]float64) {
	t95, t90 := tQuantile(0.975, df), tQuantile(0.95, df)
	return &[2]float64{math.Exp(m - t95*se), math.Exp(m + t95*se)},
		&[2]float64{math.Exp(m - t90*se), math.Exp(m + t90*se)}
}

// roundsOf is the rounds either side has, ascending.
func roundsOf(a, b map[int]float64) []int {
	var out []int
	for r := range a {
		out = append(out, r)
	}
	for r := range b {
		if _, ok := a[r]; !ok {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// logs is ln of v's positive values.
func logs(v []float64) []float64 {
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if x > 0 {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// sd is the sample standard deviation (0 for fewer than 2 values).
func sd(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := Mean(v)
	ss := 0.0
	for _, x := range v {
		ss += sq(x - m)
	}
	return math.Sqrt(ss / float64(len(v)-1))
}

func sq(x float64) float64 { return x * x }

// WidestCI is the comparison whose 95% CI is widest: what an adaptive
// study waits on.
type WidestCI struct {
	// Found is false when nothing can be compared yet.
	Found bool
	// Label names it: "wal-ram sync c=16 against all-disk", or a group
	// alone when the study compares nothing ("all-disk sync c=16").
	Label     string
	HalfWidth float64
	Pairs     int
}

// Widest finds the comparison with a baseline whose 95% CI half-width is
// widest, +Inf for one with too few paired rounds. Comparisons where a
// side has no ok run at all are left out: no further round is likely to
// mend a cell that always fails. A study without comparisons (one
// placement) waits on its groups' own throughput intervals instead.
func Widest(a *Analysis) WidestCI {
	var w WidestCI
	consider := func(label string, hw float64, pairs int) {
		if !w.Found || hw > w.HalfWidth {
			w = WidestCI{Found: true, Label: label, HalfWidth: hw, Pairs: pairs}
		}
	}
	compared := false
	for _, g := range a.Groups {
		if g.base == nil {
			continue
		}
		compared = true
		if g.N == 0 || g.base.N == 0 {
			continue
		}
		label := fmt.Sprintf("%s %s c=%d against %s", g.Series, g.Durability, g.Clients, g.base.Series)
		consider(label, g.Comparison().HalfWidth(), g.Pairs)
	}
	if compared {
		return w
	}
	for _, g := range a.Groups {
		if g.N == 0 {
			continue
		}
		consider(fmt.Sprintf("%s %s c=%d", g.Series, g.Durability, g.Clients), halfWidth(g.ThroughputCI), g.N)
	}
	return w
}

// RoundsToReach estimates how many more paired rounds would bring a
// comparison whose 95% CI half-width is hw after pairs rounds to at most
// until: its spread taken as it is, the half-width shrinks as
// t(0.975, n-1)/sqrt(n). 0 when it is already there or cannot be told
// (no interval yet); at most 1000.
func RoundsToReach(hw float64, pairs int, until float64) int {
	if hw <= until || pairs < MinRounds || math.IsInf(hw, 1) || until <= 0 {
		return 0
	}
	spread := math.Log1p(hw) * math.Sqrt(float64(pairs)) / tQuantile(0.975, float64(pairs-1))
	want := math.Log1p(until)
	for n := pairs + 1; n <= pairs+1000; n++ {
		if tQuantile(0.975, float64(n-1))*spread/math.Sqrt(float64(n)) <= want {
			return n - pairs
		}
	}
	return 1000
}
