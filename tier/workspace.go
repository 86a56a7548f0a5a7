package tier

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tierbench/tierbench/tier/profile"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// Spec is one tier as a study declares it: its kind (a folder of the
// user's at Path, or storage tierbench makes: a tmpfs, a loop device, a
// PMEM mount, a Ceph image, ...), what the study asks on top of it
// (Latency, Throttle, Profile, Emulate, AtomicWrite: as written, not yet
// applied), what the study's crash kinds do to it (Crashes), and the
// layering decided from them (Stack, see Layering), which is what acts.
// A Spec without a Kind is a folder (FolderSpec), as tools write one.
type Spec struct {
	Name string
	// Path is the folder of a folder tier (and of a pmem_emulated one
	// given as a folder); "" for storage tierbench makes.
	Path string
	Kind Kind
	// Latency and Throttle are latency: and throttle: as the study
	// writes them; Stack.Latency and Stack.Throttle are what is applied.
	Latency  *LatencySpec
	Throttle *ThrottleSpec
	// Profile is the device profile the tier emulates (profile:), nil if
	// none: Layering applies it (ApplyProfile).
	Profile *profile.Profile
	// Emulate is emulate: as the study writes it ("" for the default).
	Emulate LatencyPath
	// AtomicWrite is atomic_write: in bytes (0: the profile's, else the
	// kind's default).
	AtomicWrite int64
	// VolatileCache is write_cache: volatile: the device acknowledges
	// writes into a cache a power cut empties, so O_DIRECT writes are
	// durable only once flushed (Stack.VolatileCache).
	VolatileCache bool
	// Crashes is what the study's crash kinds do to the tier.
	Crashes Crashes
	// Stack is the tier's layering (Layering), set when the study is
	// read; the workspace decides it again with the host's facts of the
	// moment it makes the tier.
	Stack Stack
}

// TierKind is s's kind: a folder when none is set.
func (s Spec) TierKind() Kind {
	if s.Kind == nil {
		return FolderSpec{}
	}
	return s.Kind
}

// Abilities are s's kind's abilities.
func (s Spec) Abilities() Abilities { return s.TierKind().Abilities() }

// Provisioned reports whether tierbench creates or mounts anything for the
// tier: its kind's storage, or a layer or a cap over it.
func (s Spec) Provisioned() bool {
	return s.Abilities().Mounts || s.Stack.Latency != nil || s.Stack.Throttle != nil || s.Stack.CrashLayer
}

// Served reports whether a program outside package tier serves the
// tier's storage (Served), which the workspace makes once the other tiers
// are ready.
func (s Spec) Served() bool {
	_, ok := s.Kind.(Served)
	return ok
}

// Volume is a served tier's storage: a block device, or a file to attach
// to a loop device; and how durable it is, which Inspect cannot see
// through the program that serves it.
type Volume struct {
	Device string
	File   string
	// Durable and Note label the tier's Info.
	Durable bool
	Note    string
	// Caveats, when set, says after a run what happened in what serves
	// the tier that changes what the run measured (Ceph's RocksDB spilled
	// over to the main device); see Workspace.Caveats.
	Caveats func(ctx context.Context) []string
}

// Workspace is everything a study makes on its tiers and in the state
// folder, each step recorded in the ledger first so that `tierbench
// cleanup` can undo it after a kill: the provisioned tiers, a scratch
// folder for the whole study, and each run's fresh folders.
type Workspace struct {
	ledger *Ledger
	tag    string
	prov   *Provisioner
	// served holds one provisioner per served tier, undone before the
	// scratch folder and the other tiers they live on.
	served  []*Provisioner
	caveats map[string]func(context.Context) []string // by served tier
	tiers   map[string]Info
	// stacks are the tiers' layerings as made, names their order.
	stacks  map[string]Stack
	names   []string
	scratch string
	// dropScratch removes the scratch folder (and forgets its record).
	dropScratch func() error
	// syncRules delay the syncs of tiers whose latency is applied at the
	// sync calls (SyncDelays).
	syncRules syncdelay.Rules
	// warnings are what the study should be told of its tiers (Warnings).
	warnings []string
}

