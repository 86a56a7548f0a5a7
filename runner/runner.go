// Package runner carries out a validated study: it prepares the tiers, and
// for every cell of the matrix creates fresh run folders, opens the engine
// with the cell's placement and durability, loads, drives the workload,
// closes the engine, removes the folders and stores the run. A run that
// fails is stored as failed and the study goes on; a cancelled context
// (Ctrl-C) stops the study, which is stored as interrupted.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/probe"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

// Engines finds an engine implementation by name.
type Engines interface {
	Open(name string) (engine.Engine, bool)
	Workload(name string) (workload.Spec, bool)
	Tool(name string) (tool.Tool, bool)
}

// Options configure a Runner.
type Options struct {
	Catalog Engines
	Store   *results.Store
	// Keep leaves run folders in place after each run.
	Keep bool
	// Ledger records what tierbench creates (mounts, loop devices, run
	// folders) so `tierbench cleanup` can undo it after a kill; nil records
	// nothing and allows no provisioned tiers.
	Ledger *tier.Ledger
	// Progress receives human progress; nil discards it.
	Progress Observer
	// MaxErrorRatio is the share of failed operations above which a run is
	// failed; 0 means DefaultMaxErrorRatio.
	MaxErrorRatio float64
	// Resume is an interrupted study to take up again (`run --resume`):
	// the study st must be its stored text; only the cells without an ok
	// run are run, into the same study.
	Resume *results.Study
	// Explain, when set, gives the sentence printed after each ok run
	// (its likely bottleneck). Nothing it says is stored: bottlenecks are
	// computed from the stored telemetry when results are shown, so the
	// runner needs no attribution of its own (cmd/tierbench passes
	// stats.Attribute's text).
	Explain func(*results.Run, *results.Study) string
}

// Observer is told of a study's progress (see package progress).
type Observer interface {
	// Line is a line to keep: notes, each run's outcome.
	Line(s string)
	// Live is the current run's per-second line.
	Live(s string)
	// Runs says how many of the study's runs are done.
	Runs(done, total int)
}

type discard struct{}

func (discard) Line(string)   {}
func (discard) Live(string)   {}
func (discard) Runs(int, int) {}

// DefaultMaxErrorRatio fails a run when more than 1% of its operations fail.
const DefaultMaxErrorRatio = 0.01

// Summary counts a study's runs by outcome.
type Summary struct {
	Study       *results.Study
	OK, Failed  int
	Interrupted bool
}

// RunFolderPrefix starts the name of every run folder tierbench creates, so
// leftovers are recognisable.
const RunFolderPrefix = "tierbench-run-"

