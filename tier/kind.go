package tier

import "context"

// Kind is one kind of storage a tier is: a folder of the user's, a tmpfs,
// a loop device, a PMEM device's mount, RAM made persistent-memory-like,
// a cluster's storage class (this package), a Ceph image
// (engine/ceph/rbdtier). Each kind is one type whose methods are all that
// tierbench does with it: how much it takes, what validate checks, how it
// is made, and what it can do (Abilities, data that the study, the
// workspace, the runner and the report read: nothing outside a kind's own
// file asks which kind a tier is).
//
// A kind is either a folder (Abilities.Mounts false: tierbench makes
// nothing), Made here before the study's scratch folder, or Served by a
// program of its own once the other tiers are ready. What it makes is
// recorded in the ledger step by step (Provisioner.Step), and undone by
// the ledger's resource kinds (mount, loop device, file, FUSE server, ...
// see RegisterKind), never by the tier kind itself, so a killed
// tierbench's leftovers are undone by `tierbench cleanup` without knowing
// which kind made them. docs/adding-a-tier.md walks a kind end to end.
type Kind interface {
	// Key is how a study names the kind: path, tmpfs, loop, pmem, ...
	Key() string
	// Bytes is the capacity it gives the tier, 0 when that is the
	// machine's (a device's, a folder's).
	Bytes() int64
	// Preflight checks, changing nothing, that this machine can make it:
	// its programs and devices. Root, which every kind that mounts needs,
	// is checked by the caller.
	Preflight() error
	// Abilities is what the kind can do, as data.
	Abilities() Abilities
}

// Abilities is what a kind of tier can do and is: one value per kind
// (per spec: a loop image in RAM is in RAM), read by whoever decides on
// a tier instead of its kind's name. docs/adding-a-tier.md's table lists
// every field, checked by study's TestDocsTableOfAbilities.
type Abilities struct {
	// Mounts: tierbench mounts the kind's storage, as root; false for a
	// folder of the user's (or a cluster's class), which it only uses.
	Mounts bool
	// Latency: latency: may emulate a slower device over the tier.
	Latency bool
	// Profile: profile: may emulate a device profile over the tier.
	Profile bool
	// FixedSpeed, for a kind without Latency or Profile, says whose speed
	// the tier has ("its cluster's"), for the message that refuses them.
	FixedSpeed string
	// Throttle: throttle: (and a profile's caps) may cap its device, one
	// tierbench owns.
	Throttle bool
	// InRAM: the tier's data lives in RAM.
	InRAM bool
	// Layer is when the power-loss layer stands over the tier.
	Layer Layer
	// Why, for Layer == LayerUnmodelled, says why the layer cannot stand
	// over the kind (for the message that refuses crash: power on a study
	// that places something on it).
	Why string
	// Served: a program outside package tier (an engine's cluster) serves
	// the storage once the other tiers are ready (Served).
	Served bool
	// OnCluster: the tier is a Kubernetes cluster's storage class,
	// nothing on this machine; it reads its own modifiers (volume_mode).
	OnCluster bool
	// AtomicWrite is the kind's default atomic-write unit in bytes: the
	// largest write a power cut cannot tear. A kind that cannot know its
	// device's takes the conservative 512 B, and says so.
	AtomicWrite int64
	// ByteAtomic: the kind may declare a unit below a sector (8 B: a
	// persistent-memory word without a block layer).
	ByteAtomic bool
	// Note labels the tier in its record and reports ("" for none):
	// what it stands for and what its durability rests on.
	Note string
	// WithoutRoot is how to give the kind's tier when tierbench cannot
	// mount (not root): a study's text for the tier ("" for none).
	WithoutRoot string
}

// Layer is when the power-loss layer (the FUSE crash layer, crash.go)
// stands over a tier.
type Layer int

