package tier

import "context"

// Kind is one kind of storage tierbench makes for a tier: a tmpfs, a loop
// device, a PMEM device's mount (this package), a Ceph image
// (engine/ceph/rbdtier). Each kind is one type whose methods are all that
// tierbench does with it: how much it takes, what validate checks, how it
// is made, and what a power cut leaves of it. A folder tier has no kind
// (Spec.Kind is nil): it is the user's, and tierbench makes nothing.
//
// A kind is either Made here, before the study's scratch folder, or
// Served by a program of its own once the other tiers are ready. What it
// makes is recorded in the ledger step by step (Provisioner.Step), and
// undone by the ledger's resource kinds (mount, loop device, file, FUSE
// server, ... see RegisterKind), never by the tier kind itself, so a
// killed tierbench's leftovers are undone by `tierbench cleanup` without
// knowing which kind made them. docs/adding-a-tier.md walks a kind end to
// end.
type Kind interface {
	// Key is how a study names the kind: tmpfs, loop, pmem, rbd.
	Key() string
	// Bytes is the capacity it gives the tier, 0 when that is the
	// machine's (a device's).
	Bytes() int64
	// Preflight checks, changing nothing, that this machine can make it:
	// its programs and devices. Root, which every kind needs to mount, is
	// checked by the caller.
	Preflight() error
	// PowerLoss says what a power cut (crash: power) leaves of it.
	PowerLoss() PowerLoss
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

// PowerLoss is what a power cut leaves of a kind's data.
type PowerLoss struct {
	// Keeps is what survives the cut.
	Keeps Keeps
	// Why, for Keeps == Unmodelled, says why tierbench's power-loss layer
	// cannot stand over the kind (for the message that refuses crash:
	// power on a study that places something on it).
	Why string
}

// Keeps is what survives a power cut.
type Keeps int

const (
	// KeepsNothing: the tier is RAM; a crash run empties its folders at
	// the cut, and needs no layer.
	KeepsNothing Keeps = iota + 1
	// KeepsSynced: what was synced survives, the rest is lost; a crash
	// run puts the tier under the power-loss layer, which loses it.
	KeepsSynced
	// Unmodelled: the layer cannot stand over the tier (PowerLoss.Why).
	Unmodelled
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

// The kinds this package makes.
var (
	_ Maker     = TmpfsSpec{}
	_ Maker     = LoopSpec{}
	_ Maker     = PmemSpec{}
	_ Allocated = LoopSpec{}
	_ OnDevice  = PmemSpec{}
)

func (TmpfsSpec) Key() string          { return "tmpfs" }
func (s TmpfsSpec) Bytes() int64       { return s.Size }
func (TmpfsSpec) Preflight() error     { return nil }
func (TmpfsSpec) PowerLoss() PowerLoss { return PowerLoss{Keeps: KeepsNothing} }
func (s TmpfsSpec) Make(_ context.Context, p *Provisioner, name string) (string, error) {
	return p.Tmpfs(name, s)
}

func (LoopSpec) Key() string        { return "loop" }
func (s LoopSpec) Bytes() int64     { return s.Size }
func (s LoopSpec) Preflight() error { return CheckLoopTools(s.FS) }

// PowerLoss: an image in RAM keeps nothing; one on disk keeps what its
// filesystem synced.
func (s LoopSpec) PowerLoss() PowerLoss {
	if s.Backing == "ram" {
		return PowerLoss{Keeps: KeepsNothing}
	}
	return PowerLoss{Keeps: KeepsSynced}
}
func (s LoopSpec) Allocates() (bool, int64) { return s.Backing == "ram", s.Size }
func (s LoopSpec) Make(ctx context.Context, p *Provisioner, name string) (string, error) {
	return p.Loop(ctx, name, s)
}

func (PmemSpec) Key() string          { return "pmem" }
func (PmemSpec) Bytes() int64         { return 0 }
func (s PmemSpec) Preflight() error   { return checkPmemDevice(s.Device) }
func (s PmemSpec) UserDevice() string { return s.Device }

// PowerLoss: the power-loss layer is a FUSE layer, which would stand
// between the engine and the DAX mapping that is the tier's point.
func (PmemSpec) PowerLoss() PowerLoss {
	return PowerLoss{Keeps: Unmodelled, Why: "the power-loss layer is a FUSE layer, which would hide the DAX mapping of persistent memory, the reason for the tier"}
}
func (s PmemSpec) Make(ctx context.Context, p *Provisioner, name string) (string, error) {
	return p.Pmem(ctx, name, s)
}
