// Package driver runs clients against an engine and measures them.
//
// Each client runs in its own goroutine, or, when every client can
// (LaneClient) and the loop is closed, on a lane (driver/lane: a goroutine
// running several clients as coroutines that wait for their sockets in one
// epoll_wait, as pgbench's -j threads do). Each records into its own HDR
// histograms (one per op type); a per-worker mutex is taken by the worker to
// record and by the ticker once a second to swap the histograms, so it is
// never contended on the hot path and there is no global lock. A closed-loop
// client holds its successful operations' latencies back and records up to
// holdMax of them under one lock (worker.hold). At each
// tick the swapped-out interval histograms are merged into per-second figures
// (the second's histogram of all ops kept encoded, for the run's interval
// log; its histograms per op lent to Config.OnTick, for a live view) and
// into the cumulative histograms of the current phase (warmup or
// measured). Recording allocates nothing.
//
// Closed loop (the default): each client has one operation in flight and
// starts the next when the previous completes; latency is measured from the
// actual start. The clock read that ends one operation starts the next
// when only the loop's bookkeeping runs in between (runClosed).
//
// Open loop (Config.TargetRate > 0): each client follows a schedule of
// intended start times, spaced by its arrival process (Arrivals: constant
// or Poisson). Latency is measured from the intended start, so a stall
// delays and penalises every operation that should have started during it
// (coordinated omission corrected); service time is measured from the
// actual start. Operations that start more than LateThreshold after their
// intended time are counted as late.
package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/driver/lane"
)

// Client performs one operation per call and says which op it was, as an
// index into Config.Ops.
type Client interface {
	Do(ctx context.Context) (op int, err error)
}

// ClientFunc adapts a function to Client.
type ClientFunc func(ctx context.Context) (int, error)

// Do calls f.
func (f ClientFunc) Do(ctx context.Context) (int, error) { return f(ctx) }

var _ Client = ClientFunc(nil)

// LateThreshold is how far behind its intended start an operation must begin
// to count as late in open loop.
const LateThreshold = time.Millisecond

// Phase tags an interval.
type Phase string

// Phases of a run's driven part.
const (
	Warmup   Phase = "warmup"
	Measured Phase = "measured"
)

// Config describes one driven run.
type Config struct {
	// Ops names the op types clients report.
	Ops      []string
	Warmup   time.Duration
	Duration time.Duration
	// TargetRate is the total ops/s over all clients; 0 means closed loop.
	TargetRate float64
	Arrival    Arrival
	// Tick is the reporting interval; 0 means one second.
	Tick time.Duration
	// OnTick, if set, is called after each interval, from the ticker goroutine.
	OnTick func(Interval)
	// Seed seeds Poisson arrivals; 0 picks a random seed.
	Seed uint64
	// StopGrace bounds how long Run waits for operations in flight once the
	// run is over; 0 means DefaultStopGrace. A client still busy after it
	// is reported as hung.
	StopGrace time.Duration
	// MaxOps, in closed loop, also ends the measured window once this many
	// operations were issued in it (YCSB's operationcount): one pass over
	// a query set measured from a cold start. 0 means no bound.
	MaxOps int64
	// Lanes runs the clients on this many goroutines (driver/lane:
	// pgbench's -j), when every client is a LaneClient that says it can;
	// 0, or any client that cannot, means a goroutine each. In open loop
	// a client waits for its next arrival in the lane (lane.Sleep).
	Lanes int
	// Threads, when set and the clients run on lanes, locks each lane to
	// an OS thread and tells it which (lane.RunWatched): the clients' CPU
	// time is then their threads', apart from the rest of the process.
	Threads lane.ThreadWatch
	// Cut, when set, ends the measured window CutAt into it, the moment a
	// crash run crashes the engine: clients issue nothing more, their
	// operations in flight are cancelled and not counted (their outcome is
	// the crash's, which the workload checks afterwards), and Cut runs. The
	// measured window is what came before the cut.
	Cut   func()
	CutAt time.Duration
	// Steady, when set, ends the warmup at the first tick where the last
	// Steady.Window of per-tick throughput is steady (SteadyRule.Holds),
	// and at Warmup at the latest: the measured window then starts on a
	// steady series rather than a ramp. Closed loop only, where
	// throughput is what settles.
	Steady *SteadyRule
	// OnMeasured, if set, is called from the ticker goroutine as the
	// measured window begins, with the warmup it took: what samples the
	// window (telemetry) starts then.
	OnMeasured func(warmup time.Duration)
	// AfterTheFact chooses the measured window once the run is over: the
	// run lasts Warmup (the most a transient may take) and Duration, and
	// MSER-5 cuts its interval series at most Warmup in (Truncate); the
	// intervals after the cut join the measured window, so every one
	// after the transient counts. Steady, when set, is then judged after
	// the cut on the same series instead of ending the warmup live. A
	// crash's Cut then falls CutAt after the warmup's most. In open loop
	// (a capacity search's step) MSER-5 cuts the series of latency instead
	// of throughput (TruncateLatency); its arrivals are still checked on
	// the sends after the warmup's most.
	AfterTheFact bool
	// EndWhen, if set, is asked after each interval (from the ticker
	// goroutine, its ByOp lent as to OnTick) whether the run's outcome is
	// already decided: true ends
	// the run at that tick, as if its duration were up, and
	// Result.EndedAt says when. A capacity step whose operations so far
	// past the objective make it miss however the rest goes ends so
	// (capacity.CertainMiss), instead of queueing to its end, and so does
	// a probe whose operations so far pass (capacity.ProbePassed), even
	// within the warmup's most: AfterTheFact then cuts the series it has.
	EndWhen func(Interval) bool
}