// Run carries out st and stores everything under a new study id.
func Run(ctx context.Context, st *study.Study, opt Options) (*Summary, error) {
	if opt.Progress == nil {
		opt.Progress = discard{}
	}
	if opt.MaxErrorRatio == 0 {
		opt.MaxErrorRatio = DefaultMaxErrorRatio
	}
	eng, ok := opt.Catalog.Open(st.Engine)
	if !ok {
		return nil, fmt.Errorf("unknown engine %q", st.Engine)
	}
	wspec, ok := opt.Catalog.Workload(st.Workload.Name)
	if !ok {
		return nil, fmt.Errorf("unknown workload %q", st.Workload.Name)
	}
	// One instance for the record of effective parameters; each run builds
	// its own, since a workload carries per-run state (the insert counter).
	w0, err := wspec.New(st.Workload.Params)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", st.Workload.Name, err)
	}
	if opt.Ledger != nil {
		left, err := opt.Ledger.Leftovers()
		if err != nil {
			return nil, err
		}
		if len(left) > 0 {
			return nil, &LeftoversError{Resources: left}
		}
	}
	rec := newStudyRecord(st, w0.Params())
	var done map[int]bool // cells that already have an ok run (resume)
	if opt.Resume != nil {
		if rec, done, err = resumed(ctx, opt.Store, opt.Resume); err != nil {
			return nil, err
		}
	}
	prov := &tier.Provisioner{Ledger: opt.Ledger, Tag: rec.ID}
	defer func() {
		if err := prov.Close(); err != nil {
			opt.Progress.Line("warning: undo provisioned tiers: " + err.Error())
		}
	}()
	tiers, err := prepareTiers(ctx, st, prov)
	if err != nil {
		return nil, err
	}
	rec.Tiers = tiers
	if rec.Probes, err = probeTiers(ctx, st, tiers, opt); err != nil {
		return nil, err
	}
	store := context.WithoutCancel(ctx) // results are stored even after Ctrl-C
	if err := opt.Store.PutStudy(store, rec); err != nil {
		return nil, err
	}
	forget, err := recordStudy(opt.Ledger, opt.Store, rec.ID)
	if err != nil {
		return nil, err
	}
	defer forget()
	for _, t := range st.Tiers {
		if info := tiers[t.Name]; !info.Durable {
			opt.Progress.Line(fmt.Sprintf("note: tier %s (%s) is not durable: %s", t.Name, info.Path, info.Note))
		}
	}

	scratch, dropScratch, err := makeScratch(opt.Ledger, rec.ID)
	if err != nil {
		return nil, err
	}
	defer dropScratch()

	sum := &Summary{Study: rec, OK: len(done)}
	cells := st.Matrix()
	opt.Progress.Line(fmt.Sprintf("study %s (%s): %d runs", rec.ID, st.Name, len(cells)))
	if len(done) > 0 {
		opt.Progress.Line(fmt.Sprintf("resuming: %d of %d runs are already ok and are not run again", len(done), len(cells)))
	}
	opt.Progress.Runs(len(done), len(cells))
	finished := len(done)
	for _, cell := range cells {
		if ctx.Err() != nil {
			break
		}
		if done[cell.Seq] {
			continue
		}
		r, hists := runCell(ctx, st, eng, wspec, rec, tiers, cell, opt, len(cells), scratch)
		if r.Status == results.RunInterrupted {
			break // the unfinished run is not stored
		}
		if rec.EngineVersion == "" {
			rec.EngineVersion = r.EngineVersion
		}
		if r.Status == results.RunOK && opt.Explain != nil {
			opt.Progress.Line(fmt.Sprintf("[%d/%d] bottleneck: %s", cell.Seq, len(cells), opt.Explain(r, rec)))
		}
		if opt.Resume != nil { // a failed attempt of this cell is replaced
			if err := opt.Store.DeleteRun(store, r.ID); err != nil {
				return sum, err
			}
		}
		if err := opt.Store.AddRun(store, r, hists); err != nil {
			return sum, err
		}
		if r.Status == results.RunOK {
			sum.OK++
		} else {
			sum.Failed++
		}
		finished++
		opt.Progress.Runs(finished, len(cells))
	}
	now := time.Now().UTC()
	rec.FinishedAt = &now
	rec.Status = results.StudyDone
	if ctx.Err() != nil {
		rec.Status = results.StudyInterrupted
		sum.Interrupted = true
	}
	if err := opt.Store.PutStudy(store, rec); err != nil {
		return sum, err
	}
	return sum, nil
}

// ProbeMaxAge is how old a stored probe may be for `probe: cached`.
const ProbeMaxAge = 7 * 24 * time.Hour

