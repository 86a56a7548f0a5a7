package runner

// This file holds a crash run's own steps: the crash moment, the crash
// itself (the driver's cut), the restart on what survived and the check
// of acknowledged writes. What a crash finds (lost writes, an engine that
// does not come back, a broken invariant) is the run's result, stored on
// its record; only tierbench failing to crash or restart fails the run.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/workload"
)

// crashes reports whether the run crashes its engine.
func (r *run) crashes() bool {
	return r.cell.Variant.Crash != "" && r.cell.Variant.Crash != study.CrashNone
}

// crashAt is the run's crash moment, into its measured window: drawn from
// the study's order seed and the run's number, between a fifth and four
// fifths of the window, so that both the engine's steady state and the
// checkpoints or flushes it does on its own schedule are crashed into.
func (r *run) crashAt() time.Duration {
	rng := rand.New(rand.NewPCG(r.st.Order.Seed, uint64(r.cell.Seq)<<8|0xC5))
	return time.Duration((0.2 + 0.6*rng.Float64()) * float64(r.st.Duration))
}

// armCrash prepares the drive of a crash run: the workload starts its
// record of acknowledged writes, a power crash's tiers count what is on
// them as durable, and the driver's cut crashes the engine.
func (r *run) armCrash() (cut func(), at time.Duration, err error) {
	if !r.crashes() {
		return nil, 0, nil
	}
	if ac, ok := r.w.(workload.AckChecker); ok {
		ac.TrackAcks()
	}
	kind, model, err := r.powerModel()
	if err != nil {
		return nil, 0, fmt.Errorf("crash: %w", err)
	}
	tiers := r.cell.Placement.TierNames()
	r.rec.Crash.Promised = r.eng.Spec().Survives(r.cfg.Durability, kind.Name) && (!kind.Machine || r.allDurable(tiers))
	if kind.Machine {
		if err := r.ws.Settle(tiers); err != nil {
			return nil, 0, fmt.Errorf("crash: %w", err)
		}
	}
	at = r.crashAt()
	cut = func() {
		r.crashedAt = time.Now()
		r.rec.Crash.AtS = at.Seconds()
		r.opt.Progress.Live(fmt.Sprintf("%s crashing the engine (%s) %.1fs into the window...", r.label, kind.Name, r.rec.Crash.AtS))
		var errs []error
		if kind.Machine {
			lost, sum, err := r.ws.PowerCutModel(tiers, model)
			r.rec.Crash.Lost = tier.LostText(lost)
			r.rec.Crash.AtomicWriteB, r.rec.Crash.Unlogged = sum.AtomicWrite, sum.Unlogged
			errs = append(errs, err)
		}
		errs = append(errs, r.crashEngine())
		if kind.Machine {
			errs = append(errs, r.wipeVolatile(), r.ws.PowerOn(tiers))
		}
		r.crashErr = errors.Join(errs...)
	}
	return cut, at, nil
}

// powerModel reads the run's crash value: its kind and, for a power cut
// under a model, the model with its seed, which it records on the run.
// The seed is drawn from the study's order seed and the run's number, as
// the crash moment is, so a resumed run cuts the same way.
func (r *run) powerModel() (engine.CrashKind, emulate.Model, error) {
	kind, name, keep, err := engine.SplitCrash(r.cell.Variant.Crash)
	if err != nil || name == "" {
		return kind, emulate.Model{}, err
	}
	rng := rand.New(rand.NewPCG(r.st.Order.Seed, uint64(r.cell.Seq)<<8|0xC6))
	// 53 bits, so the seed reads back exactly from JSON anywhere.
	m := emulate.Model{Kind: name, Keep: keep, Seed: rng.Uint64() >> 11}
	r.rec.Crash.Model, r.rec.Crash.Keep, r.rec.Crash.Seed = m.Kind, m.Keep, m.Seed
	return kind, m, m.Check()
}

// allDurable reports whether every named tier keeps what an fsync made
// durable: a mode's promise to survive a power loss rests on that, so a
// loss on tmpfs is the tier's, not a contradiction of the mode.
func (r *run) allDurable(tiers []string) bool {
	infos := r.ws.Tiers()
	for _, t := range tiers {
		if info, ok := infos[t]; ok && !info.Durable {
			return false
		}
	}
	return true
}

// crashEngine kills the engine's processes: every one, or the nodes a
// partial crash names.
func (r *run) crashEngine() error {
	if n := r.cell.Variant.CrashNodes; n > 0 {
		if c, ok := r.db.(engine.NodeCrasher); ok {
			return c.CrashNodes(n)
		}
		return fmt.Errorf("engine %s cannot crash some of its nodes (engine.NodeCrasher)", r.st.Engine)
	}
	if c, ok := r.db.(engine.Crasher); ok {
		return c.Crash()
	}
	return fmt.Errorf("engine %s cannot be crashed (engine.Crasher)", r.st.Engine)
}

