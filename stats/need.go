package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// judgeNeed says, for each measured entry of a block, whether it carries
// need in at least NeedCoverage of rounds (tolerance.go). The block's
// candidates are judged together: each at confidence 1-Alpha/m for its m
// candidates with rounds enough (Bonferroni), so the chance that any
// placement is said to carry a need it misses more often than that is at
// most Alpha, however many were measured.
func judgeNeed(measured []*CapacityEntry, need float64) {
	m := 0
	for _, e := range measured {
		if len(e.logs()) >= MinRounds {
			m++
		}
	}
	conf := 1 - Alpha/float64(max(m, 1))
	for _, e := range measured {
		e.NeedConfidence = conf
		e.MeetsNeed, e.NeedWhy = e.meetsNeed(need, conf)
	}
}

// logs are the logs of the entry's round capacities.
func (e *CapacityEntry) logs() []float64 { return logs(e.group.Throughputs()) }

// meetsNeed is "yes" with the bound that clears need, "no" when the
// rounds say it misses need in more than 1-NeedCoverage of them (or it
// has no interval and its capacity is below), "may" with what would
// decide it otherwise.
func (e *CapacityEntry) meetsNeed(need, conf float64) (string, string) {
	l := e.logs()
	n := len(l)
	if n < MinRounds {
		if e.OpsS >= need {
			return "may", fmt.Sprintf("one round is no tolerance bound: run at least %d", MinRounds)
		}
		return "no", fmt.Sprintf("its capacity %.0f ops/s is below the need", e.OpsS)
	}
	mean, s := Mean(l), sd(l)
	if noSpread(mean, s/math.Sqrt(float64(n))) {
		if mean >= math.Log(need) {
			return "may", "every round found the same capacity: no spread to bound its rounds by; run more rounds"
		}
		return "no", "every round found a capacity below the need"
	}
	k := toleranceFactor(n, NeedCoverage, conf)
	bound := math.Exp(mean - k*s)
	e.NeedBoundOpsS = &bound
	if bound >= need {
		return "yes", fmt.Sprintf("carries %.0f ops/s in at least %.0f%% of rounds (%.1f%% confidence): its lower tolerance bound is %.0f ops/s",
			need, NeedCoverage*100, conf*100, bound)
	}
	share := 1 - distuv.UnitNormal.CDF((mean-math.Log(need))/s)
	if mean-zQuantile(NeedCoverage)*s < math.Log(need) {
		below := fmt.Sprintf("about %.0f%%", share*100)
		if share > 0.995 {
			below = "nearly all"
		}
		return "no", fmt.Sprintf("its rounds vary %.0f%%: %s of rounds would fall below %.0f ops/s (an estimate), more than %.0f%%",
			(math.Exp(s)-1)*100, below, need, (1-NeedCoverage)*100)
	}
	if more := roundsToClear(mean, s, math.Log(need), n, conf); more > 0 {
		e.NeedMoreRounds = more
		return "may", fmt.Sprintf("its lower tolerance bound %.0f ops/s is below the need; about %d more rounds at this spread would decide", bound, more)
	}
	return "may", fmt.Sprintf("its lower tolerance bound %.0f ops/s is below the need, and would still be after 100 more rounds at this spread", bound)
}

// roundsToClear is about how many more rounds, at the same mean and
// spread of logs, bring the tolerance bound above ln need (approxFactor);
// 0 beyond 100.
func roundsToClear(mean, s, lnNeed float64, n int, conf float64) int {
	clears := func(k int) bool { return mean-approxFactor(k, NeedCoverage, conf)*s >= lnNeed }
	if !clears(n + 100) {
		return 0
	}
	lo, hi := n, n+100 // clears(hi), !clears(lo)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if clears(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi - n
}
