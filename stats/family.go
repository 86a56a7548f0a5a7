package stats

import (
	"math"
	"slices"
	"sort"

	"github.com/tierbench/tierbench/results"
)

// A study judges many comparisons at once: every placement against its
// baseline at every durability and client count, every further durability
// mode against the first, every swept value against the first, the load
// generator's CPU per operation. Each at 5% alone, a study of identical
// placements would call some pair better or worse about every other time.
// So the study's comparisons are one family, and its verdicts are judged
// on p values adjusted together (docs/statistics.md#many-comparisons).

// Multiplicity names the guard: Holm's step-down procedure (1979), which
// holds the chance of even one wrong better/worse verdict in the whole
// study at Alpha, whatever else in it truly differs. Benjamini-Hochberg's
// false discovery rate would be kinder to large studies, but only on
// average over the verdicts given: in a study where durability modes
// truly differ, identical placements would be called different far more
// often than 5% of the time (TestFamilyErrorRates measures both).
const Multiplicity = "holm"

// Alpha is the level every verdict is judged at, after adjustment.
const Alpha = 0.05

// Kinds of comparison a study judges (Judged.Kind).
const (
	KindPlacement  = "placement"       // a series against its baseline
	KindDurability = "durability"      // a durability mode against the study's first
	KindSweep      = "sweep"           // a swept value against the dimension's first
	KindLoadCPU    = "load_cpu_per_op" // the load generator's CPU per op against the baseline's
)

// Judged is one comparison of the study's family: an element of
// `comparisons` in `show --format json`.
type Judged struct {
	Kind       string `json:"kind"`
	Series     string `json:"placement"`
	Durability string `json:"durability"`
	Clients    int    `json:"clients"`
	// Against is the other side: the baseline series, the durability mode
	// or the swept series it is compared with.
	Against           string `json:"against"`
	AgainstDurability string `json:"against_durability"`
	// Adjacent is false where the two sides did not run back to back in
	// their rounds (durability modes run in blocks of their own).
	Adjacent bool    `json:"adjacent"`
	Ratio    float64 `json:"ratio"`
	// CI95 is the interval that matches the verdict, adjusted with the
	// family at CILevel (simultaneous.go); CI95PerComparison is the
	// comparison's own 95% interval.
	CI95              *[2]float64 `json:"ratio_ci95"`
	CILevel           float64     `json:"ratio_ci_level,omitempty"`
	CI95PerComparison *[2]float64 `json:"ratio_ci95_per_comparison,omitempty"`
	CI90              *[2]float64 `json:"ratio_ci90,omitempty"`
	Pairs             int         `json:"pairs"`
	// P and PAdjusted are the raw and adjusted p values of "no
	// difference"; PEquivalence and PEquivalenceAdjusted those of "a
	// difference beyond the margin" (TOST). Absent without an interval.
	P                    *float64 `json:"p,omitempty"`
	PAdjusted            *float64 `json:"p_adjusted,omitempty"`
	PEquivalence         *float64 `json:"p_equivalence,omitempty"`
	PEquivalenceAdjusted *float64 `json:"p_equivalence_adjusted,omitempty"`
	Verdict              string   `json:"verdict"`
	// AlphaShare is the share of alpha the look it was judged at spent
	// (sequential.go): absent without looks. StoppedAfter is the round
	// after which its block stopped, when the study ran on without it:
	// an estimate stopped because it looked decided leans away from 1.
	AlphaShare   float64 `json:"alpha_share,omitempty"`
	StoppedAfter int     `json:"stopped_after,omitempty"`

	cmp *Comparison
}

// FamilySummary says how many comparisons a study judged, of which
// kinds, and under which guard: the line under the answer.
type FamilySummary struct {
	Method string
	// Judged counts the comparisons with an interval, which the guard
	// adjusts; ByKind splits them.
	Judged int
	ByKind map[string]int
	// Decided counts better and worse verdicts; RawDecided those the raw
	// p values would have given, so a reader sees what the guard took.
	Decided, RawDecided int
}

// Summary counts the study's family.
func (a *Analysis) Summary() FamilySummary {
	s := FamilySummary{Method: Multiplicity, ByKind: map[string]int{}}
	for _, j := range a.Comparisons {
		if j.P == nil {
			continue
		}
		s.Judged++
		s.ByKind[j.Kind]++
		if j.Verdict == Better || j.Verdict == Worse {
			s.Decided++
		}
		if *j.P < Alpha {
			s.RawDecided++
		}
	}
	return s
}

// Versus is the judged comparison of group g with group base (a durability
// mode or swept value against the first), as a copy of g holding the
// ratio; nil when the study's family has no such comparison.
func (a *Analysis) Versus(g, base Key) *Group {
	return a.versus[[2]Key{g, base}]
}

// judge gathers the study's family, adjusts it and sets every verdict.
func (a *Analysis) judge(st *results.Study) {
	a.versus = map[[2]Key]*Group{}
	var fam []*Judged
	add := func(kind string, g *Group, base *Group, c *Comparison, adjacent bool) {
		fam = append(fam, &Judged{Kind: kind, Series: g.Series, Durability: g.Durability, Clients: g.Clients,
			Against: base.Series, AgainstDurability: base.Durability, Adjacent: adjacent, cmp: c})
	}
	for _, g := range a.Groups {
		if g.base == nil || g.N == 0 || g.base.N == 0 || g.Pairs == 0 {
			continue
		}
		add(KindPlacement, g, g.base, &g.cmp, true)
		if c, ok := g.loadPerOpRatio(); ok {
			g.loadCmp = &c
			add(KindLoadCPU, g, g.base, g.loadCmp, true)
		}
	}
	for _, pair := range versusPairs(st) {
		g, base := a.Group(pair[0]), a.Group(pair[1])
		if g == nil || base == nil || g.N == 0 || base.N == 0 {
			continue
		}
		v := Versus(g, base)
		a.versus[pair] = v
		if v.Pairs == 0 {
			continue
		}
		kind := KindSweep
		if pair[0].Durability != pair[1].Durability {
			kind = KindDurability
		}
		add(kind, v, base, &v.cmp, kind == KindSweep)
	}
	looks := LooksOf(st)
	for _, j := range fam {
		j.cmp.atLook(looks)
	}
	adjust(fam)
	for _, j := range fam {
		j.fill()
	}
	markStopped(st, fam)
	for _, g := range a.Groups {
		g.fromCmp()
	}
	for _, v := range a.versus {
		v.fromCmp()
	}
	a.Comparisons = fam
}

