package hist

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/gonum/stat/distuv"
)

// A percentile read off one window of operations is one order statistic,
// and a latency objective judged on it alone is judged on noise: at the
// edge of a capacity, the same rate meets p99 <= 20ms in one second and
// misses it in the next. Its confidence interval needs no model of the
// latencies: the number of them below the true percentile q is binomial
// (n, q), so the order statistics of ranks l and u, chosen from that
// binomial, hold the true percentile with the stated confidence
// (distribution-free, as Lancet reports its percentiles; Le Boudec,
// Performance Evaluation of Computer and Communication Systems, 2.2).
// The operations of a window are taken as independent draws, which
// queueing makes only roughly so: the interval is the least uncertainty
// a step has.

// CI is a percentile's confidence interval in microseconds.
type CI struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Open is true when the window held too few values beyond the
	// percentile for an upper end (p99 needs about 370 values): Hi is
	// then the largest value recorded, and the percentile may be above
	// it.
	Open bool `json:"open,omitempty"`
}

// PercentileCI is the 95% interval of h's percentile q (0-100) from the
// order statistics of its values, open above when h holds too few values
// for an upper end; ok is false for an empty histogram.
func PercentileCI(h *hdr.Histogram, q float64) (CI, bool) {
	if h == nil || h.TotalCount() == 0 {
		return CI{}, false
	}
	n := h.TotalCount()
	l, u, ok := orderRanks(n, q/100, 0.95)
	if !ok {
		lo := 0.0
		if l >= 1 {
			lo = float64(h.ValueAtQuantile(100*(float64(l)-0.5)/float64(n))) / 1e3
		}
		return CI{Lo: lo, Hi: float64(h.Max()) / 1e3, Open: true}, true
	}
	at := func(rank int64) float64 {
		if rank < 1 {
			return 0
		}
		return float64(h.ValueAtQuantile(100*(float64(rank)-0.5)/float64(n))) / 1e3
	}
	return CI{Lo: at(l), Hi: at(u)}, true
}

// orderRanks are the ranks (1-based) l < u of n sorted values whose
// values hold the q-quantile with at least conf: P(l <= B < u) >= conf
// for B ~ Binomial(n, q), the count of values below it, each tail at most
// (1-conf)/2. l is 0 when even the smallest value may be above it (the
// interval then starts at 0); ok is false when the largest may be below
// (u would pass n), l still the lower rank.
func orderRanks(n int64, q, conf float64) (l, u int64, ok bool) {
	if n < 1 || q <= 0 || q >= 1 {
		return 0, 0, false
	}
	b := distuv.Binomial{N: float64(n), P: q}
	tail := (1 - conf) / 2
	mean, sd := float64(n)*q, math.Sqrt(float64(n)*q*(1-q))
	// l: the largest rank with P(B < l) = CDF(l-1) <= tail, counted up
	// from three standard deviations below the mean.
	l = max(int64(math.Floor(mean-3*sd))-2, 0)
	for l < n && b.CDF(float64(l)) <= tail {
		l++
	}
	// u: the smallest rank with P(B >= u) = 1 - CDF(u-1) <= tail, counted
	// up from 1.5 standard deviations above it.
	u = max(int64(math.Floor(mean+1.5*sd)), l+1)
	for u <= n && b.Survival(float64(u-1)) > tail {
		u++
	}
	return l, u, u <= n
}

// CertainlyAbove says whether the values h holds already put the lower end
// of the q-percentile's 95% interval (PercentileCI) above bound (µs) for
// any window that holds them and at most n values in all, whatever the
// others are: a capacity step whose operations so far past the objective
// make it miss however the rest of it goes can end (capacity.MissWatch).
// The lower end is the value of rank l; it lies above bound once fewer
// than l values lie at or below it, that is once at least n-l+1 lie
// above; n-l grows with n, so a window that ends with fewer values
// misses too. A value counts as above when its histogram bucket's
// highest equivalent (what PercentileCI reads) is, with one value to
// spare for the bucket that straddles bound.
func CertainlyAbove(h *hdr.Histogram, q, bound float64, n int64) bool {
	if h == nil || n < 1 {
		return false
	}
	l, _, _ := orderRanks(n, q/100, 0.95)
	if l < 1 {
		return false // even the smallest value may lie above the percentile
	}
	var above int64
	for _, b := range h.Distribution() {
		if float64(b.To)/1e3 > bound {
			above += b.Count
		}
	}
	return above >= n-l+2
}
