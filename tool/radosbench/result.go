package radosbench

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
)

// span is a stretch of one bench between two status rows (or the last row
// and the end): its ops and their mean latency.
type span struct {
	From, To time.Duration // since the bench's start
	Ops      int64
	Mean     time.Duration // 0 without ops
}

// between returns the span from row a to row b: the ops finished between
// them, and their mean latency from the two running averages (sum of
// latencies at b less that at a, over the ops), kept within [lo, hi].
func between(a, b Row, lo, hi time.Duration) span {
	sp := span{From: time.Duration(a.Sec) * time.Second, To: time.Duration(b.Sec) * time.Second, Ops: b.Finished - a.Finished}
	if sp.Ops > 0 {
		sum := b.AvgLat.Seconds()*float64(b.Finished) - a.AvgLat.Seconds()*float64(a.Finished)
		sp.Mean = clamp(seconds(sum/float64(sp.Ops)), lo, hi)
	}
	return sp
}

func clamp(v, lo, hi time.Duration) time.Duration {
	if hi > 0 {
		v = min(v, hi)
	}
	return max(v, lo, 0)
}

// spans cuts a finished bench into its seconds, and the stretch after its
// last row up to its total time, whose ops and latency come from the
// summary's totals less the last row's.
func spans(rep Report) []span {
	s := rep.Summary
	var out []span
	prev := Row{} // the start: nothing finished
	for _, r := range rep.Rows {
		if r.Sec <= prev.Sec {
			continue // row 0: the start
		}
		out = append(out, between(prev, r, s.MinLat, s.MaxLat))
		prev = r
	}
	end := Row{Sec: prev.Sec, Finished: s.Ops, AvgLat: s.AvgLat}
	last := between(prev, end, s.MinLat, s.MaxLat)
	last.To = max(s.TotalTime, last.From)
	if last.Ops > 0 || last.To > last.From {
		out = append(out, last)
	}
	return out
}

// timeline turns the spans of one phase's benches into the run's
// intervals: they follow each other, numbered from index, starting at
// offset (the benches that ran before), tagged with phase. A bench's
// start-up between two benches is left out: the timeline is the benches'
// own time. An interval's P50 is its mean latency, as in the histogram;
// its P99 and Max are unknown (0).
type timeline struct {
	index  int
	offset time.Duration // the end of the benches before
}

func (t *timeline) interval(sp span, phase driver.Phase) driver.Interval {
	iv := driver.Interval{
		Index: t.index, Phase: phase,
		Start: t.offset + sp.From, Length: sp.To - sp.From,
		Ops: sp.Ops, P50: sp.Mean, PerOpOK: []int64{sp.Ops},
	}
	t.index++
	return iv
}

// phaseResult sums one phase's benches (none, or one) into the phase's
// figures of op, with the latency histogram latencyHistogram
// builds, and appends their intervals to ivs.
func phaseResult(op string, benches []Report, phase driver.Phase, tl *timeline, ivs []driver.Interval) (driver.PhaseResult, []driver.Interval) {
	h := hist.New()
	var pr driver.PhaseResult
	var wrong int64
	for _, rep := range benches {
		sps := spans(rep)
		for _, sp := range sps {
			ivs = append(ivs, tl.interval(sp, phase))
		}
		tl.offset += rep.Summary.TotalTime
		h.Merge(latencyHistogram(rep.Summary, sps))
		ok := rep.Summary.Ops - min(rep.WrongReads, rep.Summary.Ops)
		pr.Length += rep.Summary.TotalTime
		pr.Ops += ok
		wrong += rep.Summary.Ops - ok
	}
	pr.Errors = wrong
	pr.ByOp = []driver.OpResult{{Name: op, Ops: pr.Ops, Errors: wrong, Latency: h}}
	return pr, ivs
}

// latencyHistogram builds an HDR histogram (nanoseconds) of a bench's ops
// from what rados bench prints, which is no histogram: one op at the
// bench's minimum and one at its maximum, and each second's other ops at
// that second's mean latency, scaled so that the mean of all is rados
// bench's. Count, mean, minimum and maximum are rados bench's; other
// percentiles are of per-second means: right for the median of a steady
// run, too low for the tail (a slow op in a fast second is averaged away).
func latencyHistogram(s *Summary, sps []span) *hdr.Histogram {
	h := hist.New()
	extremes := min(s.Ops, 2)
	left := s.AvgLat.Seconds() * float64(s.Ops) // the latencies of the other ops
	if extremes >= 1 {
		record(h, s.MaxLat, 1)
		left -= s.MaxLat.Seconds()
	}
	if extremes == 2 {
		record(h, s.MinLat, 1)
		left -= s.MinLat.Seconds()
	}
	counts := make([]int64, len(sps))
	var sum float64 // of the per-second means over the ops left
	for i, sp := range sps {
		take := min(sp.Ops, extremes) // the extremes stand in for ops of the first spans
		counts[i], extremes = sp.Ops-take, extremes-take
		sum += float64(counts[i]) * sp.Mean.Seconds()
	}
	scale := 1.0
	if left > 0 && sum > 0 {
		scale = left / sum
	}
	for i, sp := range sps {
		if counts[i] > 0 {
			record(h, clamp(time.Duration(float64(sp.Mean)*scale), s.MinLat, s.MaxLat), counts[i])
		}
	}
	return h
}

func record(h *hdr.Histogram, d time.Duration, n int64) {
	v := max(hist.LowestNs, min(int64(d), hist.HighestNs))
	_ = h.RecordValues(v, n) // in range: cannot fail
}

// result builds the run's Result from the bench of its warmup (nil
// without one) and that of its measured window.
func result(op string, warmup *Report, measured Report) (*driver.Result, error) {
	var warm []Report
	if warmup != nil {
		warm = []Report{*warmup}
	}
	for _, rep := range append(warm, measured) {
		if rep.Summary == nil {
			return nil, fmt.Errorf("rados bench printed no summary")
		}
	}
	var tl timeline
	res := &driver.Result{}
	res.Warmup, res.Intervals = phaseResult(op, warm, driver.Warmup, &tl, nil)
	res.Measured, res.Intervals = phaseResult(op, []Report{measured}, driver.Measured, &tl, res.Intervals)
	if n := res.Warmup.Errors + res.Measured.Errors; n > 0 {
		res.FirstError = fmt.Errorf("rados bench: %d reads returned data other than what was written (\"is not correct!\")", n)
	}
	return res, nil
}

// ticker turns one bench's rows into intervals as rados bench prints
// them, for the live display.
type ticker struct {
	tl    timeline
	phase driver.Phase
	prev  Row
	on    func(driver.Interval)
}

func (t *ticker) row(r Row) {
	if t.on == nil || r.Sec <= t.prev.Sec {
		return
	}
	t.on(t.tl.interval(between(t.prev, r, 0, math.MaxInt64), t.phase))
	t.prev = r
}