// versusPairs are the study's comparisons other than with a baseline:
// each further durability mode against the first, on each series that
// does not pin its own mode and ran without a crash, and, per
// durability, each swept value against its dimension's first with the
// rest held equal (the crash dimension left out: a crash run's
// throughput is not what the crash costs). Each pair is (group, the
// group it is compared with), Clients included.
func versusPairs(st *results.Study) [][2]Key {
	var out [][2]Key
	series := st.Series()
	if len(st.Durability) > 1 {
		ref := st.Durability[0]
		for _, d := range st.Durability[1:] {
			for _, p := range series {
				if p.Durability != "" || p.CrashRun() {
					continue
				}
				for _, c := range st.Clients {
					out = append(out, [2]Key{{p.Name, d, c}, {p.Name, ref, c}})
				}
			}
		}
	}
	for _, d := range st.Durability {
		for i, dim := range st.Dims() {
			if dim.Name == results.CrashDim {
				continue
			}
			for _, v := range dim.Labels[1:] {
				for _, p := range series {
					if len(p.Settings) <= i || p.Settings[i] != v {
						continue
					}
					q, ok := SameBut(series, p, i, dim.Labels[0])
					if !ok {
						continue
					}
					for _, c := range st.Clients {
						out = append(out, [2]Key{{p.Name, d, c}, {q.Name, d, c}})
					}
				}
			}
		}
	}
	return out
}

// SameBut finds the series of the same placement as p whose swept value
// of dimension i is v and whose other values are p's.
func SameBut(series []results.Placement, p results.Placement, i int, v string) (results.Placement, bool) {
	want := slices.Clone(p.Settings)
	want[i] = v
	for _, q := range series {
		if q.Of == p.Of && slices.Equal(q.Settings, want) {
			return q, true
		}
	}
	return results.Placement{}, false
}

// adjust applies Holm to the family's difference tests and,
// apart, to its equivalence tests, then judges each comparison on its
// adjusted p values. The two are adjusted apart because in a study of
// identical placements every equivalence null is false: pooled with them,
// the difference tests would be judged more leniently exactly where they
// must not be.
func adjust(fam []*Judged) {
	cmps := make([]*Comparison, len(fam))
	for i, j := range fam {
		cmps[i] = j.cmp
	}
	Adjust(cmps)
}

// Adjust judges comparisons as one family (Multiplicity): their adjusted
// p values and verdicts are set in place. `compare` judges its rows so.
func Adjust(cmps []*Comparison) {
	var p, pEq []*float64
	for _, c := range cmps {
		if !math.IsNaN(c.P) {
			p = append(p, &c.PAdjusted)
			pEq = append(pEq, &c.PEquivalenceAdjusted)
		}
	}
	adjustP(p)
	adjustP(pEq)
	for _, c := range cmps {
		c.rejudge()
	}
	holmIntervals(cmps)
}

// adjustP is the family's adjustment, Multiplicity's.
var adjustP = holm

// holm replaces each p value in place by Holm's adjusted value: in
// ascending order, the largest over j <= i of (m - j + 1) p_(j), at most
// 1. A comparison is rejected at level a exactly when its adjusted value
// is below a.
func holm(ps []*float64) {
	m := len(ps)
	sorted := slices.Clone(ps)
	sort.SliceStable(sorted, func(i, j int) bool { return *sorted[i] < *sorted[j] })
	running := 0.0
	for i, p := range sorted {
		running = max(running, min(1, *p*float64(m-i)))
		*p = running
	}
}

// rejudge sets the verdict from the adjusted p values: better or worse
// when the difference is a discovery, equivalent when equivalence is,
// inconclusive otherwise. Without an interval the verdict stands.
func (c *Comparison) rejudge() {
	if math.IsNaN(c.PAdjusted) {
		return
	}
	switch {
	case c.PAdjusted < Alpha:
		if (c.Ratio > 1) == c.higherIsBetter {
			c.Verdict = Better
		} else {
			c.Verdict = Worse
		}
	case c.PEquivalenceAdjusted < Alpha:
		c.Verdict = Equivalent
	default:
		c.Verdict = Inconclusive
	}
}

// fill copies the comparison's figures into its JSON fields.
func (j *Judged) fill() {
	c := j.cmp
	j.Ratio, j.CI95, j.CI90, j.Pairs, j.Verdict = c.Ratio, c.ShownCI(), c.CI90, c.Pairs, c.Verdict
	j.CILevel, j.CI95PerComparison = c.AdjustedLevel, c.CI95
	j.P, j.PAdjusted, j.AlphaShare = finite(c.P), finite(c.PAdjusted), c.Share
	j.PEquivalence, j.PEquivalenceAdjusted = finite(c.PEquivalence), finite(c.PEquivalenceAdjusted)
}

// finite is &v, or nil for NaN (JSON has no NaN).
func finite(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}
