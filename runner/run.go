package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/host/cgroupfs"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/workload"
)

// run is one cell of the matrix on fresh engine state: what its phases
// share, and its record.
type run struct {
	*studyRun
	cell  study.Cell
	total int    // runs in the study, for the label
	label string // "[3/12 wal-ram sync c=16 #1]", on every progress line
	rec   *results.Run
	hists []results.Histogram

	// restored is true when the run started from the study's loaded data
	// set (a workload.LoadedOnce workload's snapshot) instead of loading.
	restored bool

	// Made by the phases, undone by close.
	folders *tier.RunFolders
	cfg     engine.Config
	db      engine.DB
	w       workload.Workload
	res     *driver.Result
	// onCluster is what a run on a cluster made (cluster.go).
	onCluster *clusterRun
	// memory is the engine's memory cgroup, with the run setting memory
	// (memory.go); removeMemory removes it.
	memory       *cgroupfs.MemoryGroup
	removeMemory func() error

	// A crash run's crash (crash.go): when it happened and whether
	// tierbench failed to do it.
	crashedAt time.Time
	crashErr  error
	// restartedAt is when a crash run's restart began (crash.go).
	restartedAt time.Time

	// driveStart and driveEnd bound the driven part, for the engine's
	// events (events.go).
	driveStart, driveEnd time.Time

	// keep, for a capacity search that keeps its engine open across its
	// steps (keep.go), holds the engine between steps: the run adopts it
	// if open, and hands its own over when it ends ok.
	keep *kept
	// probe is true for a capacity search's probe (capacity.Probing): it
	// ends once the operations of its window so far (after its
	// transient's cut) pass.
	probe bool
}

func (s *studyRun) newRun(cell study.Cell, total int) *run {
	rec := s.newRecord(cell)
	// The label names the run's series as reports will ("all-disk/pgbench
	// heap=2g").
	label := fmt.Sprintf("[%d/%d %s %s c=%d #%d]", cell.Seq, total, s.rec.SeriesOf(*rec), cell.Durability, cell.Clients, cell.Repeat)
	if cell.Rate > 0 {
		label = fmt.Sprintf("[%d %s %s c=%d #%d at %.0f ops/s]", cell.Seq, s.rec.SeriesOf(*rec), cell.Durability, cell.Clients, cell.Repeat, cell.Rate)
	}
	if s.opt.Live != nil {
		s.opt.Live.RunStarted(s.rec, rec, s.rec.SeriesOf(*rec))
	}
	return &run{studyRun: s, cell: cell, total: total, label: label, rec: rec}
}

// newRecord is the record of cell's run as it starts.
func (s *studyRun) newRecord(cell study.Cell) *results.Run {
	rec := &results.Run{
		ID: RunID(s.rec.ID, cell.Seq), StudyID: s.rec.ID, Seq: cell.Seq,
		Placement: cell.Placement.Name, Components: cell.Placement.Components,
		Durability: string(cell.Durability), Clients: cell.Clients, Repeat: cell.Repeat, Driver: cell.Driver,
		Options: s.st.OptionsIn(cell.Variant), Cache: cell.Variant.Cache,
		StartedAt: time.Now().UTC(), WarmupS: s.st.WarmupIn(cell).Seconds(), OpenLoop: s.st.TargetRate > 0 || cell.Rate > 0,
		TargetRate: cell.Rate,
	}
	if k := cell.Variant.Crash; k != "" && k != study.CrashNone {
		rec.Crash = &results.Crash{Kind: k, Nodes: cell.Variant.CrashNodes}
	}
	return rec
}

// rate is the run's open-loop rate: its search step's, or the study's (0:
// closed loop).
func (r *run) rate() float64 {
	if r.cell.Rate > 0 {
		return r.cell.Rate
	}
	return r.st.TargetRate
}

// perform carries out the run's phases in order; the first that fails
// ends the run, which is then stored as failed (a failed run is a result,
// so perform returns no error). Close always follows.
func (r *run) perform(ctx context.Context) {
	defer r.close(ctx)
	phases := []func(context.Context) error{r.open, r.load, r.coldRestart, r.drive, r.recoverFromCrash, r.events, r.verify}
	if r.keep.open() {
		// A later step of a search that keeps its engine: it only drives.
		r.adopt(r.keep)
		*r.keep = kept{}
		r.opt.Progress.Live(r.label + " driving the engine its search keeps open...")
		phases = []func(context.Context) error{r.drive, r.events, r.verify}
	}
	for _, phase := range phases {
		if err := phase(ctx); err != nil {
			r.fail(ctx, err)
			return
		}
	}
	r.judge(ctx)
}

