// Package runner carries out a validated study and stores what it
// measured. The study loop (this file) prepares the study (prepare.go: its
// record, a tier.Workspace, the tiers' probes), runs the matrix round by
// round (rounds.go: a fixed count, or until every comparison's paired CI
// is narrow enough, in each round's order drawn from the stored seed) and
// stores each run. One run (run.go) is a sequence of named
// phases on fresh run folders: open, load, cold restart, drive, recover
// from a crash (crash.go: a crash run crashes its engine inside the
// measured window, restarts it and checks the acknowledged writes),
// events (events.go: what the engine did on its own, on the run's
// timeline), verify, close; a workload loaded once per study (snapshot.go) is loaded by the
// first run and copied into later runs' folders instead. A capacity
// study's rounds are searches (capacity.go) whose steps are runs; where
// the engine allows it (engine.StepKeeper) a search keeps one engine open
// across its steps (keep.go), each later step only driving it. Each cell carries
// its swept option values and cache state (study.Variant), which the run
// records. A run that fails is stored as failed and the study goes on; a
// cancelled context (Ctrl-C) stops the study, which is stored as
// interrupted. On a Kubernetes cluster (platform: kubernetes) a run's
// phases are cluster.go's instead: create the run's objects, wait for the
// engine's pod, read the load generator's pod log, remove the objects;
// the record is the same. A live view (Options.Live: `run --metrics`) is
// told of each run, tick and telemetry sample as they happen. The runner
// records and does not analyse: bottlenecks and
// statistics are computed from the stored results when they are shown; an
// adaptive study's stop rule reads them (stats.Blocks, stats.Widest) and
// stores only which blocks it stopped, after which round
// (results.Study.Decided), as a race stores what it dropped; its crash
// runs, whose throughput no verdict judges, run through its min rounds
// only (rounds.go's skips). A capacity search's climb from a cold start
// probes (capacity.Probing): such a step ends once the operations of its
// window so far (after its transient's cut, drive.go's probeWindow) pass,
// and no capacity rests on it.
package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
)

// Run carries out st and stores everything under a new study id (or, with
// opt.Resume, under the interrupted study's). It runs the matrix round by
// round (rounds.go): a fixed number, or, with an adaptive repeat, until
// the answer is clear.
func Run(ctx context.Context, st *study.Study, opt Options) (*Summary, error) {
	st = withOrder(st, opt.Resume)
	s, err := prepare(ctx, st, opt.withDefaults())
	if err != nil {
		return nil, err
	}
	defer s.end()
	sum := &Summary{Study: s.rec, OK: len(s.done)}
	plan := newRoundPlan(st)
	s.opt.Progress.Line(fmt.Sprintf("study %s (%s): %s", s.rec.ID, st.Name, plan.describe()))
	if len(s.done) > 0 {
		s.opt.Progress.Line(fmt.Sprintf("resuming: %d of %d runs are already ok and are not run again", len(s.done), max(plan.total(), len(s.done))))
	}
	prog := &progressCount{sum: sum, plan: plan, finished: len(s.done)}
	s.opt.Progress.Runs(prog.finished, plan.total())
	for round := 1; round <= st.Repeat && ctx.Err() == nil; round++ {
		began := time.Now()
		ran, cells := false, 0
		if st.SLO != nil {
			if ran, err = s.searchRound(ctx, round, prog); err != nil {
				return sum, err
			}
		}
		for _, cell := range st.Round(round) {
			if ctx.Err() != nil || st.SLO != nil {
				break
			}
			if s.done[cell.Seq] || s.skips(cell, round) {
				continue
			}
			ran, cells = true, cells+1
			rec, err := s.runStep(ctx, cell, prog, nil, false)
			if err != nil {
				return sum, err
			}
			if rec == nil {
				break // interrupted: the unfinished run is not stored
			}
		}
		if ctx.Err() != nil {
			break
		}
		plan.ended(round, ran, time.Since(began), cells)
		if err := s.judgeRound(ctx, plan); err != nil {
			return sum, err
		}
		if plan.stop != "" {
			break
		}
		if err := s.dropDominated(ctx, round); err != nil {
			return sum, err
		}
	}
	now := time.Now().UTC()
	s.rec.FinishedAt = &now
	s.rec.Status = results.StudyDone
	s.rec.Rounds, s.rec.StopReason = plan.rounds, plan.reason()
	if ctx.Err() != nil {
		s.rec.Status = results.StudyInterrupted
		s.rec.StopReason = results.StopInterrupted
		sum.Interrupted = true
	}
	if err := s.opt.Store.PutStudy(context.WithoutCancel(ctx), s.rec); err != nil {
		return sum, err
	}
	return sum, nil
}

// progressCount counts the study's finished runs for the progress bar and
// the summary.
type progressCount struct {
	sum      *Summary
	plan     *roundPlan
	finished int
}

// runStep performs cell's run and stores it, returning its record; nil
// (and no error) when the study was interrupted during it, which is not
// stored. A capacity study's step takes the next free seq, and drives the
// search's open engine when keep holds one (keep.go).
func (s *studyRun) runStep(ctx context.Context, cell study.Cell, prog *progressCount, keep *kept, probe bool) (*results.Run, error) {
	if s.st.SLO != nil {
		s.lastSeq++
		cell.Seq = s.lastSeq
	}
	r := s.newRun(cell, prog.plan.total())
	r.keep, r.probe = keep, probe
	if s.cluster != nil {
		r.performOnCluster(ctx)
	} else {
		r.perform(ctx)
	}
	if r.rec.Status == results.RunInterrupted {
		return nil, nil
	}
	if err := s.store(ctx, r); err != nil {
		return nil, err
	}
	if r.rec.Status == results.RunOK {
		prog.sum.OK++
	} else {
		prog.sum.Failed++
	}
	prog.finished++
	s.opt.Progress.Runs(prog.finished, max(prog.plan.total(), prog.finished))
	return r.rec, nil
}

// store adds a finished run to the study, even after Ctrl-C; on resume it
// replaces a failed attempt of the same cell, in the same transaction.
func (s *studyRun) store(ctx context.Context, r *run) error {
	ctx = context.WithoutCancel(ctx)
	if s.rec.EngineVersion == "" {
		s.rec.EngineVersion = r.rec.EngineVersion
	}
	if r.rec.Status == results.RunOK && s.opt.Explain != nil {
		s.opt.Progress.Line(fmt.Sprintf("[%d/%d] bottleneck: %s", r.cell.Seq, r.total, s.opt.Explain(r.rec, s.rec)))
	}
	if s.opt.Resume != nil {
		return s.opt.Store.ReplaceRun(ctx, r.rec, r.hists)
	}
	return s.opt.Store.AddRun(ctx, r.rec, r.hists)
}
