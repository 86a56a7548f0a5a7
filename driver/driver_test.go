package driver

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// noop is a client that does nothing: it measures the driver itself.
var noop = ClientFunc(func(context.Context) (int, error) { return 0, nil })

func clients(n int, c Client) []Client {
	out := make([]Client, n)
	for i := range out {
		out[i] = c
	}
	return out
}

func TestClosedLoopPhasesAndCounts(t *testing.T) {
	var calls atomic.Int64
	cl := ClientFunc(func(context.Context) (int, error) {
		n := calls.Add(1)
		time.Sleep(100 * time.Microsecond)
		if n%100 == 0 {
			return 1, errors.New("boom")
		}
		return int(n % 2), nil
	})
	res, err := Run(context.Background(), Config{Ops: []string{"read", "update"}, Warmup: 300 * time.Millisecond,
		Duration: 700 * time.Millisecond, Tick: 200 * time.Millisecond}, clients(2, cl))
	if err != nil {
		t.Fatal(err)
	}
	if res.Measured.Ops == 0 || res.Warmup.Ops == 0 {
		t.Fatalf("want ops in both phases, got warmup %d measured %d", res.Warmup.Ops, res.Measured.Ops)
	}
	var ivOps, ivErrs int64
	sawBoundary := false
	for _, iv := range res.Intervals {
		if iv.Phase == Warmup && iv.Start+iv.Length > 350*time.Millisecond {
			t.Errorf("warmup interval %d ends at %s, after the warmup", iv.Index, iv.Start+iv.Length)
		}
		if iv.Phase == Measured && iv.Start < 290*time.Millisecond {
			t.Errorf("measured interval %d starts at %s, inside the warmup", iv.Index, iv.Start)
		}
		if iv.Phase == Warmup && iv.Start+iv.Length >= 290*time.Millisecond {
			sawBoundary = true
		}
		if iv.Phase == Measured {
			ivOps += iv.Ops
			ivErrs += iv.Errors
		}
	}
	if !sawBoundary {
		t.Error("no interval closes at the warmup boundary")
	}
	if ivOps != res.Measured.Ops || ivErrs != res.Measured.Errors {
		t.Errorf("intervals sum to %d ops %d errors, phase says %d, %d", ivOps, ivErrs, res.Measured.Ops, res.Measured.Errors)
	}
	var byOp int64
	for _, o := range res.Measured.ByOp {
		byOp += o.Ops
		if o.Latency.TotalCount() != o.Ops {
			t.Errorf("op %s: histogram count %d != ops %d", o.Name, o.Latency.TotalCount(), o.Ops)
		}
	}
	if byOp != res.Measured.Ops {
		t.Errorf("per-op ops %d != total %d", byOp, res.Measured.Ops)
	}
	if res.Measured.Errors == 0 || res.FirstError == nil {
		t.Error("errors were not counted")
	}
	if l := res.Measured.Length; l < 650*time.Millisecond || l > 900*time.Millisecond {
		t.Errorf("measured length %s, want about 700ms", l)
	}
}

// TestClosedLoopLatencies holds the closed loop's clock reads to what
// they measure: an operation's latency covers its sleep, and one client's
// latencies do not overlap (they sum to no more than the run's length),
// through held, flushed and failed operations alike.
func TestClosedLoopLatencies(t *testing.T) {
	const nap = 200 * time.Microsecond
	var calls int64
	cl := ClientFunc(func(context.Context) (int, error) {
		calls++
		switch {
		case calls%50 == 0:
			return 1, errors.New("boom")
		case calls%2 == 0:
			time.Sleep(nap)
			return 0, nil
		}
		return 1, nil
	})
	res, err := Run(context.Background(), Config{Ops: []string{"nap", "quick"}, Duration: 300 * time.Millisecond}, clients(1, cl))
	if err != nil {
		t.Fatal(err)
	}
	napped := res.Measured.ByOp[0].Latency
	if napped.TotalCount() == 0 || time.Duration(napped.Min()) < nap {
		t.Errorf("%d naps, the shortest %s: want each at least %s", napped.TotalCount(), time.Duration(napped.Min()), nap)
	}
	var sum float64
	for _, o := range res.Measured.ByOp {
		sum += o.Latency.Mean() * float64(o.Latency.TotalCount())
	}
	// 1% for the histograms' 3 significant figures
	if got := time.Duration(sum); got > res.Measured.Length*101/100 {
		t.Errorf("latencies sum to %s in a window of %s: they overlap", got, res.Measured.Length)
	}
}