// DefaultStopGrace is how long operations in flight may take after the end.
const DefaultStopGrace = 30 * time.Second

// ErrHung reports clients whose operation did not return after the run.
var ErrHung = errors.New("clients hung")

// Interval is one tick's figures: a true interval, not a running average.
type Interval struct {
	Index   int           `json:"index"`
	Phase   Phase         `json:"phase"`
	Start   time.Duration `json:"start_ns"` // since the driven part began
	Length  time.Duration `json:"length_ns"`
	Ops     int64         `json:"ops"`
	Errors  int64         `json:"errors"`
	Late    int64         `json:"late"`
	P50     time.Duration `json:"p50_ns"`
	P99     time.Duration `json:"p99_ns"`
	Max     time.Duration `json:"max_ns"`
	PerOpOK []int64       `json:"per_op_ops"`
	// PerOpErr splits Errors by op; nil from a load generator that does
	// not (its errors then count against the first op, as a client's
	// that failed before choosing one).
	PerOpErr []int64 `json:"per_op_errors,omitempty"`
	// Latency is the interval's latency histogram of all ops in the
	// standard compressed HDR encoding (hist.Encode), kept for the run's
	// interval log (tierbench export --hdr), empty when nothing completed;
	// nil from a load generator that reports no histograms per interval.
	Latency []byte `json:"-"`
	// ByOp are the interval's latency histograms per op, lent to
	// Config.OnTick for a live view and to Config.EndWhen: the driver
	// reuses them once they return, and they are nil in Result.Intervals.
	ByOp []*hdr.Histogram `json:"-"`
}

// OpsPerSec is the interval's throughput.
func (iv Interval) OpsPerSec() float64 { return rate(iv.Ops, iv.Length) }

// OpResult holds one op type's cumulative figures for a phase.
type OpResult struct {
	Name   string
	Ops    int64
	Errors int64
	// Latency is from the intended start (open loop) or actual start (closed).
	Latency *hdr.Histogram
	// Service is from the actual start; nil in closed loop, where it equals Latency.
	Service *hdr.Histogram
}

// PhaseResult is a phase's totals.
type PhaseResult struct {
	Length time.Duration
	Ops    int64
	Errors int64
	Late   int64
	ByOp   []OpResult
}

// Throughput is successful ops per second over the phase.
func (p PhaseResult) Throughput() float64 { return rate(p.Ops, p.Length) }

// rate is ops per second over length, 0 over no time.
func rate(ops int64, length time.Duration) float64 {
	if length <= 0 {
		return 0
	}
	return float64(ops) / length.Seconds()
}

