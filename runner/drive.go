package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

// drive runs the driven part, warmup then measured window: tierbench's
// driver with one session and workload client per client, or an external
// load generator. Telemetry samples the measured window. The driver's
// result becomes the run's figures and histograms; a server that died
// explains the errors better than they do.
func (r *run) drive(ctx context.Context) (err error) {
	ext, dropToolDir, err := r.externalDriver()
	if err != nil {
		return err
	}
	defer dropToolDir()
	var clients []driver.Client
	if ext == nil {
		var closeClients func() error
		if clients, closeClients, err = workload.NewClients(ctx, r.db, r.w, r.cell.Clients); err != nil {
			return err
		}
		defer func() {
			// After a crash the sessions' server is gone: closing them
			// only releases them.
			if cerr := closeClients(); err == nil && !r.crashes() {
				err = cerr
			}
		}()
	}
	cut, cutAt, err := r.armCrash()
	if err != nil {
		return err
	}
	buffers, _ := r.db.(engine.BufferCounter)
	warmup, duration := r.span(ext)
	watch := newWatcher(ctx, r.telemetryConfig(ext), warmup, duration, buffers)
	mem := r.watchMemory(warmup)
	if lr := loadReporter(ext, r.db); lr != nil {
		lr.WatchLoad(watch)
		defer lr.WatchLoad(nil)
	}
	dcfg := driver.Config{
		Ops: r.w.Ops(), Warmup: warmup, Duration: duration,
		TargetRate: r.rate(), Arrival: driver.Arrival(r.st.Arrival), MaxOps: r.st.MaxOps,
		Lanes:  driver.DefaultLanes(),
		OnTick: r.showInterval,
	}
	if st := r.st.Steady; st != nil && ext == nil && dcfg.Warmup > 0 {
		// The window is chosen after the fact: the run lasts the warmup's
		// most and its duration (a crash falls that long after the most),
		// recorded every AfterTheFactTick from its first operation, and
		// MSER-5 cuts the transient; the steady rule is judged after the
		// cut on the same series. Telemetry keeps the window it was timed
		// for, from the warmup's most.
		dcfg.Steady = &driver.SteadyRule{Band: st.Band, Window: st.Window}
		dcfg.AfterTheFact, dcfg.Tick = true, AfterTheFactTick
	}
	passed := false // set by a probe's EndWhen when it passes
	if r.stepAfterTheFact(ext) {
		// A capacity search's step: its window too is chosen after the
		// fact, MSER-5 cutting the transient in its latency (an open
		// loop's throughput is its rate), at most the warmup in.
		dcfg.AfterTheFact, dcfg.Tick = true, AfterTheFactTick
		dcfg.EndWhen = r.endWhen(warmup, duration, &passed)
	}
	if ext == nil {
		dcfg.Threads = watch
	}
	if lanes, set, _ := tool.BuiltinLanes(r.cell.Driver); set {
		dcfg.Lanes = lanes // builtin:lanes=N, checked by the study's parser
	}
	dcfg.Cut, dcfg.CutAt = cut, cutAt
	r.driveStart = time.Now()
	if ext != nil {
		r.res, err = ext.Drive(ctx, dcfg, r.cell.Clients)
	} else {
		r.res, err = driver.Run(ctx, dcfg, clients)
	}
	r.driveEnd = time.Now()
	if r.res != nil && r.res.EndedAt > 0 {
		why := "its operations past the objective already made it miss, however the rest went"
		if passed {
			why = "a probe of the search's climb from a cold start, the operations of its window so far (after its transient's cut) within 60% of the objective's bound; it steers the search up, and no capacity rests on it alone"
			r.rec.Probe = true
		}
		r.rec.EndedEarly = fmt.Sprintf("after %s of %s: %s", r.res.EndedAt.Round(100*time.Millisecond), (warmup + duration).Round(100*time.Millisecond), why)
	}
	if rep := watch.stop(); rep != nil {
		r.rec.Telemetry, r.rec.TelemetryTimeline = &rep.Summary, rep
		r.rec.Disturbed, r.rec.DisturbedBy = rep.Summary.Others.Disturbed()
	}
	if m := mem.stop(); m != nil && r.rec.Telemetry != nil {
		r.rec.Telemetry.Memory = m
	}
	switch {
	case r.res != nil && dcfg.Steady != nil:
		steady := r.res.Steady
		r.rec.WarmupS, r.rec.WarmupSteady = r.res.WarmupTaken.Seconds(), &steady
	case r.res != nil && r.res.Truncation != nil:
		r.rec.WarmupS = r.res.WarmupTaken.Seconds()
	}
	if r.res != nil && (r.res.Truncation != nil || len(r.res.Intervals) >= 2*driver.MSERBatch) {
		// The cut that chose the window, or, for a window chosen live,
		// the transient judged after the fact on the run's whole series,
		// at most the warmup's most, on the steady rule's band if any
		// (not on fewer than MSER's two batches).
		t := r.res.Truncation
		if t == nil {
			judged := driver.Truncate(r.res.Intervals, warmup, dcfg.Steady)
			if r.res.OpenLoop {
				judged = driver.TruncateLatency(r.res.Intervals, warmup)
			}
			t = &judged
		}
		r.rec.Truncation = &results.Truncation{AtS: t.At.Seconds(), MeasuredShare: t.MeasuredShare, SteadyAfter: t.Steady, Bounded: t.Bounded, Chosen: r.res.Truncation != nil}
	}
	if r.res != nil {
		var ferr error
		if r.hists, ferr = results.FromDriver(r.rec, r.res); ferr != nil {
			err = ferr
		}
		if r.rec.Telemetry != nil {
			r.rec.Telemetry.LoadGen.PerOp(r.rec.Ops)
		}
	}
	if c, ok := r.db.(engine.Checker); ok && !r.crashes() {
		if cerr := c.Check(); cerr != nil {
			err = cerr
		}
	}
	if err == nil && !r.crashes() {
		if c, ok := r.db.(engine.Caveater); ok {
			r.rec.Caveats = c.Caveats(ctx)
		}
		r.rec.Caveats = append(r.rec.Caveats, r.ws.Caveats(ctx, r.cell.Placement.TierNames())...)
	}
	return err
}

