package tier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/throttle"
)

// TmpfsSpec asks for a tmpfs mounted for the study.
type TmpfsSpec struct {
	Size int64 // bytes
}

// LoopSpec asks for a file-backed loop device with a real filesystem.
type LoopSpec struct {
	// Backing is "ram" (the image lives in /dev/shm: closest to persistent
	// memory in sector mode) or "disk" (the image lives in the state folder).
	Backing      string
	Size         int64 // bytes
	FS           string
	MountOptions string
}

// Filesystems a loop tier can be formatted with, and the tool that makes each.
var mkfsTools = map[string][]string{
	"ext4": {"mkfs.ext4", "-q", "-F"},
	"xfs":  {"mkfs.xfs", "-q", "-f"},
}

// FilesystemNames lists the filesystems a loop tier supports.
func FilesystemNames() []string { return []string{"ext4", "xfs"} }

// mkfsPackage names the Debian package of each mkfs tool, for error messages.
var mkfsPackage = map[string]string{"ext4": "e2fsprogs", "xfs": "xfsprogs"}

// Provisioner creates tmpfs and loop tiers, recording every step in the
// ledger first so that a killed tierbench can be cleaned up.
type Provisioner struct {
	Ledger *Ledger
	// Tag names this study's resources (the study id).
	Tag string
	// created is undone in reverse by Close.
	created []Resource
	// closers undo resources this process still serves or sits in (a FUSE
	// server, the throttle group), by their ledger path; Close uses them
	// instead of Undo, which is for leftovers of a dead process.
	closers map[string]func() error
	// group throttles every throttled tier of the study: a process can be
	// in one group of a hierarchy only.
	group *throttle.Group
	// calibrations holds what each latency tier's layer measured at mount.
	calibrations map[string]emulate.Calibration
	// bySpec holds the first calibration of each spec (specKey), which
	// later mounts of the spec take (emulate.Options.Calibrated), and
	// siblings the tiers mounted with each spec, in order, for
	// CheckSiblings.
	bySpec   map[string]emulate.Calibration
	siblings map[string][]layered
	// crashLayers are the crash-capable layers, by tier (crash.go).
	crashLayers map[string]*emulate.Server
}

// onClose registers how to undo the resource of kind at path while this
// process still serves it (the key includes the kind: a mount point folder
// and its mount share a path).
func (p *Provisioner) onClose(kind, path string, fn func() error) {
	if p.closers == nil {
		p.closers = map[string]func() error{}
	}
	p.closers[kind+":"+path] = fn
}

// Close undoes everything the provisioner created, newest first.
func (p *Provisioner) Close() error {
	var errs []error
	for i := len(p.created) - 1; i >= 0; i-- {
		r := p.created[i]
		undo := func() error { return Undo(r) }
		if fn, ok := p.closers[r.Kind+":"+r.Path]; ok {
			undo = fn
		}
		if err := undo(); err != nil {
			errs = append(errs, err)
			continue
		}
		if r.Kind == kindDeferred {
			continue // never in the ledger
		}
		if err := p.Ledger.Done(r); err != nil {
			errs = append(errs, err)
		}
	}
	p.created, p.closers, p.group = nil, nil, nil
	return errors.Join(errs...)
}

// Step records r in the ledger, then does it; Close undoes it (with Undo,
// or what OnClose registered for it), as it does a step that failed.
// Packages that make storage tier cannot make itself (see Volumes) record
// their steps with it.
func (p *Provisioner) Step(r Resource, do func() error) (Resource, error) { return p.step(r, do) }

// OnClose has Close undo the resource of kind at path with fn instead of
// Undo: for what this process still serves or holds (a server it can stop
// in order).
func (p *Provisioner) OnClose(kind, path string, fn func() error) { p.onClose(kind, path, fn) }

// kindDeferred marks a step of Close that has no ledger record (Defer).
const kindDeferred = "deferred"

// Defer has Close call fn at this point of its reverse order, for what
// the ledger records otherwise (a cluster whose processes are tracked one
// by one) and must be stopped between the steps around it.
func (p *Provisioner) Defer(what string, fn func() error) {
	r := Resource{Kind: kindDeferred, Path: fmt.Sprintf("%s #%d", what, len(p.created))}
	p.created = append(p.created, r)
	p.onClose(r.Kind, r.Path, fn)
}

// MountPoint creates an empty folder, recorded, in the state folder for
// tier name to mount something on; purpose tells the mounts of one tier
// apart ("" for the tier's own).
func (p *Provisioner) MountPoint(name, purpose string) (string, error) {
	return p.mountPoint(name, purpose)
}

