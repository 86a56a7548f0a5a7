package tier

import (
	"errors"
	"fmt"

	"github.com/tierbench/tierbench/tier/profile"
)

// Stack is a tier's whole layering, decided once (Layering) from its
// kind's abilities, what the study asks of it (latency, throttle,
// profile, emulate, atomic_write), the study's crash kinds and the
// host's facts: what acts on the tier, from its storage up. The study
// validates it, the workspace builds it, and the runner and report read
// it (through the tier's record), instead of deciding again.
type Stack struct {
	// Backing is the kind's key: what the tier's storage is.
	Backing string
	// Latency is the delay applied over the storage, its Path resolved
	// (through the FUSE layer or at the sync calls); nil for none.
	Latency *LatencySpec
	// Throttle caps the tier's device (a loop tier's); nil for none.
	Throttle *ThrottleSpec
	// CrashLayer: the tier is served through the power-loss layer (the
	// FUSE crash layer), which loses what was not synced at a cut.
	CrashLayer bool
	// DurableByLayer: the tier is RAM whose durability is the layer's
	// model alone (pmem_emulated): durable in its record, and said so.
	DurableByLayer bool
	// Note labels the layering (CrashLayerNote, PmemEmulatedNote).
	Note string
	// Profile is the device profile the tier emulates (nil if none), and
	// NotApplied names what of it the tier does not apply, one phrase
	// each.
	Profile    *profile.Profile
	NotApplied []string
	// AtomicWrite is the tier's atomic-write unit in bytes: the largest
	// write a power cut leaves whole, which the power-loss layer's
	// torn-write models take; AtomicWriteFrom says where it comes from.
	AtomicWrite     int64
	AtomicWriteFrom string
	// VolatileCache: the device has a volatile write cache (write_cache:
	// volatile), so the power-loss layer loses O_DIRECT writes not yet
	// flushed, as it loses buffered ones; without it an O_DIRECT write
	// is durable when it returns, as on a device with power-loss
	// protection or no cache.
	VolatileCache bool
	// Crashes and Host are what it was decided from.
	Crashes Crashes
	Host    Host
}

// Crashes is what the study's crash kinds do to a tier that a placement
// uses.
type Crashes struct {
	// PowerCut: the study cuts the machine's power (crash: power).
	PowerCut bool
	// Reorder: some of those cuts reorder the writes between flushes
	// (crash: {power: reorder}), so the power-loss layer logs each
	// unsynced write (emulate.Options.LogWrites); no other model needs
	// the log, so no other study pays for it.
	Reorder bool
}

// Host is what the machine says of a tier's folder.
type Host struct {
	// FolderInRAM: the tier's folder is on a filesystem in RAM (tmpfs).
	FolderInRAM bool
	// Folder says which filesystem holds the folder, for messages.
	Folder string
}

// HostOf reads the host's facts of s's folder, changing nothing: where
// a folder that does not exist yet would be made.
func HostOf(s Spec) Host {
	if s.Path == "" {
		return Host{}
	}
	real, err := Resolve(s.Path)
	if err != nil {
		return Host{}
	}
	m, err := mountOf(real)
	if err != nil {
		return Host{}
	}
	return Host{FolderInRAM: volatileFS[m.FSType], Folder: fmt.Sprintf("%s (%s, mounted at %s)", m.FSType, m.Source, m.Point)}
}

// ErrCrash marks a layering the study's crash kinds rule out (crash:
// power over a tier it cannot cover): a problem of crash:, not of the
// tier's own lines.
var ErrCrash = errors.New("crash")

// Layering decides tier s's stack under crashes c on host h: whether the
// power-loss layer stands over it (its kind's Layer; a folder in RAM
// keeps nothing and needs none), how its latency is applied (as asked,
// else a profile's default, never at the sync calls under a FUSE layer),
// its caps, and its atomic-write unit (declared, its profile's, or its
// kind's). It fails when the layering cannot be: a crash kind the kind's
// storage cannot be cut under (wrapping ErrCrash), a folder that must be
// RAM and is not, a unit below a sector on a kind that writes sectors.
func Layering(s Spec, c Crashes, h Host) (Stack, error) {
	k := s.TierKind()
	a := k.Abilities()
	st := Stack{Backing: k.Key(), Crashes: c, Host: h}
	switch {
	case a.Layer == LayerAlways:
		if !a.Mounts && !h.FolderInRAM {
			return st, fmt.Errorf("tier %s: %s folder %s is on %s, not RAM: give a folder on tmpfs such as /dev/shm/tierbench-pmem, or size: 1GiB for a tmpfs tierbench mounts", s.Name, k.Key(), s.Path, h.Folder)
		}
		st.CrashLayer, st.DurableByLayer, st.Note = true, true, a.Note
	case !c.PowerCut, a.Layer == LayerNever, h.FolderInRAM:
		// Nothing cut, or nothing kept through a cut: the run empties
		// the tier's folders there.
	case a.Layer == LayerUnmodelled:
		return st, fmt.Errorf("%w: power cannot cover tier %s: %s; use crash: process, or place nothing on %s", ErrCrash, s.Name, a.Why, s.Name)
	default:
		st.CrashLayer, st.Note = true, CrashLayerNote
	}
	switch {
	case s.Profile != nil:
		applied := ApplyProfile(*s.Profile, a.Throttle, st.CrashLayer, s.Emulate)
		st.Latency, st.Throttle, st.Profile, st.NotApplied = &applied.Latency, applied.Throttle, s.Profile, applied.NotApplied
	case s.Latency != nil:
		lat := *s.Latency
		if s.Emulate != "" {
			lat.Path = s.Emulate
		}
		if lat.Path == "" {
			lat.Path = ThroughFUSE
		}
		st.Latency, st.Throttle = &lat, s.Throttle
	default:
		st.Throttle = s.Throttle
	}
	if st.CrashLayer && st.Latency != nil && st.Latency.SyncCalls() {
		return st, fmt.Errorf("%w: power puts tier %s under the power-loss layer, a FUSE layer, and the tier asks for emulate: syscall; write emulate: fuse on %s, or use crash: process", ErrCrash, s.Name, s.Name)
	}
	var err error
	st.VolatileCache = s.VolatileCache
	st.AtomicWrite, st.AtomicWriteFrom, err = atomicWrite(s, a)
	return st, err
}

// atomicWrite is tier s's atomic-write unit and where it comes from: the
// tier's own atomic_write, its profile's, or its kind's default.
func atomicWrite(s Spec, a Abilities) (int64, string, error) {
	unit, from := a.AtomicWrite, "its kind's: "+profile.AtomicWriteText(a.AtomicWrite)+", a persistent-memory word"
	if a.AtomicWrite == SectorAtomic {
		from = "assumed: 512B, the conservative unit of a device whose own is not known (declare atomic_write: to say it)"
	}
	switch {
	case s.AtomicWrite > 0:
		unit, from = s.AtomicWrite, "declared by the study (atomic_write:)"
	case s.Profile != nil && s.Profile.AtomicWrite > 0:
		unit, from = int64(s.Profile.AtomicWrite), "profile "+s.Profile.Name
	}
	if unit < SectorAtomic && !a.ByteAtomic {
		return 0, "", fmt.Errorf("tier %s: atomic_write %s (%s) is below a 512B sector, which only persistent memory writes whole; use 512B or more", s.Name, profile.AtomicWriteText(unit), from)
	}
	return unit, from, nil
}