// stepAfterTheFact says whether the run is a capacity search's step whose
// window is chosen after the fact: tierbench's own driver, a warmup to cut
// from, no bound on operations.
func (r *run) stepAfterTheFact(ext driver.External) bool {
	return r.cell.Rate > 0 && ext == nil && r.st.WarmupIn(r.cell) > 0 && r.st.MaxOps == 0
}

// endWhen ends a capacity step once it has certainly missed the
// objective (capacity.CertainMiss): the operations of the intervals its
// transient's cut cannot reach (from the warmup's most on), against the
// most any window of the step can hold. A step past its capacity then
// stops where its queue would only have grown, and a search moves on
// sooner; the stored step, judged on the window it ended with, misses.
// A probe (run.probe) ends too once the operations of its window so far
// pass (capacity.ProbePassed), and sets passed.
func (r *run) endWhen(warmup, duration time.Duration, passed *bool) func(driver.Interval) bool {
	slo := r.st.SLO
	if slo == nil {
		return nil
	}
	most := capacity.MostOps(r.cell.Rate, warmup+duration, r.cell.Clients)
	least := capacity.ProbeLeast(warmup + duration)
	seen := hist.New()
	var probe probeWindow
	return func(iv driver.Interval) bool {
		if r.probe && capacity.ProbePassed(*slo, r.cell.Rate, probe.look(iv, warmup), least) {
			*passed = true
			return true
		}
		if iv.Start < warmup {
			return false
		}
		for _, h := range iv.ByOp {
			seen.Merge(h)
		}
		return capacity.CertainMiss(*slo, seen, most)
	}
}

// probeWindow keeps a probe's series so far, to judge the window its
// step would be given: the intervals after the cut MSER-5 makes on their
// latency (driver.TruncateLatencyOf, at most the warmup's most), as the
// stored step's window is cut. Each interval's histogram is merged once
// and kept, so a look decodes nothing.
type probeWindow struct {
	ivs   []driver.Interval
	byInt []*hdr.Histogram // each interval's operations, merged over ops
}

// look adds iv (its ByOp lent for this call: merged, not kept) and says
// what the window after the cut holds.
func (p *probeWindow) look(iv driver.Interval, warmup time.Duration) capacity.ProbeLook {
	h := hist.New()
	for _, op := range iv.ByOp {
		h.Merge(op)
	}
	iv.ByOp = nil
	p.ivs, p.byInt = append(p.ivs, iv), append(p.byInt, h)
	cut := driver.TruncateLatencyOf(p.ivs, p.byInt, warmup).Intervals
	look := capacity.ProbeLook{Latency: hist.New(), Elapsed: iv.Start + iv.Length}
	for i := cut; i < len(p.ivs); i++ {
		look.Latency.Merge(p.byInt[i])
		look.Errors += p.ivs[i].Errors
		look.Window += p.ivs[i].Length
	}
	return look
}

// span is how long the run's driven part warms up, at most, and then
// measures. A step on an engine its search kept open (keep.go), warmed by
// the step before it, lasts the study's duration alone: MSER-5 cuts its
// transient (a rate's change, usually nothing) from it, at most the
// warmup and at most half of it, so it measures at least half the
// duration where a fresh engine's step waits out a cold start first.
func (r *run) span(ext driver.External) (warmup, duration time.Duration) {
	warmup, duration = r.st.WarmupIn(r.cell), r.st.Duration
	if r.rec.EngineKeptFrom != "" && r.stepAfterTheFact(ext) {
		warmup = min(warmup, duration/2)
		return warmup, duration - warmup
	}
	return warmup, duration
}