// probeTiers finds or measures each tier's fio figures as the study asks.
// A stored probe counts only for the same device, filesystem and mount.
func probeTiers(ctx context.Context, st *study.Study, tiers map[string]tier.Info, opt Options) (map[string]*results.Probe, error) {
	mode := st.Probe
	switch mode {
	case study.ProbeOff:
		return nil, nil
	case "":
		mode = study.ProbeCached
	}
	out := map[string]*results.Probe{}
	for _, t := range st.Tiers {
		info := tiers[t.Name]
		switch mode {
		case study.ProbeCached:
			p, err := opt.Store.LatestProbe(ctx, info.Device, info.FSType, info.MountPoint, time.Now().Add(-ProbeMaxAge))
			if err != nil {
				return nil, err
			}
			if p != nil {
				out[t.Name] = p
			}
			continue
		}
		quick := mode == study.ProbeQuick
		opt.Progress.Live(fmt.Sprintf("probing tier %s (%s) with fio%s...", t.Name, info.Path, map[bool]string{true: ", quick", false: ""}[quick]))
		pt, err := probe.Probe(ctx, info.Path, probe.Options{Quick: quick})
		if err != nil {
			return nil, fmt.Errorf("probe tier %s: %w", t.Name, err)
		}
		pt.Emulated = pt.Emulated || info.Emulated
		if info.Emulated {
			info.EmulationCheck = probe.EmulationCheck(t.Latency, t.Throttle, pt)
			tiers[t.Name] = info
			opt.Progress.Line(fmt.Sprintf("tier %s is emulated (%s): %s", t.Name, info.Emulation, info.EmulationCheck))
		}
		p := &results.Probe{TakenAt: time.Now().UTC(), MountPoint: info.MountPoint, Quick: quick, Tier: pt}
		if err := opt.Store.PutProbe(context.WithoutCancel(ctx), *p); err != nil {
			return nil, err
		}
		if pt.Fio != nil {
			opt.Progress.Line(fmt.Sprintf("tier %s: fsync p50 %s, sync ceiling %.0f/s, 4k random write %.0f IOPS (qd32), sequential write %.0f MB/s",
				t.Name, report.FormatMicros(pt.Fio.FsyncLat.P50), pt.Fio.SyncCeilingPerS, pt.Fio.RandWriteQD32.IOPS, pt.Fio.SeqWriteMBps))
		}
		out[t.Name] = p
	}
	return out, nil
}

// LeftoversError refuses a run while a killed tierbench's mounts, loop
// devices or folders are still in place.
type LeftoversError struct{ Resources []tier.Resource }

func (e *LeftoversError) Error() string {
	names := make([]string, len(e.Resources))
	for i, r := range e.Resources {
		names[i] = r.String()
	}
	return fmt.Sprintf("a previous tierbench left %d thing(s) behind: %s; run `tierbench cleanup` first",
		len(names), strings.Join(names, ", "))
}

