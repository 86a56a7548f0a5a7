package stream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
)

// TestRoundTrip drives a short closed-loop run, writes it with a Writer as
// `tierbench drive` does, reads the lines back with a Reader as the runner
// does with a pod's log, and checks the two results agree.
func TestRoundTrip(t *testing.T) {
	ops := []string{"read", "update"}
	n := 0
	boom := errors.New("boom")
	client := driver.ClientFunc(func(context.Context) (int, error) {
		n++
		time.Sleep(time.Millisecond)
		if n%50 == 0 {
			return 1, boom
		}
		return n % 2, nil
	})
	var buf bytes.Buffer
	w := NewWriter(&buf, ops)
	w.Ready()
	cfg := driver.Config{Ops: ops, Warmup: 200 * time.Millisecond, Duration: 600 * time.Millisecond, Tick: 200 * time.Millisecond, OnTick: w.Interval}
	want, err := driver.Run(context.Background(), cfg, []driver.Client{client})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(want, nil); err != nil {
		t.Fatal(err)
	}

	var ticks int
	r := NewReader("tierbench drive", driver.Config{Ops: ops, OnTick: func(driver.Interval) { ticks++ }})
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r.Line(sc.Bytes())
	}
	got, err := r.Result(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Intervals) != len(want.Intervals) || ticks != len(want.Intervals) {
		t.Errorf("%d intervals read (%d ticks), %d written", len(got.Intervals), ticks, len(want.Intervals))
	}
	for i := range min(len(got.Intervals), len(want.Intervals)) {
		g, x := got.Intervals[i], want.Intervals[i]
		if g.Phase != x.Phase || g.Ops != x.Ops || g.Errors != x.Errors || g.P99 != x.P99 || g.Length != x.Length {
			t.Errorf("interval %d read %+v, written %+v", i, g, x)
		}
	}
	for _, ph := range []struct{ got, want driver.PhaseResult }{{got.Warmup, want.Warmup}, {got.Measured, want.Measured}} {
		if ph.got.Ops != ph.want.Ops || ph.got.Errors != ph.want.Errors || ph.got.Length != ph.want.Length {
			t.Errorf("phase read %d ops %d errors %v, written %d ops %d errors %v",
				ph.got.Ops, ph.got.Errors, ph.got.Length, ph.want.Ops, ph.want.Errors, ph.want.Length)
		}
		for i, o := range ph.got.ByOp {
			x := ph.want.ByOp[i]
			if o.Name != x.Name || o.Ops != x.Ops || o.Latency.TotalCount() != x.Latency.TotalCount() || o.Latency.Max() != x.Latency.Max() {
				t.Errorf("op %s read %d ops (histogram %d, max %d), written %d (%d, %d)", o.Name, o.Ops,
					o.Latency.TotalCount(), o.Latency.Max(), x.Ops, x.Latency.TotalCount(), x.Latency.Max())
			}
		}
	}
	if want.Measured.Errors > 0 && (got.FirstError == nil || got.FirstError.Error() != "boom") {
		t.Errorf("first error read %v, want boom", got.FirstError)
	}
}

// TestWriteFailure: a stream that cannot be written (a closed pipe) makes
// Finish fail instead of reporting a run nobody read.
func TestWriteFailure(t *testing.T) {
	w := NewWriter(failing{}, []string{"op"})
	w.Ready()
	if err := w.Finish(&driver.Result{}, nil); err == nil {
		t.Error("Finish on a failing writer returned no error")
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }
