package driver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hist"
)

// TestIntervalHistograms: each tick keeps its histogram of all ops
// encoded (empty ones too), lends OnTick its histograms per op, and splits
// its errors by op; what the ticks hold adds up to each phase's figures,
// and the result says when driving began.
func TestIntervalHistograms(t *testing.T) {
	var calls atomic.Int64
	cl := ClientFunc(func(context.Context) (int, error) {
		n := calls.Add(1)
		time.Sleep(100 * time.Microsecond)
		if n%20 == 0 {
			return 1, errors.New("boom")
		}
		return int(n % 2), nil
	})
	type lent struct{ ok, errs, counted [2]int64 }
	var ticks []lent
	before := time.Now()
	res, err := Run(context.Background(), Config{Ops: []string{"read", "update"}, Warmup: 100 * time.Millisecond,
		Duration: 300 * time.Millisecond, Tick: 50 * time.Millisecond, OnTick: func(iv Interval) {
			var l lent
			for op, h := range iv.ByOp {
				l.ok[op], l.errs[op], l.counted[op] = iv.PerOpOK[op], iv.PerOpErr[op], h.TotalCount()
			}
			ticks = append(ticks, l)
		}}, clients(2, cl))
	if err != nil {
		t.Fatal(err)
	}
	if res.Began.Before(before) || res.Began.After(time.Now()) {
		t.Errorf("began %v, not while Run ran", res.Began)
	}
	if len(ticks) != len(res.Intervals) {
		t.Fatalf("%d ticks, %d intervals", len(ticks), len(res.Intervals))
	}
	sums := map[Phase]*[2][2]int64{Warmup: {}, Measured: {}}
	for i, iv := range res.Intervals {
		if iv.ByOp != nil {
			t.Errorf("interval %d keeps the lent histograms", i)
		}
		dec, err := hist.Decode(iv.Latency)
		if err != nil {
			t.Fatalf("interval %d: %v", i, err)
		}
		l := ticks[i]
		if dec.TotalCount() != iv.Ops || l.counted != l.ok || l.ok[0]+l.ok[1] != iv.Ops || l.errs[0]+l.errs[1] != iv.Errors {
			t.Errorf("interval %d: %d ops, %d errors, histogram of %d; lent per op %+v", i, iv.Ops, iv.Errors, dec.TotalCount(), l)
		}
		for op := range 2 {
			sums[iv.Phase][0][op] += l.ok[op]
			sums[iv.Phase][1][op] += l.errs[op]
		}
	}
	for ph, pr := range map[Phase]PhaseResult{Warmup: res.Warmup, Measured: res.Measured} {
		for op, o := range pr.ByOp {
			if sums[ph][0][op] != o.Ops || sums[ph][1][op] != o.Errors {
				t.Errorf("%s %s: ticks hold %d ops and %d errors, the phase %d and %d", ph, o.Name, sums[ph][0][op], sums[ph][1][op], o.Ops, o.Errors)
			}
		}
	}
	if res.Measured.ByOp[1].Errors == 0 {
		t.Error("no errors counted against update")
	}
}
