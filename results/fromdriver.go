package results

import (
	"fmt"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
)

// FromDriver copies what the driver measured into run r (the measured
// window's counts, summaries per op and of all ops, the per-second
// timeline) and returns every histogram to store with it: per op and of all
// ops, measured and warmup, latency and (open loop) service time, in the
// standard compressed HDR encoding; then each interval's latency histogram
// of all ops, where the driver kept one (Histogram.Interval).
func FromDriver(r *Run, res *driver.Result) ([]Histogram, error) {
	m := res.Measured
	r.DurationS = m.Length.Seconds()
	r.Ops, r.Errors, r.Late = m.Ops, m.Errors, m.Late
	r.Lanes = res.Lanes
	r.ThroughputOpsS = m.Throughput()
	r.ByOp = map[string]OpSummary{}
	var hists []Histogram
	for _, ph := range []struct {
		phase driver.Phase
		res   driver.PhaseResult
	}{{driver.Measured, res.Measured}, {driver.Warmup, res.Warmup}} {
		all, allSvc := hist.New(), hist.New()
		for _, o := range ph.res.ByOp {
			all.Merge(o.Latency)
			svc := o.Latency
			if o.Service != nil {
				svc = o.Service
			}
			allSvc.Merge(svc)
			if ph.phase == driver.Measured {
				r.ByOp[o.Name] = OpSummary{Ops: o.Ops, Errors: o.Errors,
					Latency: hist.Summarize(o.Latency), ServiceTime: hist.Summarize(svc)}
			}
			h, err := encodePair(o.Name, string(ph.phase), o.Latency, o.Service)
			if err != nil {
				return nil, err
			}
			hists = append(hists, h...)
		}
		svcAll := allSvc
		if !res.OpenLoop {
			svcAll = nil
		}
		h, err := encodePair(OpAll, string(ph.phase), all, svcAll)
		if err != nil {
			return nil, err
		}
		hists = append(hists, h...)
		if ph.phase == driver.Measured {
			r.Latency = hist.Summarize(all)
			r.ServiceTime = hist.Summarize(allSvc)
			if r.TargetRate > 0 {
				r.LatencyCI = latencyCI(all)
			}
		}
	}
	r.Arrivals = arrivalCheck(res.Arrivals)
	sort.Slice(hists, func(i, j int) bool {
		a, b := hists[i], hists[j]
		return a.Phase+a.Op+a.Kind < b.Phase+b.Op+b.Kind
	})
	began := res.Began
	if began.IsZero() {
		began = r.StartedAt
	}
	for _, iv := range res.Intervals {
		r.Timeline = append(r.Timeline, Interval{
			T: (iv.Start + iv.Length).Seconds(), Length: iv.Length.Seconds(), Phase: string(iv.Phase),
			Ops: iv.Ops, OpsS: iv.OpsPerSec(), Errors: iv.Errors, Late: iv.Late,
			P50us: float64(iv.P50) / 1e3, P99us: float64(iv.P99) / 1e3,
		})
		if iv.Latency != nil {
			hists = append(hists, Histogram{Op: OpAll, Kind: KindLatency, Phase: string(iv.Phase), Encoded: iv.Latency,
				Interval: &Span{Index: iv.Index, Start: began.Add(iv.Start), Length: iv.Length}})
		}
	}
	return hists, nil
}

// latencyCI is the 95% interval of each percentile an objective may
// bound, for a capacity step's judgement (capacity.Judge).
func latencyCI(h *hdr.Histogram) map[string]hist.CI {
	out := map[string]hist.CI{}
	for name, q := range map[string]float64{"p50": 50, "p90": 90, "p95": 95, "p99": 99, "p99.9": 99.9} {
		if ci, ok := hist.PercentileCI(h, q); ok {
			out[name] = ci
		}
	}
	return out
}

// encodePair encodes an op's latency and (open loop only) service histograms.
func encodePair(op, phase string, lat, svc *hdr.Histogram) ([]Histogram, error) {
	var out []Histogram
	for _, h := range []struct {
		kind string
		h    *hdr.Histogram
	}{{KindLatency, lat}, {KindService, svc}} {
		if h.h == nil {
			continue
		}
		b, err := hist.Encode(h.h)
		if err != nil {
			return nil, fmt.Errorf("%s %s histogram: %w", op, h.kind, err)
		}
		out = append(out, Histogram{Op: op, Kind: h.kind, Phase: phase, Encoded: b})
	}
	return out, nil
}

// arrivalCheck is the driver's check of its sends as stored.
func arrivalCheck(a *driver.ArrivalCheck) *ArrivalCheck {
	if a == nil {
		return nil
	}
	c := &ArrivalCheck{Process: string(a.Process), Gaps: a.Gaps, OK: a.OK, Why: a.Why,
		MeanGapUs: float64(a.MeanGap) / 1e3, IntendedGapUs: float64(a.IntendedGap) / 1e3}
	if a.Process == driver.Poisson {
		c.A2, c.P = &a.A2, &a.P
	} else {
		c.Spread = &a.Spread
	}
	return c
}