// Mkdir creates a folder, recorded, that Close removes with its contents.
func (p *Provisioner) Mkdir(dir string) error { return p.mkdir(dir) }

// step records r in the ledger, then does it; a failed step is undone at once.
func (p *Provisioner) step(r Resource, do func() error) (Resource, error) {
	r, err := p.Ledger.Intend(r)
	if err != nil {
		return r, err
	}
	p.created = append(p.created, r)
	if err := do(); err != nil {
		return r, err
	}
	return r, nil
}

// mountPoint creates an empty folder to mount on, refusing one that exists:
// tierbench never mounts over anything it did not create. purpose (a
// word) tells a tier's other mounts from its own.
func (p *Provisioner) mountPoint(name, purpose string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err // a name such as ../../x must never leave the state folder
	}
	base := p.Tag + "-" + name
	if purpose != "" {
		if err := CheckName(purpose); err != nil {
			return "", err
		}
		base += "-" + purpose
	}
	dir := filepath.Join(p.Ledger.Dir(), "mnt", base)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	if ents, err := os.ReadDir(dir); err == nil {
		if len(ents) > 0 {
			return "", fmt.Errorf("refusing to mount on %s: the folder is not empty", dir)
		}
		return "", fmt.Errorf("refusing to mount on %s: the folder already exists (a leftover? run `tierbench cleanup`)", dir)
	}
	return dir, p.mkdir(dir)
}

// tierFolder creates a folder tier's folder when it is missing, recorded
// as KindTierDir: the study's end (or cleanup after a kill) removes it
// while it is empty. A folder that exists, or appears meanwhile, is the
// user's and is never recorded. Without a ledger, Prepare creates it
// unrecorded.
func (p *Provisioner) tierFolder(dir string) error {
	if p.Ledger == nil {
		return nil
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	r, err := p.Ledger.Intend(Resource{Kind: KindTierDir, Path: dir})
	if err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		derr := p.Ledger.Done(r)
		if errors.Is(err, fs.ErrExist) {
			return derr
		}
		return errors.Join(fmt.Errorf("create %s: %w", dir, err), derr)
	}
	p.created = append(p.created, r)
	return nil
}

// mkdir creates a folder the provisioner owns (see Ledger.Mkdir: a folder
// that already existed is never recorded, so never removed).
func (p *Provisioner) mkdir(dir string) error {
	r, err := p.Ledger.Mkdir(dir, 0o755)
	if err != nil {
		return err
	}
	p.created = append(p.created, r)
	return nil
}

// Tmpfs mounts a tmpfs of the given size and returns its mount point.
func (p *Provisioner) Tmpfs(name string, spec TmpfsSpec) (string, error) {
	dir, err := p.mountPoint(name, "")
	if err != nil {
		return "", fmt.Errorf("tier %s: %w", name, err)
	}
	opts := "size=" + strconv.FormatInt(spec.Size, 10) + ",mode=0755"
	_, err = p.step(Resource{Kind: KindMount, Path: dir}, func() error {
		return unix.Mount("tierbench-"+name, dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts)
	})
	if err != nil {
		return "", fmt.Errorf("tier %s: mount tmpfs on %s: %w", name, dir, err)
	}
	return dir, nil
}

// Loop creates an image file, attaches it to a loop device, makes a
// filesystem on it and mounts it; it returns the mount point.
func (p *Provisioner) Loop(ctx context.Context, name string, spec LoopSpec) (string, error) {
	if err := CheckLoopTools(spec.FS); err != nil {
		return "", fmt.Errorf("tier %s: %w", name, err)
	}
	imgDir := filepath.Join(p.Ledger.Dir(), "img")
	if spec.Backing == "ram" {
		imgDir = "/dev/shm"
	}
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		return "", fmt.Errorf("tier %s: create %s: %w", name, imgDir, err)
	}
	img := filepath.Join(imgDir, "tierbench-"+p.Tag+"-"+name+".img")
	_, err := p.step(Resource{Kind: KindFile, Path: img}, func() error {
		f, err := os.OpenFile(img, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		// Allocate the whole image now so the tier cannot run out of backing
		// space in the middle of a run.
		return unix.Fallocate(int(f.Fd()), 0, 0, spec.Size)
	})
	if err != nil {
		return "", fmt.Errorf("tier %s: create image %s (%d bytes): %w", name, img, spec.Size, err)
	}
	return p.formatAndMount(ctx, name, "", img, false, spec.FS, spec.MountOptions)
}