// NewWorkspace is WorkspaceConfig{Ledger: ledger, Tag: tag}.Open: a
// workspace without served tiers.
func NewWorkspace(ctx context.Context, ledger *Ledger, tag string, tiers ...Spec) (*Workspace, error) {
	return WorkspaceConfig{Ledger: ledger, Tag: tag}.Open(ctx, tiers...)
}

// WorkspaceConfig says where a workspace records what it makes (Ledger;
// nil records nothing and allows folder tiers only) and what names it
// (Tag: the study id).
type WorkspaceConfig struct {
	Ledger *Ledger
	Tag    string
}

// Open provisions the tiers tierbench creates and prepares and inspects
// every tier, then makes the study's scratch folder, then the served
// tiers, which live on the others and keep state in the scratch folder.
// Provisioned tiers need root and a ledger. On failure, what was made is
// undone.
func (c WorkspaceConfig) Open(ctx context.Context, tiers ...Spec) (*Workspace, error) {
	ws := &Workspace{ledger: c.Ledger, tag: c.Tag, prov: &Provisioner{Ledger: c.Ledger, Tag: c.Tag}, tiers: map[string]Info{}, stacks: map[string]Stack{}}
	for _, t := range tiers {
		ws.names = append(ws.names, t.Name)
	}
	for _, t := range tiers {
		if t.Served() {
			continue
		}
		info, err := ws.prepare(ctx, t)
		if err != nil {
			return nil, errors.Join(err, ws.Close())
		}
		ws.tiers[t.Name] = info
	}
	if err := ws.checkSiblings(); err != nil {
		return nil, errors.Join(err, ws.Close())
	}
	var err error
	if ws.scratch, ws.dropScratch, err = makeScratch(c.Ledger, c.Tag); err != nil {
		return nil, errors.Join(err, ws.Close())
	}
	for _, t := range tiers {
		if !t.Served() {
			continue
		}
		info, err := ws.serve(ctx, t)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("provision tiers: %w", err), ws.Close())
		}
		ws.tiers[t.Name] = info
	}
	return ws, nil
}

// serve makes served tier t's volume, formats and mounts it, and
// inspects it, labelled as the volume says.
func (w *Workspace) serve(ctx context.Context, t Spec) (Info, error) {
	if w.ledger == nil {
		return Info{}, fmt.Errorf("tier %s: provisioned tiers need tierbench's state folder (no ledger given)", t.Name)
	}
	kind := t.Kind.(Served)
	p := &Provisioner{Ledger: w.ledger, Tag: w.tag}
	w.served = append(w.served, p)
	vol, err := kind.Serve(ctx, w, p, t.Name)
	if err != nil {
		return Info{}, err
	}
	path, err := p.FormatAndMount(ctx, t.Name, vol.Device, vol.File, kind.Filesystem(), "")
	if err != nil {
		return Info{}, err
	}
	info, err := Prepare(t.Name, path)
	if err != nil {
		return Info{}, err
	}
	info.Durable, info.Note = vol.Durable, vol.Note
	st, err := Layering(t, t.Crashes, Host{})
	if err != nil {
		return Info{}, err
	}
	recordAtomicWrite(&info, st)
	w.stacks[t.Name] = st
	if vol.Caveats != nil {
		if w.caveats == nil {
			w.caveats = map[string]func(context.Context) []string{}
		}
		w.caveats[t.Name] = vol.Caveats
	}
	return info, nil
}

// Caveats are the served tiers' caveats after a run, for the tiers it
// used, each prefixed with its tier's name.
func (w *Workspace) Caveats(ctx context.Context, tiers []string) []string {
	var out []string
	for _, name := range tiers {
		if f := w.caveats[name]; f != nil {
			for _, c := range f(ctx) {
				out = append(out, "tier "+name+": "+c)
			}
		}
	}
	return out
}