// prepareTiers provisions the tiers tierbench creates, then inspects every
// tier. Provisioned tiers need root and a ledger, so a killed run can be
// cleaned up.
func prepareTiers(ctx context.Context, st *study.Study, prov *tier.Provisioner) (map[string]tier.Info, error) {
	tiers := map[string]tier.Info{}
	for _, t := range st.Tiers {
		path := t.Path
		if t.Provisioned() {
			if prov.Ledger == nil {
				return nil, fmt.Errorf("tier %s: provisioned tiers need tierbench's state folder (no ledger given)", t.Name)
			}
			var err error
			switch {
			case t.Tmpfs != nil:
				path, err = prov.Tmpfs(t.Name, *t.Tmpfs)
			case t.Loop != nil:
				path, err = prov.Loop(ctx, t.Name, *t.Loop)
			case t.Pmem != nil:
				path, err = prov.Pmem(ctx, t.Name, *t.Pmem)
			}
			if err == nil && t.Throttle != nil {
				var dev string
				if dev, err = tier.LoopDevice(path); err == nil {
					err = prov.Throttle(t.Name, dev, *t.Throttle)
				}
			}
			if err == nil && t.Latency != nil {
				path, err = prov.Latency(t.Name, path, *t.Latency)
			}
			if err != nil {
				return nil, fmt.Errorf("provision tiers: %w", err)
			}
		}
		info, err := tier.Prepare(t.Name, path)
		if err != nil {
			return nil, fmt.Errorf("prepare tiers: %w", err)
		}
		if t.Latency != nil {
			info.Emulated = true
			info.Emulation = joinNonEmpty(info.Emulation, "latency (FUSE): "+t.Latency.String())
			if c, ok := prov.LatencyCalibration(t.Name); ok {
				info.Emulation += " (" + c.String() + ")"
			}
		}
		if t.Throttle != nil {
			info.Emulated = true
			info.Emulation = joinNonEmpty(info.Emulation, "throttled (cgroup): "+t.Throttle.String())
		}
		tiers[t.Name] = info
	}
	return tiers, nil
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func newStudyRecord(st *study.Study, params map[string]string) *results.Study {
	var b [3]byte
	_, _ = rand.Read(b[:])
	now := time.Now().UTC()
	rec := &results.Study{
		ID:   now.Format("20060102-150405") + "-" + hex.EncodeToString(b[:]),
		Name: st.Name, Engine: st.Engine, Workload: st.Workload.Name, Baseline: st.Baseline,
		StartedAt: now, Status: results.StudyRunning, Env: hostenv.Capture(),
		Clients: st.Clients, WorkloadParams: params, Options: st.Options,
		WarmupS: st.Warmup.Seconds(), DurationS: st.Duration.Seconds(), Repeat: st.Repeat,
		TargetRate: st.TargetRate, Source: st.Source, Drivers: st.Drivers,
	}
	if st.Target != "" {
		rec.Target = engine.RedactTarget(st.Target)
		rec.Source = engine.RedactTargetIn(st.Source, st.Target)
	}
	if st.TargetRate > 0 {
		rec.Arrival = st.Arrival
	}
	for _, d := range st.Durability {
		rec.Durability = append(rec.Durability, string(d))
	}
	for _, p := range st.Placements {
		rec.Placements = append(rec.Placements, results.Placement{Name: p.Name, Components: p.Components, Durability: string(p.Durability)})
	}
	return rec
}

// runCell performs one run and returns its record; it never returns an
// error, because a failed run is a result.
func runCell(ctx context.Context, st *study.Study, eng engine.Engine, wspec workload.Spec, rec *results.Study,
	tiers map[string]tier.Info, cell study.Cell, opt Options, total int, scratch string) (r *results.Run, hists []results.Histogram) {
	r = &results.Run{
		ID: fmt.Sprintf("%s-%03d", rec.ID, cell.Seq), StudyID: rec.ID, Seq: cell.Seq,
		Placement: cell.Placement.Name, Components: cell.Placement.Components,
		Durability: string(cell.Durability), Clients: cell.Clients, Repeat: cell.Repeat, Driver: cell.Driver,
		StartedAt: time.Now().UTC(), WarmupS: st.Warmup.Seconds(), OpenLoop: st.TargetRate > 0,
	}
	series := cell.Placement.Name
	if len(st.Drivers) > 1 {
		series += "/" + cell.Driver
	}
	label := fmt.Sprintf("[%d/%d %s %s c=%d #%d]", cell.Seq, total, series, cell.Durability, cell.Clients, cell.Repeat)
	fail := func(err error) {
		r.Status = results.RunFailed
		r.Error = tierFull(err, cell.Placement, tiers).Error()
		if ctx.Err() != nil {
			r.Status = results.RunInterrupted
		}
	}
	defer func() {
		if p := recover(); p != nil {
			fail(fmt.Errorf("engine panicked: %v", p))
			hists = nil
		}
		r.FinishedAt = time.Now().UTC()
		switch r.Status {
		case results.RunOK:
			opt.Progress.Line(fmt.Sprintf("%s ok: %.0f ops/s, p50 %s, p99 %s, %d errors", label, r.ThroughputOpsS,
				report.FormatMicros(r.Latency.P50), report.FormatMicros(r.Latency.P99), r.Errors))
		case results.RunFailed:
			opt.Progress.Line(fmt.Sprintf("%s FAILED: %s", label, r.Error))
		}
	}()

	dirs, folders := map[string]string{}, &runFolders{}
	var err error
	if st.Target == "" { // a target server's placement is the user's: nothing to make
		dirs, folders, err = makeRunFolders(r.ID, cell.Placement, tiers, opt.Ledger)
	}
	r.Dirs = dirs
	defer func() {
		done := folders.remove
		if opt.Keep {
			done = folders.keep
		}
		if err := done(); err != nil {
			opt.Progress.Line(fmt.Sprintf("%s warning: %v", label, err))
		}
	}()
	if err != nil {
		fail(err)
		return r, nil
	}
	applied := cell.Placement.DurabilityIn(cell.Durability)
	if applied != cell.Durability {
		r.AppliedDurability = string(applied)
	}
	cfg := engine.Config{Dirs: dirs, Durability: applied, Options: st.Options, Scratch: scratch,
		Track: trackProcesses(opt.Ledger), Target: st.Target}
	db, err := eng.Open(ctx, cfg)
	if err != nil {
		fail(err)
		return r, nil
	}
	r.EngineVersion = db.Version()
	defer func() {
		if db == nil {
			return
		}
		if err := db.Close(); err != nil && r.Status == results.RunOK {
			fail(err)
		}
	}()
	w, err := wspec.New(st.Workload.Params)
	if err != nil {
		fail(fmt.Errorf("workload %s: %w", wspec.Name, err))
		return r, nil
	}

	opt.Progress.Live(label + " loading...")
	ls, err := w.Load(ctx, st.Engine, db, loaders(cell.Clients))
	if err != nil {
		fail(fmt.Errorf("load: %w", err))
		return r, nil
	}
	r.LoadRecords, r.LoadS = ls.Records, ls.Duration.Seconds()
	if st.Cache == study.CacheCold {
		opt.Progress.Live(label + " restarting the engine with the page cache dropped (cache: cold)...")
		if db, err = coldRestart(ctx, eng, db, cfg); err != nil {
			fail(err)
			return r, nil
		}
	}

	ext, dropToolDir, err := externalDriver(opt.Catalog, st, cell, w, db, scratch, r.ID)
	if err != nil {
		fail(err)
		return r, nil
	}
	defer dropToolDir()
	var clients []driver.Client
	if ext == nil {
		clients = make([]driver.Client, cell.Clients)
		for i := range clients {
			sess, err := db.NewSession(ctx)
			if err != nil {
				fail(fmt.Errorf("client %d: %w", i, err))
				return r, nil
			}
			defer sess.Close()
			c, err := w.NewClient(st.Engine, i, sess)
			if err != nil {
				fail(fmt.Errorf("client %d: %w", i, err))
				return r, nil
			}
			clients[i] = c
		}
	}
	// Telemetry covers the measured window: the sampler starts when the
	// warmup ends.
	enginePID := os.Getpid() // in-process engines
	if p, ok := db.(interface{ PID() int }); ok {
		enginePID = p.PID() // server engines: watch the server
	}
	watch := newWatcher(ctx, telemetry.Config{Tiers: tierDevices(tiers, cell.Placement), Components: dirs, PID: enginePID}, st.Warmup)
	dcfg := driver.Config{
		Ops: w.Ops(), Warmup: st.Warmup, Duration: st.Duration,
		TargetRate: st.TargetRate, Arrival: driver.Arrival(st.Arrival),
		OnTick: func(iv driver.Interval) {
			opt.Progress.Live(fmt.Sprintf("%s %5.1fs %-8s %9.0f ops/s  p50 %-8s p99 %-8s errors %d", label,
				(iv.Start + iv.Length).Seconds(), iv.Phase, iv.OpsPerSec(), fmtDur(iv.P50), fmtDur(iv.P99), iv.Errors))
		},
	}
	var res *driver.Result
	if ext != nil {
		res, err = ext.Drive(ctx, dcfg, cell.Clients)
	} else {
		res, err = driver.Run(ctx, dcfg, clients)
	}
	if rep := watch.stop(); rep != nil {
		r.Telemetry, r.TelemetryTimeline = &rep.Summary, rep
	}
	if res != nil {
		hists, err = fillRun(r, res, err)
	}
	if c, ok := db.(engine.Checker); ok {
		// A server that died explains the errors better than they do.
		if cerr := c.Check(); cerr != nil {
			err = cerr
		}
	}
	if v, ok := w.(workload.Verifier); ok && err == nil && ctx.Err() == nil {
		checked, verr := v.Verify(context.WithoutCancel(ctx), st.Engine, db)
		if verr != nil {
			err = fmt.Errorf("INVARIANT BROKEN after the run: %w", verr)
			opt.Progress.Line(fmt.Sprintf("%s INVARIANT BROKEN: %v", label, verr))
		} else {
			r.Verified, r.Verification = true, checked // the proof stays with the run
		}
	}
	if err != nil {
		fail(err)
		return r, hists
	}
	if total := r.Ops + r.Errors; r.Errors > 0 && float64(r.Errors) > opt.MaxErrorRatio*float64(total) {
		fail(fmt.Errorf("%d of %d operations failed (more than %.0f%%); first error: %v", r.Errors, total,
			opt.MaxErrorRatio*100, res.FirstError))
		return r, hists
	}
	if r.Ops == 0 {
		fail(errors.New("no operation completed in the measured window"))
		return r, hists
	}
	r.Status = results.RunOK
	if res.FirstError != nil {
		r.Error = "first of the tolerated errors: " + res.FirstError.Error()
	}
	return r, hists
}

// externalDriver returns the run's load generator when it is not
// tierbench's Go driver: a standard tool (driver: pgbench), or the engine's
// own client for a delegated workload (Ignite's). nil means the Go driver.
// A tool gets a folder for its logs in the study's scratch folder; drop
// removes it.
func externalDriver(cat Engines, st *study.Study, cell study.Cell, w workload.Workload, db engine.DB,
	scratch, runID string) (ext driver.External, drop func(), err error) {
	drop = func() {}
	if cell.Driver != "" && cell.Driver != tool.Builtin {
		t, ok := cat.Tool(cell.Driver)
		if !ok {
			return nil, drop, fmt.Errorf("unknown driver %q", cell.Driver)
		}
		dir := filepath.Join(scratch, runID+"-"+t.Name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, drop, fmt.Errorf("driver %s: log folder: %w", t.Name, err)
		}
		drop = func() { os.RemoveAll(dir) }
		ext, err = t.New(tool.Request{Engine: st.Engine, WorkloadName: st.Workload.Name, Workload: w, DB: db, Dir: dir})
		if err != nil {
			return nil, drop, fmt.Errorf("driver %s: %w", t.Name, err)
		}
		return ext, drop, nil
	}
	if dw, ok := w.(workload.Delegated); ok {
		if ext, err = dw.External(st.Engine, db); err != nil {
			return nil, drop, err
		}
	}
	return ext, drop, nil
}

// fillRun copies a driver result into a run record and encodes its histograms.
func fillRun(r *results.Run, res *driver.Result, runErr error) ([]results.Histogram, error) {
	m := res.Measured
	r.DurationS = m.Length.Seconds()
	r.Ops, r.Errors, r.Late = m.Ops, m.Errors, m.Late
	r.ThroughputOpsS = m.Throughput()
	r.ByOp = map[string]results.OpSummary{}
	var hists []results.Histogram
	for phase, pr := range map[driver.Phase]driver.PhaseResult{driver.Measured: res.Measured, driver.Warmup: res.Warmup} {
		all, allSvc := hist.New(), hist.New()
		for _, o := range pr.ByOp {
			all.Merge(o.Latency)
			svc := o.Latency
			if o.Service != nil {
				svc = o.Service
			}
			allSvc.Merge(svc)
			if phase == driver.Measured {
				r.ByOp[o.Name] = results.OpSummary{Ops: o.Ops, Errors: o.Errors,
					Latency: hist.Summarize(o.Latency), ServiceTime: hist.Summarize(svc)}
			}
			h, err := encodePair(o.Name, string(phase), o.Latency, o.Service)
			if err != nil {
				return nil, err
			}
			hists = append(hists, h...)
		}
		var svcAll = allSvc
		if !res.OpenLoop {
			svcAll = nil
		}
		h, err := encodePair(results.OpAll, string(phase), all, svcAll)
		if err != nil {
			return nil, err
		}
		hists = append(hists, h...)
		if phase == driver.Measured {
			r.Latency = hist.Summarize(all)
			r.ServiceTime = hist.Summarize(allSvc)
		}
	}
	sort.Slice(hists, func(i, j int) bool {
		a, b := hists[i], hists[j]
		return a.Phase+a.Op+a.Kind < b.Phase+b.Op+b.Kind
	})
	for _, iv := range res.Intervals {
		r.Timeline = append(r.Timeline, results.Interval{
			T: (iv.Start + iv.Length).Seconds(), Length: iv.Length.Seconds(), Phase: string(iv.Phase),
			Ops: iv.Ops, OpsS: iv.OpsPerSec(), Errors: iv.Errors, Late: iv.Late,
			P50us: float64(iv.P50) / 1e3, P99us: float64(iv.P99) / 1e3,
		})
	}
	return hists, runErr
}

// makeScratch creates the study's scratch folder for engine templates, in
// the state folder (recorded in the ledger) or a temporary folder.
func makeScratch(ledger *tier.Ledger, id string) (string, func(), error) {
	if ledger == nil {
		dir, err := os.MkdirTemp("", "tierbench-scratch-")
		if err != nil {
			return "", nil, fmt.Errorf("create scratch folder: %w", err)
		}
		return dir, func() { os.RemoveAll(dir) }, nil
	}
	dir := filepath.Join(ledger.Dir(), "scratch", id)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", nil, fmt.Errorf("create scratch folder: %w", err)
	}
	r, err := ledger.Mkdir(dir, 0o755)
	if err != nil {
		return "", nil, fmt.Errorf("scratch folder: %w", err)
	}
	return dir, func() {
		if tier.Undo(r) == nil {
			ledger.Done(r)
		}
	}, nil
}