// open makes the run's folders on its tiers (none for a target server,
// whose placement is the user's) and opens the engine on them.
func (r *run) open(ctx context.Context) error {
	opts, err := r.st.EngineOptions(r.eng.Spec(), r.cell.Variant)
	if err != nil {
		return err
	}
	r.cfg = engine.Config{Dirs: map[string]string{}, Options: opts, Scratch: r.ws.Scratch(),
		Track: r.ws.TrackProcess, LockPorts: r.ws.LockPorts, Target: r.st.Target, InChild: r.crashes(), SyncDelays: r.ws.SyncDelays()}
	if r.st.Target == "" {
		f, err := r.ws.RunFolders(r.rec.ID, r.cell.Placement.Components)
		if err != nil {
			return err
		}
		r.folders, r.cfg.Dirs, r.cfg.Devices = f, f.Dirs, f.Devices
	}
	r.rec.Dirs = r.cfg.Dirs
	if r.loadsOnce() {
		var err error
		if r.restored, err = r.restore(ctx); err != nil {
			return err
		}
	}
	// The run that loads a study's data set once loads it unbounded and
	// enters its limit when it restarts on it (takeSnapshot): the load is
	// every run's, not this run's to fail.
	if !r.loadsOnce() || r.restored {
		if err := r.memoryLimit(); err != nil {
			return err
		}
	}
	r.cfg.Durability = r.cell.Placement.DurabilityIn(r.cell.Durability)
	if r.cfg.Durability != r.cell.Durability {
		r.rec.AppliedDurability = string(r.cfg.Durability)
	}
	db, err := r.eng.Open(ctx, r.cfg)
	if err != nil {
		return openError(r.st.Engine, err)
	}
	r.db, r.rec.EngineVersion = db, db.Version()
	return nil
}

// load builds the workload's initial data set (timed and stored, not
// measured).
func (r *run) load(ctx context.Context) error {
	w, err := r.wspec.BuildFrom(r.params)
	if err != nil {
		return err
	}
	r.w = w
	if r.restored {
		return nil
	}
	r.opt.Progress.Live(r.label + " loading...")
	ls, err := w.Load(ctx, r.db, loaders(r.cell.Clients))
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	r.rec.LoadRecords, r.rec.LoadS = ls.Records, ls.Duration.Seconds()
	if r.loadsOnce() {
		return r.takeSnapshot(ctx)
	}
	return nil
}

// loaders picks the load phase's parallelism: enough to overlap commits,
// not so many that a 2-core machine thrashes.
func loaders(clients int) int {
	n := min(2*runtime.GOMAXPROCS(0), 8)
	return min(max(clients, 2), n)
}

// coldRestart, with `cache: cold`, closes the engine, writes everything
// out, drops the page cache and opens the engine again on the same
// folders, so the measured window starts with nothing cached (the IRIS
// study's COLD runs).
func (r *run) coldRestart(ctx context.Context) error {
	if r.cell.Variant.Cache != study.CacheCold {
		return nil
	}
	r.opt.Progress.Live(r.label + " restarting the engine with the page cache dropped (cache: cold)...")
	db := r.db
	r.db = nil // closed, whatever Close says
	if err := db.Close(); err != nil {
		return fmt.Errorf("cold restart: close engine: %w", err)
	}
	if err := DropCaches(); err != nil {
		return err
	}
	db, err := r.eng.Open(ctx, r.cfg)
	if err != nil {
		return fmt.Errorf("cold restart: reopen engine: %w", err)
	}
	r.db = db
	return nil
}

// DropCaches syncs all filesystems and drops the page cache, dentries and
// inodes. It needs root.
func DropCaches() error {
	unix.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200); err != nil {
		return fmt.Errorf("drop the page cache for cache: cold (needs root): %w", err)
	}
	return nil
}