// TestOpenLoopCorrectsCoordinatedOmission stalls one operation for 200 ms in
// a 100 ops/s schedule: the ~20 operations that should have started during the
// stall must show it in their latency but not in their service time. Clients
// wait for their arrivals on a goroutine each and on a lane alike.
func TestOpenLoopCorrectsCoordinatedOmission(t *testing.T) {
	for _, lanes := range []int{0, 1} {
		t.Run(fmt.Sprintf("lanes=%d", lanes), func(t *testing.T) {
			var calls atomic.Int64
			cl := laneClient{ClientFunc: func(context.Context) (int, error) {
				if calls.Add(1) == 20 {
					time.Sleep(200 * time.Millisecond)
				}
				return 0, nil
			}, can: true}
			res, err := Run(context.Background(), Config{Ops: []string{"read"}, Duration: time.Second, TargetRate: 100,
				Arrival: Constant, Lanes: lanes}, []Client{cl})
			if err != nil {
				t.Fatal(err)
			}
			if res.Lanes != lanes {
				t.Errorf("ran on %d lanes, want %d", res.Lanes, lanes)
			}
			m := res.Measured
			// The schedule is a ceiling (a busy machine may finish fewer); the
			// stall's effects below only grow with load, so they are behaviour.
			if m.Ops == 0 || m.Ops > 101 {
				t.Errorf("ops %d, want at most the 100 scheduled", m.Ops)
			}
			lat, svc := m.ByOp[0].Latency, m.ByOp[0].Service
			if got := time.Duration(lat.ValueAtQuantile(90)); got < 20*time.Millisecond {
				t.Errorf("latency p90 %s: the stall was omitted", got)
			}
			if got, l := time.Duration(svc.ValueAtQuantile(90)), time.Duration(lat.ValueAtQuantile(90)); got*4 > l {
				t.Errorf("service p90 %s against latency p90 %s: service time should not include the queueing", got, l)
			}
			if m.Late < 15 {
				t.Errorf("late %d, want about 19", m.Late)
			}
		})
	}
}

func TestPoissonRate(t *testing.T) {
	res, err := Run(context.Background(), Config{Ops: []string{"read"}, Duration: time.Second, TargetRate: 2000,
		Arrival: Poisson, Seed: 7}, clients(4, noop))
	if err != nil {
		t.Fatal(err)
	}
	// A Poisson count over 1 s with mean 2000 has sd ~45.
	if got := res.Measured.Ops; got < 1700 || got > 2300 {
		t.Errorf("ops %d, want about 2000", got)
	}
}

func TestCancelReturnsPartialResult(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Config{Ops: []string{"read"}, Duration: time.Hour}, clients(2, noop))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	if res == nil || res.Measured.Ops == 0 {
		t.Fatal("partial result missing")
	}
}

func TestHungClientIsReported(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	var first atomic.Bool
	cl := ClientFunc(func(context.Context) (int, error) {
		if first.CompareAndSwap(false, true) {
			<-block
		}
		return 0, nil
	})
	_, err := Run(context.Background(), Config{Ops: []string{"read"}, Duration: 100 * time.Millisecond,
		StopGrace: 100 * time.Millisecond}, clients(1, cl))
	if !errors.Is(err, ErrHung) {
		t.Fatalf("err %v, want ErrHung", err)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Ops: []string{"read"}, Duration: time.Second}
	cases := []struct {
		name    string
		mutate  func(*Config)
		clients int
	}{
		{"no clients", func(*Config) {}, 0},
		{"no ops", func(c *Config) { c.Ops = nil }, 1},
		{"zero duration", func(c *Config) { c.Duration = 0 }, 1},
		{"negative warmup", func(c *Config) { c.Warmup = -1 }, 1},
		{"negative rate", func(c *Config) { c.TargetRate = -5 }, 1},
		{"bad arrival", func(c *Config) { c.TargetRate = 5; c.Arrival = "bursty" }, 1},
		{"negative max ops", func(c *Config) { c.MaxOps = -1 }, 1},
		{"max ops in open loop", func(c *Config) { c.MaxOps = 10; c.TargetRate = 5 }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			if err := c.Validate(tc.clients); err == nil {
				t.Error("accepted")
			}
		})
	}
	if err := ok.Validate(1); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	w := newWorker(2, true)
	allocs := testing.AllocsPerRun(1000, func() {
		w.record(1, nil, 1234*time.Nanosecond, 1000*time.Nanosecond, false)
	})
	if allocs != 0 {
		t.Errorf("record allocates %.1f times per op", allocs)
	}
}

