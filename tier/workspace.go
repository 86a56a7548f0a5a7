package tier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Spec is one tier as a study declares it: a folder (Path), or what to
// provision for it (at most one of Tmpfs, Loop, Pmem), optionally made to
// emulate slower storage (Latency, Throttle).
type Spec struct {
	Name     string
	Path     string
	Tmpfs    *TmpfsSpec
	Loop     *LoopSpec
	Pmem     *PmemSpec
	Latency  *LatencySpec
	Throttle *ThrottleSpec
}

// Provisioned reports whether tierbench creates or mounts anything for the
// tier.
func (s Spec) Provisioned() bool {
	return s.Tmpfs != nil || s.Loop != nil || s.Pmem != nil || s.Latency != nil || s.Throttle != nil
}

// Workspace is everything a study makes on its tiers and in the state
// folder, each step recorded in the ledger first so that `tierbench
// cleanup` can undo it after a kill: the provisioned tiers, a scratch
// folder for the whole study, and each run's fresh folders.
type Workspace struct {
	ledger  *Ledger
	prov    *Provisioner
	tiers   map[string]Info
	scratch string
	// dropScratch removes the scratch folder (and forgets its record).
	dropScratch func() error
}

// NewWorkspace provisions the tiers tierbench creates, then prepares and
// inspects every tier, then makes the study's scratch folder; tag (the
// study id) names what it provisions. Provisioned tiers need root and a
// ledger; with a nil ledger only folder tiers are allowed, and nothing is
// recorded. On failure, what was made is undone.
func NewWorkspace(ctx context.Context, ledger *Ledger, tag string, tiers ...Spec) (*Workspace, error) {
	ws := &Workspace{ledger: ledger, prov: &Provisioner{Ledger: ledger, Tag: tag}, tiers: map[string]Info{}}
	for _, t := range tiers {
		info, err := ws.prepare(ctx, t)
		if err != nil {
			return nil, errors.Join(err, ws.Close())
		}
		ws.tiers[t.Name] = info
	}
	var err error
	if ws.scratch, ws.dropScratch, err = makeScratch(ledger, tag); err != nil {
		return nil, errors.Join(err, ws.Close())
	}
	return ws, nil
}

// prepare provisions tier t if tierbench creates it, and inspects it.
func (w *Workspace) prepare(ctx context.Context, t Spec) (Info, error) {
	path := t.Path
	if t.Provisioned() {
		var err error
		if path, err = w.provision(ctx, t); err != nil {
			return Info{}, fmt.Errorf("provision tiers: %w", err)
		}
	}
	info, err := Prepare(t.Name, path)
	if err != nil {
		return Info{}, fmt.Errorf("prepare tiers: %w", err)
	}
	if t.Latency != nil {
		info.Emulated = true
		info.Emulation = joinNonEmpty(info.Emulation, "latency (FUSE): "+t.Latency.String())
		if c, ok := w.prov.LatencyCalibration(t.Name); ok {
			info.Emulation += " (" + c.String() + ")"
		}
	}
	if t.Throttle != nil {
		info.Emulated = true
		info.Emulation = joinNonEmpty(info.Emulation, "throttled (cgroup): "+t.Throttle.String())
	}
	return info, nil
}

// provision creates tier t (a tmpfs, a loop device or a PMEM mount), caps
// it and layers latency over it as asked, and returns its folder.
func (w *Workspace) provision(ctx context.Context, t Spec) (path string, err error) {
	if w.ledger == nil {
		return "", fmt.Errorf("tier %s: provisioned tiers need tierbench's state folder (no ledger given)", t.Name)
	}
	switch {
	case t.Tmpfs != nil:
		path, err = w.prov.Tmpfs(t.Name, *t.Tmpfs)
	case t.Loop != nil:
		path, err = w.prov.Loop(ctx, t.Name, *t.Loop)
	case t.Pmem != nil:
		path, err = w.prov.Pmem(ctx, t.Name, *t.Pmem)
	}
	if err == nil && t.Throttle != nil {
		var dev string
		if dev, err = LoopDevice(path); err == nil {
			err = w.prov.Throttle(t.Name, dev, *t.Throttle)
		}
	}
	if err == nil && t.Latency != nil {
		path, err = w.prov.Latency(t.Name, path, *t.Latency)
	}
	return path, err
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Tiers returns what was found of each tier, by name. The map is the
// workspace's own: a caller may add to a tier's record (a probe's
// emulation check); the paths are what run folders are made under.
func (w *Workspace) Tiers() map[string]Info { return w.tiers }

// Scratch is a folder that lives as long as the study, for what engines
// make once per study (templates) and tools' logs.
func (w *Workspace) Scratch() string { return w.scratch }

// TrackProcess records a server process an engine started, so `tierbench
// cleanup` kills one that outlives a killed tierbench; untrack forgets it
// once it is gone. Without a ledger it records nothing.
func (w *Workspace) TrackProcess(pid int) (untrack func()) {
	if w.ledger == nil {
		return func() {}
	}
	r, err := w.ledger.Intend(ProcessResource(pid, "engine server"))
	if err != nil {
		return func() {}
	}
	return func() { w.ledger.Done(r) }
}

// Close removes the scratch folder and undoes the provisioned tiers,
// newest first.
func (w *Workspace) Close() error {
	var errs []error
	if w.dropScratch != nil {
		errs = append(errs, w.dropScratch())
		w.dropScratch = nil
	}
	errs = append(errs, w.prov.Close())
	return errors.Join(errs...)
}

// makeScratch creates the study's scratch folder, in the state folder
// (recorded in the ledger) or, without a ledger, a temporary folder.
func makeScratch(ledger *Ledger, tag string) (string, func() error, error) {
	if ledger == nil {
		dir, err := os.MkdirTemp("", "tierbench-scratch-")
		if err != nil {
			return "", nil, fmt.Errorf("create scratch folder: %w", err)
		}
		return dir, func() error { return os.RemoveAll(dir) }, nil
	}
	dir := filepath.Join(ledger.Dir(), "scratch", tag)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", nil, fmt.Errorf("create scratch folder: %w", err)
	}
	r, err := ledger.Mkdir(dir, 0o755)
	if err != nil {
		return "", nil, fmt.Errorf("scratch folder: %w", err)
	}
	return dir, func() error {
		if err := Undo(r); err != nil {
			return fmt.Errorf("remove scratch folder: %w", err)
		}
		return ledger.Done(r)
	}, nil
}
