package stats

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// A need (need: in a study file) is a rate the placement must carry, and
// what a reader asks of it is "does it carry it", round after round, not
// "is its mean capacity above it": a placement whose mean is 5% above the
// need with rounds 10% apart misses it in about a third of rounds. So a
// need is met when a lower tolerance bound clears it: with 95% confidence,
// at least NeedCoverage of rounds deliver a capacity above the bound
// (log-normal rounds; Krishnamoorthy and Mathew 2009, the one-sided
// normal tolerance factor from the noncentral t).

// NeedCoverage is the share of rounds a placement must carry its need in.
const NeedCoverage = 0.95

// toleranceFactor is k such that mean - k s of n log-normal rounds is
// below coverage of rounds with the given confidence: 7.66 for 3 rounds
// at 95%/95%, 2.91 for 10.
func toleranceFactor(n int, coverage, confidence float64) float64 {
	key := [3]float64{float64(n), coverage, confidence}
	if k, ok := factorCache.Load(key); ok {
		return k.(float64)
	}
	k := exactFactor(n, coverage, confidence)
	factorCache.Store(key, k)
	return k
}

var factorCache sync.Map // [n, coverage, confidence] -> k

// approxFactor is toleranceFactor by Natrella's approximation (NIST
// handbook 7.2.6.3), within a few percent from 10 rounds on: enough to
// say about how many rounds a decision needs.
func approxFactor(n int, coverage, confidence float64) float64 {
	zp, zg := zQuantile(coverage), zQuantile(confidence)
	a := 1 - zg*zg/(2*float64(n-1))
	b := zp*zp - zg*zg/float64(n)
	if a <= 0 || zp*zp-a*b < 0 {
		return math.Inf(1)
	}
	return (zp + math.Sqrt(zp*zp-a*b)) / a
}

// exactFactor computes toleranceFactor.
func exactFactor(n int, coverage, confidence float64) float64 {
	delta := zQuantile(coverage) * math.Sqrt(float64(n))
	// nctSurvival falls in t; find where it is 1-confidence.
	lo, hi := delta, delta+1
	for nctSurvival(hi, n-1, delta) > 1-confidence {
		lo, hi = hi, hi*2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if nctSurvival(mid, n-1, delta) > 1-confidence {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2 / math.Sqrt(float64(n))
}

func zQuantile(p float64) float64 { return distuv.UnitNormal.Quantile(p) }

// nctSurvival is P(T > t) for T noncentral t with df degrees of freedom
// and noncentrality delta: T = (Z + delta)/sqrt(V/df), V chi-squared, so
// P(T > t) = E[P(Z > t sqrt(V/df) - delta)], the mean over V taken at
// chiNodes' quantiles (gonum has no noncentral t).
func nctSurvival(t float64, df int, delta float64) float64 {
	sum := 0.0
	for _, u := range chiNodes(df) {
		sum += distuv.UnitNormal.Survival(t*u - delta)
	}
	return sum / chiPoints
}

// chiPoints is how many quantiles of sqrt(V/df) the mean is taken over:
// a midpoint rule on the probability scale, within 1e-4 of the tables.
const chiPoints = 2000

var chiCache sync.Map // df -> []float64

// chiNodes are sqrt(V/df) at the midpoints of chiPoints equal slices of
// probability, for V chi-squared with df degrees of freedom.
func chiNodes(df int) []float64 {
	if v, ok := chiCache.Load(df); ok {
		return v.([]float64)
	}
	chi := distuv.ChiSquared{K: float64(df)}
	nodes := make([]float64, chiPoints)
	for i := range nodes {
		nodes[i] = math.Sqrt(chi.Quantile((float64(i)+0.5)/chiPoints) / float64(df))
	}
	chiCache.Store(df, nodes)
	return nodes
}
