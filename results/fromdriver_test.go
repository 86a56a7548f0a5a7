package results

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
)

// TestFromDriver drives two op types with the real driver, closed and open
// loop, and checks what FromDriver makes of the result: the run's counts
// and summaries, the per-second timeline, and one stored histogram per op
// and of all ops, per phase, with service time only in open loop.
func TestFromDriver(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rate  float64
		kinds []string
	}{
		{"closed-loop", 0, []string{KindLatency}},
		{"open-loop", 2000, []string{KindLatency, KindService}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := []string{"read", "update"}
			clients := make([]driver.Client, 2)
			for i := range clients {
				n := 0
				clients[i] = driver.ClientFunc(func(context.Context) (int, error) { n++; return n % 2, nil })
			}
			res, err := driver.Run(context.Background(), driver.Config{Ops: ops, Warmup: 50 * time.Millisecond,
				Duration: 250 * time.Millisecond, Tick: 50 * time.Millisecond, TargetRate: tc.rate}, clients)
			if err != nil {
				t.Fatal(err)
			}
			r := &Run{TargetRate: tc.rate}
			hists, err := FromDriver(r, res)
			if err != nil {
				t.Fatal(err)
			}
			// A capacity step (a target rate) records its percentiles'
			// intervals, each holding its percentile; other runs none.
			if ci, ok := r.LatencyCI["p50"]; tc.rate > 0 && (!ok || ci.Lo > r.Latency.P50 || ci.Hi < r.Latency.P50) || tc.rate == 0 && r.LatencyCI != nil {
				t.Errorf("rate %g: p50 %v, intervals %v", tc.rate, r.Latency.P50, r.LatencyCI)
			}
			// An open-loop run stores the check of its sends; a closed one none.
			if a := r.Arrivals; tc.rate > 0 && (a == nil || a.Process != "constant" || a.Spread == nil || a.A2 != nil || a.Gaps == 0) || tc.rate == 0 && a != nil {
				t.Errorf("rate %g: arrivals %+v", tc.rate, a)
			}
			if r.Ops != res.Measured.Ops || r.Ops == 0 || r.DurationS <= 0 || r.ThroughputOpsS <= 0 {
				t.Errorf("run %d ops in %.3fs at %.0f ops/s, driver measured %d", r.Ops, r.DurationS, r.ThroughputOpsS, res.Measured.Ops)
			}
			var byOp int64
			for _, o := range ops {
				byOp += r.ByOp[o].Ops
			}
			if byOp != r.Ops || len(r.ByOp) != len(ops) {
				t.Errorf("per-op summaries %+v do not add up to %d ops", r.ByOp, r.Ops)
			}
			if r.Latency.P50 <= 0 || r.ServiceTime.P50 <= 0 {
				t.Errorf("summaries: latency %+v, service %+v", r.Latency, r.ServiceTime)
			}
			if len(r.Timeline) != len(res.Intervals) {
				t.Errorf("%d timeline entries for %d intervals", len(r.Timeline), len(res.Intervals))
			}

			var got, want []string
			var intervals []Histogram
			for _, h := range hists {
				if h.Interval != nil {
					intervals = append(intervals, h)
					continue
				}
				got = append(got, h.Phase+"/"+h.Op+"/"+h.Kind)
			}
			checkIntervals(t, res, intervals)
			for _, phase := range []driver.Phase{driver.Measured, driver.Warmup} {
				for _, op := range append(ops, OpAll) {
					for _, k := range tc.kinds {
						want = append(want, string(phase)+"/"+op+"/"+k)
					}
				}
			}
			if !sort.StringsAreSorted(got) {
				t.Errorf("histograms not in order: %v", got)
			}
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("histograms\n got %v\nwant %v", got, want)
			}
			for _, h := range hists {
				if h.Phase != string(driver.Measured) || h.Op != OpAll || h.Interval != nil {
					continue
				}
				dec, err := hist.Decode(h.Encoded)
				if err != nil {
					t.Fatal(err)
				}
				if dec.TotalCount() != r.Ops {
					t.Errorf("%s %s histogram: %d samples, want %d", h.Op, h.Kind, dec.TotalCount(), r.Ops)
				}
			}
		})
	}
}

// checkIntervals checks the interval histograms FromDriver returned: one
// for each interval, in order, holding that interval's operations,
// stamped with its phase and its time.
func checkIntervals(t *testing.T, res *driver.Result, got []Histogram) {
	t.Helper()
	i := 0
	for _, iv := range res.Intervals {
		if i >= len(got) {
			t.Errorf("interval %d (%d ops) has no histogram", iv.Index, iv.Ops)
			return
		}
		h := got[i]
		i++
		dec, err := hist.Decode(h.Encoded)
		if err != nil {
			t.Fatal(err)
		}
		sp := h.Interval
		if sp.Index != iv.Index || h.Phase != string(iv.Phase) || h.Op != OpAll || h.Kind != KindLatency ||
			dec.TotalCount() != iv.Ops || !sp.Start.Equal(res.Began.Add(iv.Start)) || sp.Length != iv.Length {
			t.Errorf("interval %d (%s, %d ops at %v for %v): histogram %d %s %s/%s of %d at %v for %v", iv.Index, iv.Phase, iv.Ops,
				iv.Start, iv.Length, sp.Index, h.Phase, h.Op, h.Kind, dec.TotalCount(), sp.Start.Sub(res.Began), sp.Length)
		}
	}
	if i != len(got) || i == 0 {
		t.Errorf("%d interval histograms for %d intervals", len(got), i)
	}
}

// TestArrivalCheckStored: the driver's check is stored with the figures
// of its process only, in microseconds.
func TestArrivalCheckStored(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     *driver.ArrivalCheck
		a2, sp bool
	}{
		{"none", nil, false, false},
		{"poisson", &driver.ArrivalCheck{Process: driver.Poisson, Gaps: 500, MeanGap: 2 * time.Millisecond, IntendedGap: 2 * time.Millisecond,
			A2: 3.1, P: 0.02, Why: "arrivals not Poisson (A² = 3.10, p = 0.02, 500 gaps)"}, true, false},
		{"constant", &driver.ArrivalCheck{Process: driver.Constant, Gaps: 500, MeanGap: time.Millisecond, IntendedGap: time.Millisecond, OK: true}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := arrivalCheck(c.in)
			if c.in == nil {
				if got != nil {
					t.Errorf("stored %+v", got)
				}
				return
			}
			if got.Process != string(c.in.Process) || got.Gaps != c.in.Gaps || got.OK != c.in.OK || got.Why != c.in.Why ||
				got.IntendedGapUs != float64(c.in.IntendedGap)/1e3 || (got.A2 != nil) != c.a2 || (got.P != nil) != c.a2 || (got.Spread != nil) != c.sp {
				t.Errorf("stored %+v from %+v", got, c.in)
			}
			if c.a2 && (*got.A2 != c.in.A2 || *got.P != c.in.P) {
				t.Errorf("A² %v p %v, want %v %v", *got.A2, *got.P, c.in.A2, c.in.P)
			}
		})
	}
}