// trackProcesses records the servers engines start in the ledger, so
// `tierbench cleanup` kills any that outlive a killed tierbench.
func trackProcesses(ledger *tier.Ledger) func(pid int) func() {
	if ledger == nil {
		return nil
	}
	return func(pid int) func() {
		r, err := ledger.Intend(tier.ProcessResource(pid, "engine server"))
		if err != nil {
			return func() {}
		}
		return func() { ledger.Done(r) }
	}
}

// tierFull turns a storage-full failure into "tier X full", naming the
// placement's tier with the least free space, instead of a stack of driver
// errors.
func tierFull(err error, p study.Placement, tiers map[string]tier.Info) error {
	msg := strings.ToLower(err.Error())
	if !errors.Is(err, syscall.ENOSPC) && !strings.Contains(msg, "no space left") && !strings.Contains(msg, "enospc") && !strings.Contains(msg, "disk full") &&
		!strings.Contains(msg, "could not extend file") {
		return err
	}
	fullest, least := "", 2.0
	for _, t := range p.Components {
		var fs unix.Statfs_t
		if unix.Statfs(tiers[t].Path, &fs) != nil || fs.Blocks == 0 {
			continue
		}
		if free := float64(fs.Bavail) / float64(fs.Blocks); free < least {
			fullest, least = t, free
		}
	}
	if fullest == "" {
		return err
	}
	return fmt.Errorf("tier %s full (%.1f%% free): make it larger or load fewer records: %w", fullest, least*100, err)
}