// prepare provisions tier t if tierbench creates it, and inspects it.
// Its layering is decided again (Layering) with the host's facts of the
// moment: a folder found in RAM needs no power-loss layer.
func (w *Workspace) prepare(ctx context.Context, t Spec) (Info, error) {
	if t.Path != "" && !t.Abilities().Mounts {
		real, err := Resolve(t.Path)
		if err == nil {
			err = w.prov.tierFolder(real)
		}
		if err != nil {
			return Info{}, fmt.Errorf("prepare tiers: tier %s: %w", t.Name, err)
		}
	}
	var err error
	if t.Stack, err = Layering(t, t.Crashes, HostOf(t)); err != nil {
		return Info{}, fmt.Errorf("prepare tiers: %w", err)
	}
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
	st := t.Stack
	w.stacks[t.Name] = st
	if st.Latency != nil {
		info.Emulated = true
		how := "latency (FUSE): "
		if st.Latency.SyncCalls() {
			how = "latency (seccomp; reads and writes at the folder's own speed): "
		}
		label := how
		if t.Profile != nil {
			label = "profile " + t.Profile.Name + ", " + how
			info.Profile = t.Profile.Name
		}
		info.Emulation = joinNonEmpty(info.Emulation, label+st.Latency.String())
		if c, ok := w.prov.LatencyCalibration(t.Name); ok {
			info.Emulation += " (" + c.String() + ")"
		}
		if i := slices.IndexFunc(w.syncRules, func(r syncdelay.Rule) bool { return r.Dir == path }); i >= 0 && w.syncRules[i].Calibration != nil {
			info.Emulation += fmt.Sprintf(" (in tierbench's process, the sleep's %dµs overshoot, measured once for the study, is taken off each delay)",
				w.syncRules[i].Calibration.Overshoot.Microseconds())
		}
	}
	if st.Throttle != nil {
		info.Emulated = true
		info.Emulation = joinNonEmpty(info.Emulation, "throttled (cgroup): "+st.Throttle.String())
	}
	if st.CrashLayer {
		info.Emulated = true
		note := st.Note
		if st.DurableByLayer {
			// Durable as the layer models it: RAM behind it, so no
			// more than that.
			info.Durable, info.Note, info.LayerDurable = true, "", true
		}
		if c, ok := w.prov.LatencyCalibration(t.Name); ok && st.Latency == nil && c.Overhead > 0 {
			note += fmt.Sprintf("; its own round trip, measured at mount: %dµs", c.Overhead.Microseconds())
		}
		info.Emulation = joinNonEmpty(info.Emulation, note)
	}
	recordAtomicWrite(&info, st)
	return info, nil
}

// checkSiblings measures the tiers of one spec side by side
// (Provisioner.CheckSiblings), recalibrating them there if apart, and
// notes in the record of each that measured apart what was done; of
// those still apart, in the study's warnings too, that they do not
// delay alike.
func (w *Workspace) checkSiblings() error {
	unlike, err := w.prov.CheckSiblings()
	if err != nil {
		return fmt.Errorf("prepare tiers: %w", err)
	}
	for _, u := range unlike {
		info := w.tiers[u.Tier]
		if !u.Warn {
			info.Emulation = joinNonEmpty(info.Emulation, u.Note)
			w.tiers[u.Tier] = info
			continue
		}
		info.Emulation = joinNonEmpty(info.Emulation, "warning: "+u.Note)
		w.tiers[u.Tier] = info
		if w := &w.warnings; !slices.Contains(*w, u.Note) {
			*w = append(*w, u.Note)
		}
	}
	return nil
}

// Warnings are what the study should be told of its tiers before it runs:
// tiers of one spec that do not delay alike.
func (w *Workspace) Warnings() []string { return w.warnings }