const (
	// LayerNever: the tier is RAM and keeps nothing through a power cut;
	// a crash run empties its folders at the cut, and needs no layer.
	LayerNever Layer = iota + 1
	// LayerOnPowerCut: what was synced survives, the rest is lost; a
	// study that cuts power (crash: power) puts the tier under the
	// layer, which loses it. A folder found in RAM keeps nothing
	// (Host.FolderInRAM) and needs no layer.
	LayerOnPowerCut
	// LayerAlways: the tier is always served through the layer, which is
	// what makes it durable (pmem_emulated).
	LayerAlways
	// LayerUnmodelled: the layer cannot stand over the tier (Why).
	LayerUnmodelled
)

// OnDevice is a kind that mounts a device the user names (a PMEM
// device), which no two tiers may share.
type OnDevice interface{ UserDevice() string }

// Allocated is a kind whose storage is allocated in full when the study
// starts, in RAM (/dev/shm) or in the state folder's filesystem, so that
// validate can check it fits there.
type Allocated interface {
	Allocates() (inRAM bool, bytes int64)
}

// Atomic-write units kinds default to.
const (
	// SectorAtomic is the conservative unit of a device tierbench cannot
	// ask: one 512 B sector.
	SectorAtomic int64 = 512
	// WordAtomic is persistent memory's without a block layer: 8 B.
	WordAtomic int64 = 8
)

// The kinds this package makes or uses.
var (
	_ Kind      = FolderSpec{}
	_ Maker     = TmpfsSpec{}
	_ Maker     = LoopSpec{}
	_ Maker     = PmemSpec{}
	_ Maker     = PmemEmulatedSpec{}
	_ Kind      = StorageClassSpec{}
	_ Allocated = LoopSpec{}
	_ OnDevice  = PmemSpec{}
)

// FolderSpec is a folder of the user's (Spec.Path): tierbench makes
// nothing, and may layer latency or the power-loss layer over it.
type FolderSpec struct{}

func (FolderSpec) Key() string      { return "path" }
func (FolderSpec) Bytes() int64     { return 0 }
func (FolderSpec) Preflight() error { return nil }

// Abilities: a folder on an unknown device keeps what was synced, and
// its atomic-write unit is the conservative sector.
func (FolderSpec) Abilities() Abilities {
	return Abilities{Latency: true, Profile: true, Layer: LayerOnPowerCut, AtomicWrite: SectorAtomic}
}

func (TmpfsSpec) Key() string      { return "tmpfs" }
func (s TmpfsSpec) Bytes() int64   { return s.Size }
func (TmpfsSpec) Preflight() error { return nil }
func (TmpfsSpec) Abilities() Abilities {
	return Abilities{Mounts: true, Latency: true, Profile: true, InRAM: true, Layer: LayerNever, AtomicWrite: SectorAtomic,
		WithoutRoot: "{path: <folder>}"}
}
func (s TmpfsSpec) Make(_ context.Context, p *Provisioner, name string) (string, error) {
	return p.Tmpfs(name, s)
}

func (LoopSpec) Key() string        { return "loop" }
func (s LoopSpec) Bytes() int64     { return s.Size }
func (s LoopSpec) Preflight() error { return CheckLoopTools(s.FS) }

// Abilities: an image in RAM keeps nothing through a power cut; one on
// disk keeps what its filesystem synced. Its device is tierbench's, so it
// can be capped.
func (s LoopSpec) Abilities() Abilities {
	a := Abilities{Mounts: true, Latency: true, Profile: true, Throttle: true, Layer: LayerOnPowerCut, AtomicWrite: SectorAtomic,
		WithoutRoot: "{path: <folder>}"}
	if s.Backing == "ram" {
		a.InRAM, a.Layer = true, LayerNever
	}
	return a
}
func (s LoopSpec) Allocates() (bool, int64) { return s.Backing == "ram", s.Size }
func (s LoopSpec) Make(ctx context.Context, p *Provisioner, name string) (string, error) {
	return p.Loop(ctx, name, s)
}

func (PmemSpec) Key() string          { return "pmem" }
func (PmemSpec) Bytes() int64         { return 0 }
func (s PmemSpec) Preflight() error   { return checkPmemDevice(s.Device) }
func (s PmemSpec) UserDevice() string { return s.Device }

