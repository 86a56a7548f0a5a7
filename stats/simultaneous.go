package stats

import (
	"math"
	"slices"
	"sort"
)

// The verdicts are judged on Holm-adjusted p values, so a comparison's own
// 95% interval can exclude 1 beside an inconclusive verdict: the guard
// asked more of it. The interval printed beside a verdict is therefore
// the one that matches it (AdjustedCI95), at the level Holm's step-down
// judged the comparison at. In ascending order of p, the comparison at
// rank i (from 0) of m is tested at Alpha/(m-i) while every one before it
// was decided; the first one that is not stops the descent, and it and
// every later one are judged at its level. So a decided comparison's
// interval is at 1-Alpha/(m-i) and excludes 1, and an undecided one's is
// at 1-Alpha/(m-i*), i* the first undecided rank, and holds 1. The
// undecided ones' intervals are simultaneous at 95% together, as in
// Strassburger and Bretz (2008), whose Holm-compatible bounds for the
// decided ones say only "beyond 1"; here a decided one shows the interval
// of the step that decided it, which is not simultaneous with the rest.

// ZeroSpread is why a comparison whose rounds all gave the same ratio
// has no interval: a spread of 0 is a sample too small to see the noise,
// not a measurement without any, and a t test would call it decided
// whatever the number of rounds.
const ZeroSpread = "every round gave the same ratio: no spread to judge an interval by; run more rounds"

// noSpread is true for a standard error that is 0 but for rounding.
func noSpread(m, se float64) bool {
	return se <= 1e-12*max(1, math.Abs(m))
}

// holmIntervals sets AdjustedCI95 and AdjustedLevel of every comparison
// with a p value, from their raw and adjusted p values (see above).
func holmIntervals(cmps []*Comparison) {
	var fam []*Comparison
	for _, c := range cmps {
		if !math.IsNaN(c.P) {
			fam = append(fam, c)
		}
	}
	// A comparison judged at a look (sequential.go) entered Holm with its
	// p value over its look's share of alpha: its ranks are by that, and
	// its levels that share of Holm's.
	share := func(c *Comparison) float64 {
		if c.Share > 0 {
			return c.Share
		}
		return 1
	}
	sorted := slices.Clone(fam)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].P/share(sorted[i]) < sorted[j].P/share(sorted[j]) })
	m := len(sorted)
	stop := -1
	for i, c := range sorted {
		if stop < 0 && c.PAdjusted >= Alpha {
			stop = i
		}
		rank := i
		if stop >= 0 {
			rank = stop
		}
		level := Alpha * share(c) / float64(m-rank)
		c.AdjustedLevel = 1 - level
		c.AdjustedCI95 = c.intervalAt(level)
	}
}

// intervalAt is the comparison's two-sided interval at error a.
func (c *Comparison) intervalAt(a float64) *[2]float64 {
	h := tQuantile(1-a/2, c.df) * c.se
	lo, hi := math.Exp(c.m-h), math.Exp(c.m+h)
	return &[2]float64{lo, hi}
}