// provision makes tier t's kind (a tmpfs, a loop device, a PMEM mount),
// caps it and layers latency over it as asked, and returns its folder.
func (w *Workspace) provision(ctx context.Context, t Spec) (path string, err error) {
	if w.ledger == nil {
		return "", fmt.Errorf("tier %s: provisioned tiers need tierbench's state folder (no ledger given)", t.Name)
	}
	path = t.Path
	if m, ok := t.TierKind().(Maker); ok {
		path, err = m.Make(ctx, w.prov, t.Name)
	}
	st := t.Stack
	if err == nil && st.Throttle != nil {
		var dev string
		if dev, err = LoopDevice(path); err == nil {
			err = w.prov.Throttle(t.Name, dev, *st.Throttle)
		}
	}
	if err == nil && st.Latency != nil && st.Latency.SyncCalls() {
		if err = syncdelay.Supported(); err != nil {
			return "", fmt.Errorf("tier %s: %w", t.Name, err)
		}
		// Calibrated once for the study, and alike for every tier of one
		// spec: not again at each engine's start.
		w.syncRules = append(w.syncRules, SyncRule(path, *st.Latency)).Calibrated()
		return path, nil
	}
	if err == nil && (st.Latency != nil || st.CrashLayer) {
		var lat LatencySpec
		if st.Latency != nil {
			lat = *st.Latency
		}
		if st.CrashLayer {
			path, err = w.prov.CrashLayer(t.Name, path, lat, st.AtomicWrite, st.VolatileCache, st.Crashes.Reorder)
		} else {
			path, err = w.prov.Latency(t.Name, path, lat, false)
		}
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

// Made is each tier the workspace made, in the study's order: its name,
// its record and its stack as the workspace built it (Layering, with the
// host's facts of that moment).
func (w *Workspace) Made() []Made {
	var out []Made
	for _, n := range w.names {
		if info, ok := w.tiers[n]; ok {
			out = append(out, Made{Name: n, Info: info, Stack: w.stacks[n]})
		}
	}
	return out
}

// Stack is tier name's stack as the workspace built it.
func (w *Workspace) Stack(name string) Stack { return w.stacks[name] }

// Made is one tier a workspace made (Workspace.Made).
type Made struct {
	Name  string
	Info  Info
	Stack Stack
}

// SyncDelays are the rules of the tiers whose latency is applied at the
// sync calls: every engine process (engine.Config.SyncDelays) and probe
// must run under them.
func (w *Workspace) SyncDelays() syncdelay.Rules { return w.syncRules }

// Scratch is a folder that lives as long as the study, for what engines
// make once per study (templates) and tools' logs.
func (w *Workspace) Scratch() string { return w.scratch }

// TrackProcess records a server process an engine started, so `tierbench
// cleanup` kills one that outlives a killed tierbench; untrack forgets it
// once it is gone. Without a ledger it records nothing.
func (w *Workspace) TrackProcess(pid int) (untrack func()) {
	return w.TrackProcessAs("engine server")(pid)
}

// TrackProcessAs is TrackProcess for processes that label says what they
// are ("ceph-osd of tier ceph1"), as the ledger and cleanup name them.
func (w *Workspace) TrackProcessAs(label string) func(pid int) (untrack func()) {
	return func(pid int) func() {
		if w.ledger == nil {
			return func() {}
		}
		r, err := w.ledger.Intend(ProcessResource(pid, label))
		if err != nil {
			return func() {}
		}
		return func() { w.ledger.Done(r) }
	}
}

// Close undoes the served tiers, removes the scratch folder and undoes
// the provisioned tiers, newest first.
func (w *Workspace) Close() error {
	var errs []error
	for i := len(w.served) - 1; i >= 0; i-- {
		errs = append(errs, w.served[i].Close())
	}
	w.served = nil
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