// Abilities: the power-loss layer is a FUSE layer, which would stand
// between the engine and the DAX mapping that is the tier's point.
func (PmemSpec) Abilities() Abilities {
	return Abilities{Mounts: true, Latency: true, Profile: true, Layer: LayerUnmodelled,
		Why:         "the power-loss layer is a FUSE layer, which would hide the DAX mapping of persistent memory, the reason for the tier",
		AtomicWrite: WordAtomic, ByteAtomic: true, WithoutRoot: "{path: <folder>}"}
}
func (s PmemSpec) Make(ctx context.Context, p *Provisioner, name string) (string, error) {
	return p.Pmem(ctx, name, s)
}

// PmemEmulatedSpec is a persistent-memory-like tier (pmem_emulated): RAM
// (the folder Path on tmpfs, or a tmpfs of Size that tierbench mounts)
// always served through the power-loss layer, so that what an fsync
// covered survives a power cut as on PMEM in fsdax. Its record is durable
// only as far as that layer models it, and says so (PmemEmulatedNote).
type PmemEmulatedSpec struct {
	Path string
	Size int64
}

func (PmemEmulatedSpec) Key() string      { return "pmem_emulated" }
func (s PmemEmulatedSpec) Bytes() int64   { return s.Size }
func (PmemEmulatedSpec) Preflight() error { return nil }

// Abilities: always under the layer, whose FUSE mount rules out the sync
// calls' path; a word is its atomic unit, as persistent memory's.
func (s PmemEmulatedSpec) Abilities() Abilities {
	return Abilities{Mounts: s.Size > 0, Latency: true, Profile: true, InRAM: true, Layer: LayerAlways,
		AtomicWrite: WordAtomic, ByteAtomic: true, Note: PmemEmulatedNote,
		WithoutRoot: "{pmem_emulated: {path: /dev/shm/<folder>}}"}
}

// Make mounts the tmpfs of Size, or readies the folder Path.
func (s PmemEmulatedSpec) Make(_ context.Context, p *Provisioner, name string) (string, error) {
	if s.Size > 0 {
		return p.Tmpfs(name, TmpfsSpec{Size: s.Size})
	}
	return s.Path, nil
}

// StorageClassSpec is a tier on a Kubernetes cluster (platform:
// kubernetes): volumes the cluster provisions from the class, nothing on
// this machine.
type StorageClassSpec struct {
	Class string
	// VolumeMode is Filesystem (the default) or Block.
	VolumeMode string
}

func (StorageClassSpec) Key() string      { return "storage_class" }
func (StorageClassSpec) Bytes() int64     { return 0 }
func (StorageClassSpec) Preflight() error { return nil }
func (StorageClassSpec) Abilities() Abilities {
	return Abilities{FixedSpeed: "the cluster's", Layer: LayerUnmodelled, OnCluster: true, AtomicWrite: SectorAtomic,
		Why: "a cluster's volume is made durable on its node, not by this machine's file system"}
}

// ClassOf is the storage class of a tier on a cluster, ok false for any
// other kind.
func ClassOf(s Spec) (StorageClassSpec, bool) {
	c, ok := s.Kind.(StorageClassSpec)
	return c, ok
}

// Maker is a kind made here: Make provisions it for tier name, every step
// recorded with p, and returns its folder.
type Maker interface {
	Kind
	Make(ctx context.Context, p *Provisioner, name string) (string, error)
}

// Served is a kind whose storage a program serves once the study's other
// tiers and its scratch folder (w) are ready (an rbd tier's Ceph cluster
// lives on them). Serve makes it, every step recorded with p, whose Close
// undoes them after the tier's mount; the workspace then formats the
// volume with Filesystem and mounts it, as it does a loop tier's image.
type Served interface {
	Kind
	Serve(ctx context.Context, w *Workspace, p *Provisioner, name string) (Volume, error)
	Filesystem() string
}