// verify checks the workload's invariant after the measured window (the
// bank's total); the proof is stored with the run.
func (r *run) verify(ctx context.Context) error {
	v, ok := r.w.(workload.Verifier)
	if !ok || ctx.Err() != nil || r.db == nil {
		return nil
	}
	checked, err := v.Verify(context.WithoutCancel(ctx), r.db)
	if err != nil && r.crashes() {
		// After a crash, a broken invariant is what the crash did: the
		// run's finding, not tierbench's failure.
		c := r.rec.Crash
		c.Consistent = false
		c.Detail = fmt.Sprintf("invariant broken after the crash: %v; %s", err, c.Detail)
		return nil
	}
	if err != nil {
		r.opt.Progress.Line(fmt.Sprintf("%s INVARIANT BROKEN: %v", r.label, err))
		return fmt.Errorf("INVARIANT BROKEN after the run: %w", err)
	}
	r.rec.Verified, r.rec.Verification = true, checked
	return nil
}

// judge decides a run whose phases all succeeded: too many failed
// operations, or none completed, fail it.
func (r *run) judge(ctx context.Context) {
	var first error
	if r.res != nil {
		first = r.res.FirstError
	}
	if total := r.rec.Ops + r.rec.Errors; r.rec.Errors > 0 && float64(r.rec.Errors) > r.opt.MaxErrorRatio*float64(total) {
		r.fail(ctx, fmt.Errorf("%d of %d operations failed (more than %.0f%%); first error: %v", r.rec.Errors, total,
			r.opt.MaxErrorRatio*100, first))
		return
	}
	if r.rec.Ops == 0 {
		r.fail(ctx, errors.New("no operation completed in the measured window"))
		return
	}
	r.rec.Status = results.RunOK
	if first != nil {
		r.rec.Error = "first of the tolerated errors: " + first.Error()
	}
}

// close ends every run, failed, panicked or ok: it closes the engine
// (a failed close fails an ok run), removes the run folders (or, with
// --keep, forgets them) and reports the outcome.
func (r *run) close(ctx context.Context) {
	if p := recover(); p != nil {
		r.fail(ctx, fmt.Errorf("engine panicked: %v", p))
		r.hists = nil
	}
	if r.st.SLO != nil && r.rec.Status == results.RunOK {
		r.rec.Footprint = footprints(r.rec.Dirs)
	}
	if r.keep != nil && r.db != nil && r.rec.Status == results.RunOK && ctx.Err() == nil {
		r.handOver(r.keep) // the search's next step drives it; closeKept ends it
	}
	if r.db != nil {
		if err := r.db.Close(); err != nil && r.rec.Status == results.RunOK {
			r.fail(ctx, err)
		}
	}
	if r.removeMemory != nil {
		if err := r.removeMemory(); err != nil {
			r.opt.Progress.Line(fmt.Sprintf("%s warning: %v", r.label, err))
		}
	}
	if r.folders != nil {
		done := r.folders.Remove
		if r.opt.Keep {
			done = r.folders.Keep
		}
		if err := done(); err != nil {
			r.opt.Progress.Line(fmt.Sprintf("%s warning: %v", r.label, err))
		}
	}
	r.rec.FinishedAt = time.Now().UTC()
	switch r.rec.Status {
	case results.RunOK:
		own := ""
		if m := r.studyRun.rec.Metric; m != nil {
			own = fmt.Sprintf(" (%.0f %s)", r.studyRun.rec.Throughput(*r.rec), m.Name)
		}
		r.opt.Progress.Line(fmt.Sprintf("%s ok: %.0f ops/s%s, p50 %s, p99 %s, %d errors%s", r.label, r.rec.ThroughputOpsS, own,
			hist.FormatMicros(r.rec.Latency.P50), hist.FormatMicros(r.rec.Latency.P99), r.rec.Errors, crashText(r.rec.Crash)))
	case results.RunFailed:
		r.opt.Progress.Line(fmt.Sprintf("%s FAILED: %s", r.label, r.rec.Error))
	}
}

// fail stores err as the run's cause (a full tier named as such, an
// engine without the workload's data model named), or marks the run
// interrupted when the study was cancelled.
func (r *run) fail(ctx context.Context, err error) {
	err = r.memoryKilled(err)
	if errors.Is(err, engine.ErrNoModel) {
		err = fmt.Errorf("engine %s: %w", r.st.Engine, err)
	}
	r.rec.Status = results.RunFailed
	r.rec.Error = tierFull(err, r.cell.Placement, r.studyRun.rec.Tiers).Error()
	if ctx.Err() != nil {
		r.rec.Status = results.RunInterrupted
	}
}
