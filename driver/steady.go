package driver

import (
	"math"
	"time"
)

// SteadyRule is fio's steadystate range criterion on throughput: steady
// when every tick's throughput over the last Window lies within Band
// (a fraction) of their mean.
type SteadyRule struct {
	Band   float64
	Window time.Duration
}

// Holds reports whether the last of ivs span the rule's window and are
// steady; ivs are the warmup's intervals, each tick long.
func (r SteadyRule) Holds(ivs []Interval, tick time.Duration) bool {
	n := int((r.Window + tick - 1) / tick)
	if n < 2 || len(ivs) < n {
		return false
	}
	last := ivs[len(ivs)-n:]
	mean := 0.0
	for _, iv := range last {
		mean += iv.OpsPerSec()
	}
	mean /= float64(n)
	if mean <= 0 {
		return false
	}
	for _, iv := range last {
		if math.Abs(iv.OpsPerSec()-mean) > r.Band*mean {
			return false
		}
	}
	return true
}
