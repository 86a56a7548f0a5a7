package livemetrics

import (
	"math"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hist"
)

// TestBuckets: each latency lands in the first bucket at or above it,
// within the HDR histogram's 0.1%, and the sum is the latencies' sum.
func TestBuckets(t *testing.T) {
	for _, c := range []struct {
		latency time.Duration
		le      float64 // the smallest bound that counts it; +Inf for none
	}{
		{800 * time.Nanosecond, 1e-6},
		{time.Microsecond, 1e-6},
		{1001 * time.Nanosecond, 2.5e-6},
		{3 * time.Microsecond, 5e-6},
		{999 * time.Microsecond, 1e-3},
		{1500 * time.Microsecond, 2.5e-3},
		{7 * time.Second, 10},
		{20 * time.Second, math.Inf(1)},
	} {
		f := &opFigures{buckets: make([]uint64, len(Buckets)+1)}
		h := hist.New()
		hist.Record(h, c.latency)
		hist.Record(h, c.latency)
		f.add(h)
		cum := f.cumulative()
		for _, b := range Buckets {
			want := uint64(0)
			if b >= c.le {
				want = 2
			}
			if cum[b] != want {
				t.Errorf("%v: bucket le=%v counts %d, want %d", c.latency, b, cum[b], want)
			}
		}
		if f.count != 2 || math.Abs(f.sum-2*c.latency.Seconds()) > 2*c.latency.Seconds()*1e-3 {
			t.Errorf("%v: count %d, sum %v s", c.latency, f.count, f.sum)
		}
	}
}