// TestHoldRecordsInBatches follows a closed-loop client's held operations:
// recorded once holdMax of them are held, once they span holdFor from the
// first one's start, or with an operation of holdFor or longer.
func TestHoldRecordsInBatches(t *testing.T) {
	const fast = time.Microsecond
	type op struct {
		latency, done time.Duration
		recorded      int64 // operations in the histogram after it
	}
	steps := func(n int, latency time.Duration) []op {
		ops := make([]op, n)
		for i := range ops {
			ops[i] = op{latency, time.Duration(i+1) * latency, 0}
		}
		return ops
	}
	full := steps(holdMax, fast)
	full[holdMax-1].recorded = holdMax
	for _, tc := range []struct {
		name string
		ops  []op
	}{
		{"a full batch", full},
		{"spanning holdFor", []op{{fast, fast, 0}, {fast, holdFor - fast, 0}, {fast, holdFor + fast, 3}, {fast, holdFor + 2*fast, 3}}},
		{"a slow operation alone", []op{{holdFor, holdFor, 1}}},
		{"a slow operation after fast ones", []op{{fast, fast, 0}, {fast, 2 * fast, 0}, {time.Second, time.Second + 2*fast, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorker(1, false)
			before := int64(0)
			for i, o := range tc.ops {
				flushed := w.hold(0, o.latency, o.done)
				if got := w.lat[0].TotalCount(); got != o.recorded || w.ops[0] != o.recorded {
					t.Fatalf("after operation %d: %d recorded, %d counted, want %d", i+1, got, w.ops[0], o.recorded)
				}
				if flushed != (o.recorded != before) {
					t.Errorf("operation %d: hold says flushed=%v", i+1, flushed)
				}
				before = o.recorded
			}
			w.flush()
			if got := w.lat[0].TotalCount(); got != int64(len(tc.ops)) {
				t.Errorf("after flush: %d recorded, want all %d", got, len(tc.ops))
			}
		})
	}
}

// BenchmarkDriverNoop measures the driver's own ceiling: closed-loop clients
// (one per core) against a client that does nothing. It reports ops/s per core.
func BenchmarkDriverNoop(b *testing.B) {
	cores := runtime.GOMAXPROCS(0)
	var ops int64
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), Config{Ops: []string{"read"}, Duration: 500 * time.Millisecond},
			clients(cores, noop))
		if err != nil {
			b.Fatal(err)
		}
		ops += res.Measured.Ops
		elapsed += res.Measured.Length
	}
	b.ReportMetric(float64(ops)/elapsed.Seconds()/float64(cores), "ops/s/core")
}

// BenchmarkDriverNoopOpenLoop measures open-loop scheduling overhead at a
// rate the driver should sustain.
func BenchmarkDriverNoopOpenLoop(b *testing.B) {
	var ops int64
	var elapsed time.Duration
	var late int64
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), Config{Ops: []string{"read"}, Duration: 500 * time.Millisecond,
			TargetRate: 200000, Arrival: Poisson}, clients(16, noop))
		if err != nil {
			b.Fatal(err)
		}
		ops += res.Measured.Ops
		late += res.Measured.Late
		elapsed += res.Measured.Length
	}
	b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(late)/float64(ops)*100, "late%")
}