// AfterTheFactTick is the interval a run whose window is chosen after the
// fact is recorded at: short enough that MSER cuts its transient to a
// fifth of a second, long enough that an interval's throughput is not all
// noise.
const AfterTheFactTick = 200 * time.Millisecond

// showInterval shows a second of the run on the progress line, and
// tells the live view (Options.Live).
func (r *run) showInterval(iv driver.Interval) {
	if r.opt.Live != nil {
		r.opt.Live.Tick(r.w.Ops(), iv)
	}
	r.opt.Progress.Live(fmt.Sprintf("%s %5.1fs %-8s %9.0f ops/s  p50 %-8s p99 %-8s errors %d", r.label,
		(iv.Start + iv.Length).Seconds(), iv.Phase, iv.OpsPerSec(), fmtDur(iv.P50), fmtDur(iv.P99), iv.Errors))
}

func fmtDur(d time.Duration) string { return hist.FormatMicros(float64(d) / 1e3) }

// externalDriver returns the run's load generator when it is not
// tierbench's Go driver: a standard tool (driver: pgbench), or the engine's
// own client for a delegated workload (Ignite's). nil means the Go driver.
// A tool gets a folder for its logs in the study's scratch folder; drop
// removes it.
func (r *run) externalDriver() (ext driver.External, drop func(), err error) {
	drop = func() {}
	if d := r.cell.Driver; d != "" && !tool.IsBuiltin(d) {
		t, ok := r.opt.Catalog.Tool(d)
		if !ok {
			return nil, drop, fmt.Errorf("unknown driver %q", d)
		}
		dir := filepath.Join(r.ws.Scratch(), r.rec.ID+"-"+t.Name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, drop, fmt.Errorf("driver %s: log folder: %w", t.Name, err)
		}
		drop = func() { os.RemoveAll(dir) }
		ext, err = t.New(tool.Request{Engine: r.st.Engine, WorkloadName: r.st.Workload.Name, Workload: r.w, Params: r.params, DB: r.db, Dir: dir})
		if err != nil {
			return nil, drop, fmt.Errorf("driver %s: %w", t.Name, err)
		}
		return ext, drop, nil
	}
	if dw, ok := r.w.(workload.Delegated); ok {
		if ext, err = dw.External(r.db); err != nil {
			return nil, drop, err
		}
	}
	return ext, drop, nil
}

// telemetryConfig is what the run's sampler watches: the devices of the
// tiers the placement uses, each component's folder, the engine's process
// (tierbench itself for in-process engines) and, with tierbench's own
// driver, tierbench as the load generator (an external one reports its
// processes as it starts them).
func (r *run) telemetryConfig(ext driver.External) telemetry.Config {
	devices := map[string]string{}
	tiers := r.ws.Tiers()
	for _, t := range r.cell.Placement.Components {
		devices[t] = tiers[t].Device
	}
	pid := os.Getpid()
	if p, ok := r.db.(engine.PIDer); ok {
		pid = p.PID()
	}
	// Other processes are this host's to judge only where tierbench
	// started the engine: a target's server is someone else's process.
	cfg := telemetry.Config{Tiers: devices, Components: r.rec.Dirs, PID: pid, Others: r.st.Target == ""}
	if r.opt.Live != nil {
		cfg.OnSample = r.opt.Live.Sampled
	}
	if g, ok := r.db.(engine.ProcessGroup); ok {
		cfg.EnginePIDs = g.EnginePIDs()
	}
	if ext == nil {
		cfg.LoadName, cfg.LoadPIDs = "tierbench", []int{os.Getpid()}
	}
	return cfg
}

// loadReporter is whoever reports the external load generator's
// processes: the tool, or the engine whose client drives a delegated
// workload (Ignite's JVM); nil for tierbench's own driver.
func loadReporter(ext driver.External, db engine.DB) driver.LoadReporter {
	if ext == nil {
		return nil
	}
	if lr, ok := ext.(driver.LoadReporter); ok {
		return lr
	}
	if lr, ok := db.(driver.LoadReporter); ok {
		return lr
	}
	return nil
}

// watcher samples telemetry over the measured window: it starts a
// sampler after the warmup and stops it after the duration, both timed
// from its creation or from the load generator's Begin. As a
// driver.LoadWatch it hands the load generator's processes to the
// sampler, or keeps them for it until it starts. With buffers, it also
// reads the engine's buffer counters when the window starts and ends.
type watcher struct {
	mu               sync.Mutex
	warmup, duration time.Duration
	open, close      *time.Timer
	gen              int // which arming the timers belong to
	cfg              telemetry.Config
	sampler          *telemetry.Sampler
	report           *telemetry.Report
	stopped          bool
	// laneThreads is how many lane threads stand for tierbench's process
	// as the load generator (LaneThreads).
	laneThreads int

	ctx      context.Context
	buffers  engine.BufferCounter
	buffers0 *engine.BufferCounts
}