// FormatAndMount makes filesystem fs on a block device dev, or, when dev
// is "", on a loop device attached to file (direct I/O: the program that
// serves the file caches what it is asked to, nothing more), and mounts
// it (with mountOptions) on the tier's mount point, which it returns:
// what a loop tier does with its image, for storage another package
// serves (Volumes).
func (p *Provisioner) FormatAndMount(ctx context.Context, name, dev, file, fs, mountOptions string) (string, error) {
	if err := CheckLoopTools(fs); err != nil {
		return "", fmt.Errorf("tier %s: %w", name, err)
	}
	return p.formatAndMount(ctx, name, dev, file, true, fs, mountOptions)
}

func (p *Provisioner) formatAndMount(ctx context.Context, name, dev, file string, directIO bool, fs, mountOptions string) (string, error) {
	if dev == "" {
		var err error
		if dev, err = p.attachLoop(ctx, name, file, directIO); err != nil {
			return "", err
		}
	}
	mkfs := mkfsTools[fs]
	if out, err := exec.CommandContext(ctx, mkfs[0], append(mkfs[1:], dev)...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("tier %s: %s %s: %v: %s", name, mkfs[0], dev, err, strings.TrimSpace(string(out)))
	}
	dir, err := p.mountPoint(name, "")
	if err != nil {
		return "", fmt.Errorf("tier %s: %w", name, err)
	}
	_, err = p.step(Resource{Kind: KindMount, Path: dir}, func() error {
		args := []string{"-t", fs}
		if mountOptions != "" {
			args = append(args, "-o", mountOptions)
		}
		out, err := exec.CommandContext(ctx, "mount", append(args, dev, dir)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("tier %s: mount %s on %s: %w", name, dev, dir, err)
	}
	return dir, nil
}

// attachLoop attaches file to a free loop device, recorded (by its file
// until the device is known), and returns the device. With directIO the
// device reads and writes the file O_DIRECT, so the file's data is not
// cached a second time beneath the tier's own page cache.
func (p *Provisioner) attachLoop(ctx context.Context, name, file string, directIO bool) (string, error) {
	var args []string
	if directIO {
		args = append(args, "--direct-io=on")
	}
	loopRec, err := p.step(Resource{Kind: KindLoop, Backing: file}, func() error { return nil })
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "losetup", append(args, "--find", "--show", file)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("tier %s: attach loop device: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	dev := strings.TrimSpace(string(out))
	attached := loopRec
	attached.Path = dev
	if err := p.Ledger.Update(loopRec, attached); err != nil {
		return "", err
	}
	p.created[len(p.created)-1] = attached
	return dev, nil
}

// Throttle caps the loop device dev of tier name through the block I/O
// cgroup controller and moves this process (so the in-process engine and
// the fio probe, which inherits it) into the study's group.
func (p *Provisioner) Throttle(name, dev string, spec ThrottleSpec) error {
	lim := throttle.Limits{ReadIOPS: spec.ReadIOPS, WriteIOPS: spec.WriteIOPS, ReadBPS: spec.ReadBPS, WriteBPS: spec.WriteBPS}
	if p.group != nil {
		if err := p.group.Limit(dev, lim); err != nil {
			return fmt.Errorf("tier %s: %w", name, err)
		}
		return nil
	}
	if err := throttle.Supported(); err != nil {
		return fmt.Errorf("tier %s: throttle: %w", name, err)
	}
	groupName := "tierbench-" + p.Tag
	path, err := throttle.PathFor(groupName)
	if err != nil {
		return fmt.Errorf("tier %s: %w", name, err)
	}
	_, err = p.step(Resource{Kind: KindCgroup, Path: path}, func() error {
		g, err := throttle.Create(groupName, dev, lim)
		if err != nil {
			return err
		}
		p.group = g
		p.onClose(KindCgroup, path, g.Close)
		return g.AddSelf()
	})
	if err != nil {
		return fmt.Errorf("tier %s: %w", name, err)
	}
	return nil
}

// LoopDevice returns the loop device of the loop tier mounted at dir.
func LoopDevice(dir string) (string, error) {
	m, err := mountOf(dir)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(m.Source, "/dev/loop") {
		return "", fmt.Errorf("%s is not on a loop device", dir)
	}
	return m.Source, nil
}

// Latency serves the tier's folder base through a FUSE passthrough whose
// fsyncs (and reads and writes, if asked) take the asked latency, and
// returns the new mount point: every engine and tool (fio included) then
// sees the emulated latency.
//
// The FUSE server runs in a helper process (see emulate.Start), recorded in
// the ledger as a KindFuseServer right after the mount it serves, so that
// Close stops it first (it unmounts) and `tierbench cleanup` kills a helper
// a killed tierbench left before it undoes the mount.
//
// A crashable layer (crash: power) also keeps what it needs to lose every
// write not made durable when told to (emulate.Options.Crashable); its
// latencies may all be zero.
func (p *Provisioner) Latency(name, base string, spec LatencySpec, crashable bool) (string, error) {
	return p.layer(name, base, spec, crashable, 0, false, false)
}

// CrashLayer is Latency for a tier under the power-loss layer, whose
// device persists writes whole up to atomicWrite bytes (the tier's
// Stack.AtomicWrite), which the layer's torn cuts keep or lose whole,
// and, with volatileCache (Stack.VolatileCache), loses O_DIRECT writes
// not yet flushed; with logWrites (Crashes.Reorder) the layer logs each
// unsynced write, for reorder cuts.
func (p *Provisioner) CrashLayer(name, base string, spec LatencySpec, atomicWrite int64, volatileCache, logWrites bool) (string, error) {
	return p.layer(name, base, spec, true, atomicWrite, volatileCache, logWrites)
}

// layer serves base through a FUSE layer for tier name (Latency,
// CrashLayer); atomicWrite 0 is the layer's default unit.
func (p *Provisioner) layer(name, base string, spec LatencySpec, crashable bool, atomicWrite int64, volatileCache, logWrites bool) (string, error) {
	if err := emulate.Supported(); err != nil {
		return "", fmt.Errorf("tier %s: latency: %w", name, err)
	}
	backing := filepath.Join(base, "tierbench-backing-"+p.Tag)
	if err := p.mkdir(backing); err != nil {
		return "", fmt.Errorf("tier %s: create %s: %w", name, backing, err)
	}
	dir, err := p.mountPoint(name, "latency")
	if err != nil {
		return "", fmt.Errorf("tier %s: %w", name, err)
	}
	lat := spec
	lat.Path = "" // through this layer: the layer's spec is its delays
	if crashable {
		// Recorded before the mount, so undone after it: a killed
		// helper leaves its hidden folder for cleanup.
		if _, err := p.step(Resource{Kind: KindDir, Path: emulate.HiddenFolder(backing)}, func() error { return nil }); err != nil {
			return "", fmt.Errorf("tier %s: %w", name, err)
		}
	}
	started := func(pid int) error {
		_, err := p.step(Resource{Kind: KindFuseServer, Path: dir, PID: pid, StartTicks: startTicks(pid)}, func() error { return nil })
		return err
	}
	key := specKey(lat, crashable)
	opt := emulate.Options{Started: started, Crashable: crashable, AtomicWrite: atomicWrite, VolatileCache: volatileCache, LogWrites: logWrites}
	if c, ok := p.bySpec[key]; ok {
		opt.Calibrated = &c
	}
	_, err = p.step(Resource{Kind: KindMount, Path: dir}, func() error {
		srv, err := emulate.Start(backing, dir, lat, opt)
		if err != nil {
			return err
		}
		if crashable {
			if p.crashLayers == nil {
				p.crashLayers = map[string]*emulate.Server{}
			}
			p.crashLayers[name] = srv
		}
		p.onClose(KindFuseServer, dir, srv.Close)
		if p.calibrations == nil {
			p.calibrations = map[string]emulate.Calibration{}
		}
		p.calibrations[name] = srv.Calibration()
		if p.bySpec == nil {
			p.bySpec, p.siblings = map[string]emulate.Calibration{}, map[string][]layered{}
		}
		if _, ok := p.bySpec[key]; !ok {
			p.bySpec[key] = srv.Calibration()
		}
		p.siblings[key] = append(p.siblings[key], layered{name: name, dir: dir, lat: lat, crashable: crashable, srv: srv})
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("tier %s: serve latency layer on %s: %w", name, dir, err)
	}
	return dir, nil
}

// LatencyCalibration is what the latency layer of tier name measured of
// itself when it mounted (false if the tier has none): the figure that
// goes with the tier's record on every emulated tier, probed or not.
func (p *Provisioner) LatencyCalibration(name string) (emulate.Calibration, bool) {
	c, ok := p.calibrations[name]
	return c, ok
}

// layered is a tier served through a latency layer, as CheckSiblings
// measures it.
type layered struct {
	name, dir string
	lat       emulate.Latency
	crashable bool
	srv       *emulate.Server
}

// specKey names what a latency layer is asked to do: two layers with the
// same key are two tiers of one spec, which must delay alike.
func specKey(lat emulate.Latency, crashable bool) string {
	b, _ := json.Marshal(struct {
		Lat       emulate.Latency
		Crashable bool
	}{lat, crashable})
	return string(b)
}

// SiblingTolerance is how far apart, as a share of the lower, two tiers
// of one spec may measure their fsync p50 side by side (emulate.
// FsyncAlongside) before their layers are recalibrated side by side, and
// the study warned if they stay apart (CheckSiblings). They share one
// calibration, so what parts them beyond the measurement's own noise is
// the layers themselves (each its own helper process, scheduled apart),
// which a comparison of the two would report as a difference between
// placements. Measured side by side (1,000 fdatasyncs each at 100 µs),
// two layers of one calibration were within 2% of each other on a busy
// 2-core machine, now and then 10-25% apart for one measurement, rarely
// for two in a row.
const SiblingTolerance = 0.1

// SiblingNote is what CheckSiblings found of a tier whose layer measured
// apart from its siblings' of the same spec: recalibrated alike, or, with
// Warn, still apart.
type SiblingNote struct {
	Tier, Note string
	Warn       bool
}

// siblingRounds is how many times CheckSiblings recalibrates a group
// apart before it warns.
const siblingRounds = 2

// CheckSiblings measures, side by side, the fsync p50 of every group of
// tiers this provisioner served through layers of one spec. A group
// whose fastest and slowest are apart by more than SiblingTolerance
// twice in a row (a second look, so that one burst of load on the
// machine is not taken for the layers) is recalibrated side by side: each
// layer's overhead is corrected by what its own figure missed the asked
// fsync by, measured under the same load as its siblings', and measured
// again. It returns a note for each tier of a group recalibrated, and a
// warning, with the figures, for each of a group still apart after
// siblingRounds. A spec with no fsync latency, or one too long to
// measure quickly, is not checked, nor a crashable one (the check's
// file would be a change its power cut has to undo).
func (p *Provisioner) CheckSiblings() ([]SiblingNote, error) {
	var out []SiblingNote
	keys := make([]string, 0, len(p.siblings))
	for k := range p.siblings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		group := p.siblings[k]
		if len(group) < 2 || !group[0].lat.Checkable() || group[0].crashable {
			continue
		}
		dirs := make([]string, len(group))
		for i, g := range group {
			dirs[i] = g.dir
		}
		measure := func() ([]time.Duration, error) {
			p50s, err := emulate.FsyncAlongside(dirs, group[0].lat)
			if err != nil {
				return nil, fmt.Errorf("check tiers of one spec: %w", err)
			}
			return p50s, nil
		}
		p50s, err := measure()
		if err == nil && spread(p50s) > SiblingTolerance {
			p50s, err = measure()
		}
		if err != nil {
			return nil, err
		}
		if spread(p50s) <= SiblingTolerance {
			continue
		}
		before := figures(group, p50s)
		for range siblingRounds {
			target := group[0].lat.Fsync
			for i, g := range group {
				over := min(max(g.srv.Calibration().Overhead+p50s[i]-target, 0), target)
				if err := g.srv.SetOverhead(over); err != nil {
					return nil, fmt.Errorf("recalibrate tier %s: %w", g.name, err)
				}
				p.calibrations[g.name] = g.srv.Calibration()
			}
			if p50s, err = measure(); err != nil {
				return nil, err
			}
			if spread(p50s) <= SiblingTolerance {
				break
			}
		}
		alike := spread(p50s) <= SiblingTolerance
		for _, g := range group {
			n := SiblingNote{Tier: g.name, Warn: !alike}
			if alike {
				n.Note = fmt.Sprintf("recalibrated side by side with the other tiers of its spec, whose fsync p50s were over %.0f%% apart (%s; then %s): the layer's own %dµs now taken off each delay",
					100*SiblingTolerance, before, figures(group, p50s), g.srv.Calibration().Overhead.Microseconds())
			} else {
				n.Note = fmt.Sprintf("tiers of one spec measured apart side by side: fsync p50 %s, then %s after recalibrating them side by side (over %.0f%% apart); comparisons between them may show the layers rather than the placements",
					before, figures(group, p50s), 100*SiblingTolerance)
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// figures names each tier of group with its fsync p50.
func figures(group []layered, p50s []time.Duration) string {
	parts := make([]string, len(group))
	for i, g := range group {
		parts[i] = fmt.Sprintf("%s %dµs", g.name, p50s[i].Microseconds())
	}
	return strings.Join(parts, ", ")
}

// spread is how far the largest of ds is above the smallest, as a share
// of the smallest.
func spread(ds []time.Duration) float64 {
	lo, hi := slices.Min(ds), slices.Max(ds)
	if lo <= 0 {
		return math.Inf(1)
	}
	return float64(hi-lo) / float64(lo)
}
