package driver

import (
	"math"
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
)

// MSER-5 (White, Cobb and Spratt 2000) chooses, after the fact, where a
// run's initial transient ends: over batch means of 5 intervals, the
// truncation d that minimizes the squared standard error of the mean of
// what is left, sum((b_i - mean)^2) / (n-d)^2 over the batches i >= d. A
// transient far from the steady level inflates the sum while it is kept;
// truncating too much is paid for by the shrinking n-d. It needs no band
// or window, waits for nothing live, and every interval after the point
// counts.

// MSERBatch is the batch size of MSER-5: five intervals a batch.
const MSERBatch = 5

// Truncation is where MSER cut a run's series, and what is left.
type Truncation struct {
	// Intervals is how many of the series' intervals MSER dropped, a
	// multiple of MSERBatch; At is the time they took.
	Intervals int
	At        time.Duration
	// MeasuredShare is the share of the series' time after the cut.
	MeasuredShare float64
	// Steady says whether the rule's first window after the cut lies
	// within its band (SteadyRule.Holds), when a rule was given.
	Steady *bool
	// Bounded is true when MSER's best point lay beyond the most it may
	// cut (the warmup's most): the transient may outlast it.
	Bounded bool
}

// MSER5 is the MSER-5 truncation of series, in intervals, at most
// maxCut intervals (negative: no bound but MSER's own). MSER-5 finds the
// batch; the cut is then refined to the interval by MSER on the single
// intervals within a batch either side of it, so a transient that ends
// mid-batch is cut where it ends, not at the batch's edge. MSER's own rule
// bounds the cut to the first half of the series, beyond which its
// statistic is too noisy to trust; bounded is true when the minimum lay
// at the bound (half the series, or maxCut): the transient may not be
// over. Fewer than 2 batches cut nothing. The partial batch at the end
// counts as measured but does not enter the batches.
func MSER5(series []float64, maxCut int) (cut int, bounded bool) {
	nb := len(series) / MSERBatch
	if nb < 2 {
		return 0, false
	}
	b := make([]float64, nb)
	for i := range nb {
		sum := 0.0
		for _, v := range series[i*MSERBatch : (i+1)*MSERBatch] {
			sum += v
		}
		b[i] = sum / MSERBatch
	}
	limit := len(series) / 2
	if maxCut >= 0 {
		limit = min(limit, maxCut)
	}
	d, _, _ := mserMin(b, 0, limit/MSERBatch)
	lo, hi := max(0, (d-1)*MSERBatch), min(limit, (d+1)*MSERBatch)
	v := series[:nb*MSERBatch]
	cut, _, mean := mserMin(v, lo, hi)
	// Give back, towards the start, every interval that lies within
	// BackOff standard deviations of the tail's mean (robustSD): on a steady tail
	// MSER's minimum wanders late by chance (its statistic's noise
	// exceeds its slope on a few tens of intervals), and an interval
	// dropped without cause is time not counted. A transient's intervals
	// lie outside and stop it; an interval alone outside, between two
	// inside, is noise, not a transient, which lasts.
	m, sd := mean[cut], robustSD(v[cut:])
	in := func(i int) bool { return i < 0 || math.Abs(v[i]-m) <= BackOff*sd }
	for cut > 0 && (in(cut-1) || cut >= 3 && in(cut-2) && in(cut-3)) {
		cut--
	}
	return cut, cut > 0 && cut >= limit
}

// BackOff is how many of the tail's standard deviations (robustSD) an
// interval may lie from its mean and still be given back to the measured
// window: four keep a steady series whole in all but about 1 in 15,000
// intervals, and stop at a transient as soon as it stands out of the
// noise.
const BackOff = 4

// robustSD is the interval-to-interval noise of v: the median absolute
// difference of successive values, scaled to a normal's standard
// deviation (1.4826 MAD / sqrt 2). A busy machine's stalls dip a series
// far below its level and may shift the level for a while; a plain
// standard deviation, or one about the median, inflated by them would let
// a transient pass for noise, while successive differences see only the
// noise from one interval to the next.
func robustSD(v []float64) float64 {
	if len(v) < 3 {
		return 0
	}
	diff := make([]float64, len(v)-1)
	for i := range diff {
		diff[i] = math.Abs(v[i+1] - v[i])
	}
	return 1.4826 * median(diff) / math.Sqrt2
}