// restart brings the engine back after its crash: the killed nodes of a
// partial crash rejoin the running ones; otherwise what the crash left of
// the old instance (connections, the server's record) is released, having
// nothing to shut down, and the engine is opened again. It returns the
// engine's error, nil ctx's.
func (r *run) restart(ctx context.Context) (engine.DB, error) {
	if r.cell.Variant.CrashNodes > 0 {
		nc, ok := r.db.(engine.NodeCrasher)
		if !ok {
			return nil, fmt.Errorf("engine %s cannot restart some of its nodes (engine.NodeCrasher)", r.st.Engine)
		}
		return r.db, nc.RestartNodes(ctx)
	}
	if r.db != nil {
		_ = r.db.Close()
		r.db = nil
	}
	return r.eng.Open(ctx, r.cfg)
}

// wipeVolatile empties the run's folders on tiers that keep nothing
// through a power loss (tmpfs, RAM-backed loop devices).
func (r *run) wipeVolatile() error {
	infos := r.ws.Tiers()
	var errs []error
	for comp, t := range r.cell.Placement.Components {
		if info, ok := infos[t]; ok && !info.Durable {
			errs = append(errs, tier.Wipe(r.cfg.Dirs[comp]))
		}
	}
	return errors.Join(errs...)
}

// recoverFromCrash restarts the engine on what the crash left and checks
// what survived: the workload's acknowledged writes, then (verify) its
// invariant. The recovery time runs from the restart's start to the first
// operation the restarted engine answered.
func (r *run) recoverFromCrash(ctx context.Context) error {
	if !r.crashes() {
		return nil
	}
	if r.crashErr != nil {
		return fmt.Errorf("crash: %w", r.crashErr)
	}
	if r.crashedAt.IsZero() {
		return errors.New("crash: the run ended before its crash moment")
	}
	c := r.rec.Crash
	r.opt.Progress.Live(r.label + " restarting the engine on what survived the crash...")
	start := time.Now()
	r.restartedAt = start
	db, err := r.restart(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		c.Consistent = false
		c.Detail = fmt.Sprintf("the engine did not come back after the crash: %v", err)
		// An engine that cannot start on what the crash left counts as
		// corrupt.
		c.Corrupt, c.CorruptDetail = true, c.Detail
		return nil
	}
	r.db = db
	defer func() {
		if rr, ok := db.(engine.RecoveryReporter); ok {
			c.Replayed = rr.Recovery()
		}
		// After the read-back, so that the recovery time is the
		// restart's alone.
		if ctx.Err() == nil {
			checkCorruption(ctx, db, c)
		}
	}()
	ac, ok := r.w.(workload.AckChecker)
	if !ok {
		first, err := firstAnswer(ctx, db)
		if err != nil {
			c.Detail = fmt.Sprintf("the restarted engine opened but did not answer: %v", err)
			return nil
		}
		c.RecoveryS, c.Consistent = first.Sub(start).Seconds(), true
		c.Detail = "the workload keeps no record of acknowledged writes; only the recovery was measured"
		return nil
	}
	check, err := ac.CheckAcks(ctx, db)
	if !check.First.IsZero() {
		c.RecoveryS = check.First.Sub(start).Seconds()
	}
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		c.Detail = fmt.Sprintf("the check of acknowledged writes failed on the restarted engine: %v", err)
		return nil
	}
	c.Checked, c.Consistent, c.LostAcked, c.Acked = true, true, check.Lost, check.Checked
	if check.Lost > 0 {
		c.LostWindowMS = float64(r.crashedAt.Sub(check.OldestLost)) / float64(time.Millisecond)
	}
	c.Detail = fmt.Sprintf("%d of %d %s with an acknowledged write lost it", check.Lost, check.Checked, check.Unit)
	return nil
}

// checkCorruption runs the engine's own check of its state on db, a
// restarted engine, and records what it found; a check that could not
// run is said in the record's detail, not counted as corruption.
func checkCorruption(ctx context.Context, db engine.DB, c *results.Crash) {
	cc, ok := db.(engine.CorruptionChecker)
	if !ok {
		return
	}
	damage, err := cc.CheckCorruption(ctx)
	if err != nil {
		c.Detail += fmt.Sprintf("; the engine's corruption check could not run: %v", err)
		return
	}
	c.CorruptChecked = true
	if damage != "" {
		c.Corrupt, c.CorruptDetail = true, damage
	}
}

// firstAnswer opens a session on db: for a workload that keeps no record,
// the first thing the restarted engine answers.
func firstAnswer(ctx context.Context, db engine.DB) (time.Time, error) {
	err := engine.WithSession(ctx, db, func(engine.Session) error { return nil })
	return time.Now(), err
}

// crashText is what a crash run found, for its progress line; "" for a
// run without a crash.
func crashText(c *results.Crash) string {
	if c == nil {
		return ""
	}
	s := fmt.Sprintf("; %s crash at %.1fs", c.Kind, c.AtS)
	if c.RecoveryS > 0 {
		s += fmt.Sprintf(", back in %.2fs", c.RecoveryS)
	}
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	if !c.Consistent {
		s += " (INCONSISTENT)"
	}
	if c.Corrupt {
		s += " (CORRUPT: " + c.CorruptDetail + ")"
	}
	return s
}