// coldRestart closes the engine, writes everything out, drops the page
// cache and opens the engine again on the same folders, so the measured
// window starts with nothing cached (the IRIS study's COLD runs).
func coldRestart(ctx context.Context, eng engine.Engine, db engine.DB, cfg engine.Config) (engine.DB, error) {
	if err := db.Close(); err != nil {
		return nil, fmt.Errorf("cold restart: close engine: %w", err)
	}
	if err := DropCaches(); err != nil {
		return nil, err
	}
	db, err := eng.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cold restart: reopen engine: %w", err)
	}
	return db, nil
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

// tierDevices maps each tier the placement uses to its block device.
func tierDevices(tiers map[string]tier.Info, p study.Placement) map[string]string {
	out := map[string]string{}
	for _, t := range p.Components {
		out[t] = tiers[t].Device
	}
	return out
}

// watcher starts a telemetry sampler after a delay and stops it on demand.
type watcher struct {
	mu      sync.Mutex
	timer   *time.Timer
	sampler *telemetry.Sampler
	stopped bool
}

func newWatcher(ctx context.Context, cfg telemetry.Config, after time.Duration) *watcher {
	w := &watcher{}
	w.timer = time.AfterFunc(after, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.stopped {
			return
		}
		w.sampler, _ = telemetry.Start(ctx, cfg) // errors of sources are inside its report
	})
	return w
}