// median of v (v is not modified).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// mserMin is the d in [lo, hi] minimizing MSER's statistic over v,
// sum((v_i - mean)^2) / (n-d)^2 over i >= d (the first of equals), with
// the statistic and the mean left at every d.
func mserMin(v []float64, lo, hi int) (best int, stat, mean []float64) {
	n := len(v)
	hi = min(hi, n-2)
	stat, mean = make([]float64, n), make([]float64, n)
	var s, ss float64
	for i := n - 1; i >= 0; i-- {
		s += v[i]
		ss += v[i] * v[i]
		k := float64(n - i)
		mean[i] = s / k
		stat[i] = max(0, ss-k*mean[i]*mean[i]) / (k * k)
	}
	best = lo
	for d := lo; d <= hi; d++ {
		if stat[d] < stat[best] {
			best = d
		}
	}
	return best, stat, mean
}

// Truncate chooses the measured part of a run's interval series, from its
// first operation: MSER-5 on per-interval throughput, cutting at most
// maxWarmup, and says whether the series is steady by rule from the cut
// on (nil: not judged).
func Truncate(ivs []Interval, maxWarmup time.Duration, rule *SteadyRule) Truncation {
	series := make([]float64, len(ivs))
	for i, iv := range ivs {
		series[i] = iv.OpsPerSec()
	}
	return truncate(ivs, series, maxWarmup, rule)
}

// TruncateLatency is Truncate for an open-loop run, whose throughput is
// the rate it was asked for whatever the engine does: its transient shows
// in latency (from the intended start), as operations queue behind a
// cold engine and drain. MSER-5 runs on each interval's mean latency; an
// interval in which nothing completed (a stall) keeps the mean before
// it, its operations' latency counting where they complete.
func TruncateLatency(ivs []Interval, maxWarmup time.Duration) Truncation {
	lat := make([]*hdr.Histogram, len(ivs))
	for i, iv := range ivs {
		if h, err := hist.Decode(iv.Latency); err == nil {
			lat[i] = h
		}
	}
	return TruncateLatencyOf(ivs, lat, maxWarmup)
}

// TruncateLatencyOf is TruncateLatency on the intervals' latency already
// decoded, lat[i] being ivs[i]'s (nil: none recorded): for a caller that
// keeps them, as a capacity probe does across its looks, so its series is
// not decoded again at every look.
func TruncateLatencyOf(ivs []Interval, lat []*hdr.Histogram, maxWarmup time.Duration) Truncation {
	series := make([]float64, len(ivs))
	last := 0.0
	for i, h := range lat {
		if h != nil && h.TotalCount() > 0 {
			last = h.Mean()
		}
		series[i] = last
	}
	return truncate(ivs, series, maxWarmup, nil)
}

// truncate cuts series, one value per interval of ivs, by MSER-5.
func truncate(ivs []Interval, series []float64, maxWarmup time.Duration, rule *SteadyRule) Truncation {
	var t Truncation
	if len(ivs) == 0 {
		return t
	}
	var total time.Duration
	for _, iv := range ivs {
		total += iv.Length
	}
	maxCut := 0
	for _, iv := range ivs {
		if iv.Start+iv.Length-ivs[0].Start > maxWarmup {
			break
		}
		maxCut++
	}
	t.Intervals, t.Bounded = MSER5(series, maxCut)
	for _, iv := range ivs[:t.Intervals] {
		t.At += iv.Length
	}
	if total > 0 {
		t.MeasuredShare = float64(total-t.At) / float64(total)
	}
	if rule != nil {
		// fio's range criterion on the rule's first window after the cut:
		// where a live steady warmup would have let the window start.
		rest := ivs[t.Intervals:]
		tick := ivs[len(ivs)-1].Length
		if len(ivs) > 1 {
			tick = ivs[len(ivs)-2].Length // the last may be cut short
		}
		n := 1
		if tick > 0 {
			n = int((rule.Window + tick - 1) / tick)
		}
		steady := len(rest) >= n && rule.Holds(rest[:n], tick)
		t.Steady = &steady
	}
	return t
}
