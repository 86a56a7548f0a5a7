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
			r := &Run{}
			hists, err := FromDriver(r, res)
			if err != nil {
				t.Fatal(err)
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
			for _, h := range hists {
				got = append(got, h.Phase+"/"+h.Op+"/"+h.Kind)
			}
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
				if h.Phase != string(driver.Measured) || h.Op != OpAll {
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