// Result is everything a run measured.
type Result struct {
	Warmup    PhaseResult
	Measured  PhaseResult
	Intervals []Interval
	// FirstError is the first operation error seen, for the record.
	FirstError error
	OpenLoop   bool
	// Lanes is how many goroutines ran the clients when they ran on
	// lanes (Config.Lanes); 0 means a goroutine each.
	Lanes int
	// WarmupTaken is how long the warmup ran; Steady is true when a
	// Config.Steady rule ended it before its most.
	WarmupTaken time.Duration
	Steady      bool
	// Began is when the driven part began, which Interval.Start counts
	// from; zero from a load generator that does not say.
	Began time.Time
	// Truncation is where Config.AfterTheFact cut the series; nil
	// otherwise (WarmupTaken is then the cut, Steady whether the series
	// after it was steady).
	Truncation *Truncation
	// Arrivals is the check of an open-loop run's actual send times in
	// the measured window (CheckArrivals); nil in closed loop or when too
	// few operations were sent to test.
	Arrivals *ArrivalCheck
	// EndedAt is when Config.EndWhen ended the run, since it began; 0
	// when it ran its course.
	EndedAt time.Duration
}

// Validate checks a Config.
func (cfg Config) Validate(clients int) error {
	switch {
	case clients < 1:
		return errors.New("driver: need at least one client")
	case len(cfg.Ops) == 0:
		return errors.New("driver: workload declares no ops")
	case cfg.Duration <= 0:
		return errors.New("driver: duration must be positive")
	case cfg.Warmup < 0:
		return errors.New("driver: warmup must not be negative")
	case cfg.TargetRate < 0 || math.IsNaN(cfg.TargetRate) || math.IsInf(cfg.TargetRate, 0):
		return errors.New("driver: target rate must be a positive number")
	case cfg.TargetRate > 0 && cfg.Arrival != "" && arrivals[cfg.Arrival] == nil:
		return fmt.Errorf("driver: arrival %q must be %s", cfg.Arrival, strings.Join(ArrivalNames(), " or "))
	case cfg.MaxOps < 0 || cfg.MaxOps > 0 && cfg.TargetRate > 0:
		return errors.New("driver: max ops bounds a closed-loop run only, and must not be negative")
	case cfg.Cut != nil && (cfg.CutAt <= 0 || cfg.CutAt >= cfg.Duration):
		return fmt.Errorf("driver: the cut at %s must fall inside the measured window of %s", cfg.CutAt, cfg.Duration)
	case cfg.Steady != nil && (cfg.TargetRate > 0 || cfg.MaxOps > 0):
		return errors.New("driver: a steady-state warmup watches closed-loop throughput over time: not with a target rate or max ops")
	case cfg.Steady != nil && (cfg.Steady.Band <= 0 || cfg.Steady.Window <= 0 || cfg.Warmup <= 0):
		return errors.New("driver: a steady-state warmup needs a band, a window and a most (Warmup) above 0")
	case cfg.AfterTheFact && (cfg.MaxOps > 0 || cfg.Warmup <= 0):
		return errors.New("driver: a window chosen after the fact needs a run without max ops, and a warmup's most above 0")
	}
	return nil
}