// stop returns the sampler's report, or nil when it never started.
func (w *watcher) stop() *telemetry.Report {
	w.timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.sampler == nil {
		return nil
	}
	return w.sampler.Stop()
}

// encodePair encodes an op's latency and (open loop only) service histograms.
func encodePair(op, phase string, lat, svc *hdr.Histogram) ([]results.Histogram, error) {
	var out []results.Histogram
	for _, h := range []struct {
		kind string
		h    *hdr.Histogram
	}{{results.KindLatency, lat}, {results.KindService, svc}} {
		if h.h == nil {
			continue
		}
		b, err := hist.Encode(h.h)
		if err != nil {
			return nil, fmt.Errorf("%s %s histogram: %w", op, h.kind, err)
		}
		out = append(out, results.Histogram{Op: op, Kind: h.kind, Phase: phase, Encoded: b})
	}
	return out, nil
}

// loaders picks the load phase's parallelism: enough to overlap commits,
// not so many that a 2-core machine thrashes.
func loaders(clients int) int {
	n := 2 * runtime.GOMAXPROCS(0)
	if n > 8 {
		n = 8
	}
	if clients > n {
		return n
	}
	if clients < 2 {
		return 2
	}
	return clients
}

// runFolders are one run's folders, one per tier the placement uses, each
// recorded in the ledger (when there is one) before it is created.
type runFolders struct {
	ledger  *tier.Ledger
	created []tier.Resource
}