func newWatcher(ctx context.Context, cfg telemetry.Config, warmup, duration time.Duration, buffers engine.BufferCounter) *watcher {
	w := &watcher{cfg: cfg, ctx: ctx, buffers: buffers, warmup: warmup, duration: duration}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.arm()
	return w
}

// arm times the window from now. Callers hold mu.
func (w *watcher) arm() {
	w.gen++
	gen := w.gen
	w.open = time.AfterFunc(w.warmup, func() { w.at(gen, w.startLocked) })
	w.close = time.AfterFunc(w.warmup+w.duration, func() { w.at(gen, w.endLocked) })
}

// at runs f under mu unless the window was re-armed or stopped since.
func (w *watcher) at(gen int, f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen == w.gen && !w.stopped {
		f()
	}
}

func (w *watcher) startLocked() {
	if w.sampler != nil {
		return
	}
	w.sampler, _ = telemetry.Start(w.ctx, w.cfg) // errors of sources are inside its report
	if w.buffers != nil {
		if c, err := w.buffers.BufferCounts(w.ctx); err == nil {
			w.buffers0 = &c
		}
	}
}

func (w *watcher) endLocked() {
	if w.sampler == nil || w.report != nil {
		return
	}
	rep := w.sampler.Stop()
	if rep.Summary.LoadGen != nil {
		rep.Summary.LoadGen.LaneThreads = w.laneThreads
	}
	if w.buffers0 != nil {
		// A failed second reading leaves the figure out rather than wrong.
		if c, err := w.buffers.BufferCounts(w.ctx); err == nil {
			rep.Summary.Engine.Buffers = telemetry.NewBufferSummary(w.buffers0.Hits, w.buffers0.Reads, c.Hits, c.Reads)
		}
	}
	w.report = rep
}

// LaneThreads implements lane.ThreadWatch: the builtin driver's CPU is
// then its lanes' threads' rather than its whole process's. Named after
// the window opened (a run without warmup), they are not used: the
// process's figure stands.
func (w *watcher) LaneThreads(tids []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sampler != nil || w.stopped || len(w.cfg.LoadPIDs) != 1 || w.cfg.LoadPIDs[0] != os.Getpid() {
		return
	}
	w.cfg.LoadPIDs, w.cfg.LoadThreads = nil, slices.Clone(tids)
	w.laneThreads = len(tids)
}

// LaneThreadEnded implements lane.ThreadWatch: a thread's last CPU
// reading, as /proc loses it once its lane ends.
func (w *watcher) LaneThreadEnded(tid int, cpu time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.laneThreads > 0 && w.sampler != nil && w.report == nil {
		w.sampler.LoadExited(tid, cpu)
	}
}

// Started implements driver.LoadWatch.
func (w *watcher) Started(name string, pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cfg.LoadName, w.cfg.LoadPIDs = name, append(w.cfg.LoadPIDs, pid)
	if w.sampler != nil && w.report == nil {
		w.sampler.AddLoad(name, pid)
	}
}

// Exited implements driver.LoadWatch. A process that ended before the
// window used none of its CPU in it.
func (w *watcher) Exited(pid int, cpu time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cfg.LoadPIDs = slices.DeleteFunc(w.cfg.LoadPIDs, func(p int) bool { return p == pid })
	if w.sampler != nil && w.report == nil {
		w.sampler.LoadExited(pid, cpu)
	}
}

// Begin implements driver.LoadWatch: what was sampled of the load
// generator's start-up is dropped and the window is timed from now.
func (w *watcher) Begin() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.open.Stop()
	w.close.Stop()
	if w.sampler != nil && w.report == nil {
		w.sampler.Stop()
	}
	w.sampler, w.report, w.buffers0 = nil, nil, nil
	w.arm()
}

// measureNow opens the window now and times its end from now: the
// driver found the run steady before the warmup's most.
func (w *watcher) measureNow() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.sampler != nil {
		return
	}
	w.open.Stop()
	w.close.Stop()
	w.gen++
	gen := w.gen
	w.startLocked()
	w.close = time.AfterFunc(w.duration, func() { w.at(gen, w.endLocked) })
}

// stop ends the window if the load generator ended first (a failure, or
// max_ops spent) and returns the sampler's report, or nil when it never
// started.
func (w *watcher) stop() *telemetry.Report {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.open.Stop()
	w.close.Stop()
	w.endLocked()
	return w.report
}