// Run drives clients for cfg.Warmup then cfg.Duration. It returns early,
// with what was measured so far and ctx's error, when ctx is cancelled.
func Run(ctx context.Context, cfg Config, clients []Client) (*Result, error) {
	if err := cfg.Validate(len(clients)); err != nil {
		return nil, err
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	open := cfg.TargetRate > 0
	workers := make([]*worker, len(clients))
	for i := range workers {
		workers[i] = newWorker(len(cfg.Ops), open)
	}
	col := newCollector(cfg, workers, open)
	col.result.OpenLoop = open

	var stop atomic.Bool
	var crashMu sync.Mutex
	var crashed error
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	begin := time.Now()
	col.result.Began = begin
	end := begin.Add(cfg.Warmup + cfg.Duration)
	budget := newOpBudget(cfg.MaxOps, begin.Add(cfg.Warmup), len(clients))
	var wg sync.WaitGroup
	fns := make([]func(context.Context), len(clients))
	for i, cl := range clients {
		fns[i] = func(runCtx context.Context) {
			defer func() {
				// An engine that panics fails the run instead of killing tierbench.
				if p := recover(); p != nil {
					crashMu.Lock()
					if crashed == nil {
						crashed = fmt.Errorf("client %d panicked: %v", i, p)
					}
					crashMu.Unlock()
					stop.Store(true)
					cancel()
				}
			}()
			if open {
				runOpen(runCtx, cfg, i, len(clients), begin, end, cl, workers[i], &stop)
			} else {
				runClosed(runCtx, cl, workers[i], &stop, budget)
				budget.finished()
			}
		}
	}
	var laneErr error
	if onLanes(cfg, clients) {
		col.result.Lanes = min(cfg.Lanes, len(clients))
		defer keepPIdle(col.result.Lanes)()
		wg.Go(func() {
			if err := lane.RunWatched(runCtx, cfg.Lanes, fns, cfg.Threads); err != nil {
				crashMu.Lock()
				laneErr = err
				crashMu.Unlock()
				stop.Store(true)
				cancel()
			}
		})
	} else {
		for _, fn := range fns {
			wg.Go(func() { fn(runCtx) })
		}
	}

	// Tick every cfg.Tick during warmup, exactly at its end, and every cfg.Tick
	// from there, so no interval straddles the two phases. A steady-state
	// rule may end the warmup at a tick before its most (warmupEnd).
	last := time.Duration(0)
	next := cfg.Tick
	warmupEnd := cfg.Warmup
	warmupDone := cfg.Warmup == 0
	windowLength := cfg.Duration
	if cfg.Cut != nil {
		windowLength = cfg.CutAt
	}
	measuring := func() {
		col.result.WarmupTaken = warmupEnd
		if cfg.OnMeasured != nil {
			cfg.OnMeasured(warmupEnd)
		}
	}
	if warmupDone {
		measuring()
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	var ctxErr error
	for {
		total := warmupEnd + windowLength
		target := next
		if !warmupDone && warmupEnd < target {
			target = warmupEnd
		}
		if target > total {
			target = total
		}
		timer.Reset(time.Until(begin.Add(target)))
		spent := false
		select {
		case <-runCtx.Done():
			ctxErr = ctx.Err()
		case <-timer.C:
		case <-budget.spent:
			spent = true
		}
		if runCtx.Err() != nil || target >= total || spent {
			break
		}
		now := time.Since(begin)
		phase := Measured
		if !warmupDone {
			phase = Warmup
			if target == warmupEnd {
				warmupDone = true
			}
		}
		iv := col.collect(phase, last, now)
		last = now
		if cfg.EndWhen != nil && cfg.EndWhen(iv) {
			col.result.EndedAt = now
			break
		}
		if phase == Warmup && !warmupDone && cfg.Steady != nil && !cfg.AfterTheFact && cfg.Steady.Holds(col.warmupIntervals(), cfg.Tick) {
			warmupDone, warmupEnd = true, iv.Start+iv.Length
			col.result.Steady = true
		}
		switch {
		case phase == Warmup && warmupDone:
			// Measured intervals are whole ticks counted from the boundary.
			next = warmupEnd + cfg.Tick
			measuring()
		case target == next:
			next += cfg.Tick
		}
	}
	// Stop the clients; operations in flight finish and count in the last
	// interval, whose end is when the last client returned. At a cut they
	// are cancelled first, and the engine crashes under them.
	stop.Store(true)
	cancel()
	cutAt := time.Since(begin)
	crashMu.Lock()
	clean := ctxErr == nil && crashed == nil && laneErr == nil
	crashMu.Unlock()
	if cfg.Cut != nil && clean {
		cfg.Cut()
	}
	grace := cfg.StopGrace
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	var hung error
	if !waitTimeout(&wg, grace) {
		hung = fmt.Errorf("%w: an operation did not return within %s after the run ended (engine stuck?)", ErrHung, grace)
	}
	phase := Measured
	if !warmupDone {
		phase = Warmup
	}
	windowEnd := time.Since(begin)
	if cfg.Cut != nil {
		windowEnd = cutAt
	}
	col.collect(phase, last, windowEnd)
	if cfg.AfterTheFact && (warmupDone || col.result.EndedAt > 0) {
		// A run EndWhen ended within its warmup's most (a capacity
		// search's probe that passed) is cut on the series it has.
		col.truncate()
		warmupDone = true
	}
	res := col.result
	if !warmupDone {
		res.WarmupTaken = windowEnd
	}
	res.Warmup = *col.phases[Warmup]
	res.Measured = *col.phases[Measured]
	if open {
		res.Arrivals = checkSends(cfg, workers)
	}
	crashMu.Lock()
	defer crashMu.Unlock()
	return &res, errors.Join(ctxErr, crashed, hung, laneErr)
}

// waitTimeout waits for wg up to d and reports whether it finished.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// opBudget counts the operations issued in the measured window against
// Config.MaxOps; spent is closed once every client has stopped for it.
type opBudget struct {
	max      int64
	from     time.Time
	issued   atomic.Int64
	left     atomic.Int64
	spent    chan struct{}
	spentNow sync.Once
}

func newOpBudget(max int64, from time.Time, clients int) *opBudget {
	b := &opBudget{max: max, from: from, spent: make(chan struct{})}
	b.left.Store(int64(clients))
	return b
}

// take reports whether a client may issue one more operation.
func (b *opBudget) take() bool {
	if b.max <= 0 || time.Now().Before(b.from) {
		return true
	}
	return b.issued.Add(1) <= b.max
}

// finished records that a client stopped; the last one spends the budget
// (only meaningful with a bound: without one, clients stop with the run).
func (b *opBudget) finished() {
	if b.left.Add(-1) == 0 && b.max > 0 {
		b.spentNow.Do(func() { close(b.spent) })
	}
}

func runClosed(ctx context.Context, cl Client, w *worker, stop *atomic.Bool, budget *opBudget) {
	// Times are read as offsets from epoch: one monotonic clock read each,
	// where time.Now also reads the wall clock.
	epoch := time.Now()
	defer w.flush()
	// The clock read that ends an operation starts the next one when only
	// this loop's few instructions run between them (an operation held,
	// no bound on operations): one read per operation instead of two. A
	// clock read is about 40 ns in a VM, a third of the whole path's CPU
	// with two reads; what the next operation's latency gains is the loop,
	// a few ns. After a flush or an error's record it is read anew.
	chain := budget.max <= 0
	start := time.Since(epoch)
	for !stop.Load() && budget.take() {
		op, err := cl.Do(ctx)
		if stop.Load() && ctx.Err() != nil && err != nil {
			return // cancelled mid-operation: not an engine error
		}
		done := time.Since(epoch)
		if err != nil {
			w.flush() // in order: the first error is the first one seen
			w.record(op, err, done-start, done-start, false)
		} else if !w.hold(op, done-start, done) && chain {
			start = done
			continue
		}
		start = time.Since(epoch)
	}
}

func runOpen(ctx context.Context, cfg Config, i, n int, begin, end time.Time, cl Client, w *worker, stop *atomic.Bool) {
	pace := newPacer(cfg, i, n)
	intended := begin.Add(pace.next())
	// The gaps between this client's actual sends in the measured window,
	// for the check of its arrivals (CheckArrivals), handed to the worker
	// when the client stops.
	measured := begin.Add(cfg.Warmup)
	sample := newGapSample((ArrivalSample+n-1)/n, pace.seed, i)
	var sent time.Time
	defer func() {
		w.mu.Lock()
		w.gaps = sample.gaps
		w.mu.Unlock()
	}()
	timer := time.NewTimer(time.Hour) // reused: no allocation per operation
	defer timer.Stop()
	ln := lane.From(ctx)
	for !stop.Load() && intended.Before(end) {
		if ln != nil {
			if ln.Sleep(intended) != nil {
				return
			}
		} else if wait := time.Until(intended); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		start := time.Now()
		if !sent.IsZero() && !sent.Before(measured) {
			sample.add(start.Sub(sent))
		}
		sent = start
		op, err := cl.Do(ctx)
		if stop.Load() && ctx.Err() != nil && err != nil {
			return
		}
		done := time.Now()
		w.record(op, err, done.Sub(intended), done.Sub(start), start.Sub(intended) > LateThreshold)
		intended = begin.Add(pace.next())
	}
}