// remove deletes the folders (after each run, unless --keep).
func (f *runFolders) remove() error {
	var errs []error
	for _, r := range f.created {
		if err := tier.Undo(r); err != nil {
			errs = append(errs, fmt.Errorf("remove run folder: %w", err))
			continue
		}
		errs = append(errs, f.forget(r))
	}
	return errors.Join(errs...)
}

// keep leaves the folders in place and forgets them, so `tierbench cleanup`
// does not delete what --keep asked to keep.
func (f *runFolders) keep() error {
	var errs []error
	for _, r := range f.created {
		errs = append(errs, f.forget(r))
	}
	return errors.Join(errs...)
}

func (f *runFolders) forget(r tier.Resource) error {
	if f.ledger == nil {
		return nil
	}
	return f.ledger.Done(r)
}

// mkdirOwned creates a folder tierbench owns, through the ledger when there
// is one (see tier.Ledger.Mkdir).
func mkdirOwned(ledger *tier.Ledger, dir string) (tier.Resource, error) {
	if ledger != nil {
		return ledger.Mkdir(dir, 0o755)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return tier.Resource{}, fmt.Errorf("create %s: %w", dir, err)
	}
	return tier.Resource{Kind: tier.KindDir, Path: dir}, nil
}

// makeRunFolders creates one fresh folder per tier the placement uses and a
// subfolder per component in it.
func makeRunFolders(runID string, p study.Placement, tiers map[string]tier.Info, ledger *tier.Ledger) (map[string]string, *runFolders, error) {
	folders := &runFolders{ledger: ledger}
	dirs := map[string]string{}
	roots := map[string]string{}
	comps := make([]string, 0, len(p.Components))
	for c := range p.Components {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	for _, c := range comps {
		tname := p.Components[c]
		root, ok := roots[tname]
		if !ok {
			root = filepath.Join(tiers[tname].Path, RunFolderPrefix+runID)
			r, err := mkdirOwned(ledger, root)
			if err != nil {
				// Not ours (it existed before): never recorded, never removed.
				return dirs, folders, fmt.Errorf("run folder on tier %s: %w", tname, err)
			}
			folders.created = append(folders.created, r)
			roots[tname] = root
		}
		dir := filepath.Join(root, c)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return dirs, folders, fmt.Errorf("create folder for %s on tier %s: %w", c, tname, err)
		}
		dirs[c] = dir
	}
	return dirs, folders, nil
}

func fmtDur(d time.Duration) string { return report.FormatMicros(float64(d) / 1e3) }