func TestPanickingClientFailsTheRun(t *testing.T) {
	var calls atomic.Int64
	cl := ClientFunc(func(context.Context) (int, error) {
		if calls.Add(1) == 50 {
			panic("engine bug")
		}
		return 0, nil
	})
	// The run is asked for far longer than the test can take: returning at
	// all shows the panic ended it (a hang is the suite's timeout).
	const asked = time.Hour
	res, err := Run(context.Background(), Config{Ops: []string{"read"}, Duration: asked}, clients(2, cl))
	if err == nil || !strings.Contains(err.Error(), "engine bug") {
		t.Fatalf("err %v, want the panic", err)
	}
	if res != nil && res.Measured.Length >= asked {
		t.Error("run went on after the panic")
	}
}

// TestMaxOpsEndsTheMeasuredWindow bounds a run by its measured operations:
// warmup ops do not count, the window ends when the clients have issued
// MaxOps (long before Duration), and no more are issued.
func TestMaxOpsEndsTheMeasuredWindow(t *testing.T) {
	cl := ClientFunc(func(context.Context) (int, error) { time.Sleep(2 * time.Millisecond); return 0, nil })
	res, err := Run(context.Background(), Config{Ops: []string{"q"}, Warmup: 50 * time.Millisecond,
		Duration: time.Hour, MaxOps: 22}, clients(2, cl))
	if err != nil {
		t.Fatal(err)
	}
	if res.Warmup.Ops == 0 {
		t.Error("no warmup ops: the bound must not apply to the warmup")
	}
	// An op issued in the warmup may finish in the window: at most one per
	// client beyond the bound.
	if res.Measured.Ops < 22 || res.Measured.Ops > 24 {
		t.Errorf("measured %d ops, want 22 (+ at most one per client straddling the warmup)", res.Measured.Ops)
	}
}

// laneClient says whether it can run on a lane.
type laneClient struct {
	ClientFunc
	can bool
}

func (c laneClient) OnLane() bool { return c.can }

// TestOnLanes: clients share lanes, in closed or open loop, with lanes
// asked for, and when every one of them can.
func TestOnLanes(t *testing.T) {
	can, cannot := laneClient{can: true}, laneClient{can: false}
	plain := ClientFunc(nil)
	for _, c := range []struct {
		name    string
		cfg     Config
		clients []Client
		want    bool
	}{
		{"all can", Config{Lanes: 1}, []Client{can, can}, true},
		{"no lanes asked", Config{}, []Client{can}, false},
		{"open loop", Config{Lanes: 1, TargetRate: 100}, []Client{can}, true},
		{"one cannot", Config{Lanes: 2}, []Client{can, cannot}, false},
		{"not a lane client", Config{Lanes: 2}, []Client{can, plain}, false},
	} {
		if got := onLanes(c.cfg, c.clients); got != c.want {
			t.Errorf("%s: onLanes %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCutEndsTheWindowAndCrashes: at the cut the clients stop, the
// operations the crash interrupts are not counted as errors, Cut runs
// once after every client was told to stop, and the window ends there.
func TestCutEndsTheWindowAndCrashes(t *testing.T) {
	var crashed atomic.Bool
	var afterCrash atomic.Int64
	cl := ClientFunc(func(ctx context.Context) (int, error) {
		if crashed.Load() {
			afterCrash.Add(1)
		}
		select {
		case <-ctx.Done():
			return 0, errors.New("connection reset by the crash")
		case <-time.After(time.Millisecond):
			return 0, nil
		}
	})
	cuts := 0
	res, err := Run(context.Background(), Config{Ops: []string{"q"}, Warmup: 20 * time.Millisecond,
		Duration: time.Hour, CutAt: 100 * time.Millisecond, Cut: func() { cuts++; crashed.Store(true) }}, clients(3, cl))
	if err != nil {
		t.Fatal(err)
	}
	if cuts != 1 {
		t.Errorf("Cut ran %d times, want once", cuts)
	}
	if afterCrash.Load() != 0 {
		t.Errorf("%d operations began after the crash", afterCrash.Load())
	}
	if res.Measured.Errors != 0 || res.Measured.Ops == 0 {
		t.Errorf("measured %d ops, %d errors; want ops and no errors (cancelled operations are the crash's)", res.Measured.Ops, res.Measured.Errors)
	}
	if got := res.Measured.Length; got < 90*time.Millisecond || got > time.Minute {
		t.Errorf("measured window %s, want about the cut's 100ms", got)
	}
	if _, err := Run(context.Background(), Config{Ops: []string{"q"}, Duration: time.Second, CutAt: 2 * time.Second, Cut: func() {}}, clients(1, cl)); err == nil {
		t.Error("a cut after the window was accepted")
	}
}

// TestKeepPIdle: runs with as many lanes as Ps raise GOMAXPROCS by one
// over their lanes while any of them runs, and put it back after the last.
func TestKeepPIdle(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	undoSmall := keepPIdle(before - 1) // leaves a P idle already
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("lanes %d: GOMAXPROCS %d, want %d", before-1, got, before)
	}
	undoA := keepPIdle(before + 2)
	undoB := keepPIdle(before)
	if got := runtime.GOMAXPROCS(0); got != before+3 {
		t.Errorf("lanes %d and %d: GOMAXPROCS %d, want %d", before+2, before, got, before+3)
	}
	undoA()
	if got := runtime.GOMAXPROCS(0); got != before+3 {
		t.Errorf("one run left: GOMAXPROCS %d, want it kept at %d", got, before+3)
	}
	undoB()
	undoSmall()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("after the runs: GOMAXPROCS %d, want %d back", got, before)
	}
}

// TestSteadyWarmup: a steady-state rule ends the warmup once the last
// window of per-tick throughput is steady, not during a ramp, and at its
// most when the series never settles; the measured window starts where
// the warmup ended, and OnMeasured is told when.
func TestSteadyWarmup(t *testing.T) {
	const tick = 100 * time.Millisecond
	cases := []struct {
		name string
		// most is the warmup's most: room for a loaded machine to settle,
		// or how long a series that never settles warms up.
		most time.Duration
		// sleep is an operation's time at offset since the run began.
		sleep      func(since time.Duration) time.Duration
		wantSteady bool
		// rampEnds is before which the series cannot be steady.
		rampEnds time.Duration
	}{
		{"ramp, then steady", 5 * time.Second, func(since time.Duration) time.Duration {
			if since >= 600*time.Millisecond {
				return time.Millisecond
			}
			return 10*time.Millisecond - 9*time.Millisecond*since/(600*time.Millisecond)
		}, true, 600 * time.Millisecond},
		{"never steady", 2 * time.Second, func(since time.Duration) time.Duration {
			if (since/tick)%2 == 0 {
				return time.Millisecond
			}
			return 5 * time.Millisecond
		}, false, 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			begin := time.Now()
			cl := ClientFunc(func(context.Context) (int, error) {
				time.Sleep(tc.sleep(time.Since(begin)))
				return 0, nil
			})
			var told []time.Duration
			most := tc.most
			res, err := Run(context.Background(), Config{Ops: []string{"op"}, Warmup: most, Duration: 300 * time.Millisecond, Tick: tick,
				Steady: &SteadyRule{Band: 0.10, Window: 300 * time.Millisecond}, OnMeasured: func(w time.Duration) { told = append(told, w) }},
				clients(2, cl))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("warmup took %s, steady %v, %d intervals", res.WarmupTaken, res.Steady, len(res.Intervals))
			if res.Steady != tc.wantSteady || res.WarmupTaken < tc.rampEnds || res.WarmupTaken > most+tick {
				t.Errorf("warmup took %s (steady %v), want steady %v, not before %s, at most %s", res.WarmupTaken, res.Steady, tc.wantSteady, tc.rampEnds, most)
			}
			if len(told) != 1 || told[0] != res.WarmupTaken {
				t.Errorf("OnMeasured told %v, want once with %s", told, res.WarmupTaken)
			}
			for _, iv := range res.Intervals {
				if (iv.Phase == Measured) != (iv.Start >= res.WarmupTaken) {
					t.Errorf("interval %d at %s is %s, the warmup took %s", iv.Index, iv.Start, iv.Phase, res.WarmupTaken)
				}
			}
			if res.Measured.Ops == 0 {
				t.Error("nothing measured")
			}
		})
	}
}
