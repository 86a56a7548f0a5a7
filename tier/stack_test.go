package tier_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/profile"
)

// TestLayering decides the stack of every kind of package tier (rbd's,
// in engine/ceph/rbdtier, is refused a power cut as storage_class is:
// study's TestRbdLayering) (and the host facts that
// change one: a folder in RAM or not) under every crash kind and every
// way a delay is asked, and checks it against the rule each part of the
// stack follows: the power-loss layer by the kind's Layer, the delay's
// path as asked or a profile's default (never the sync calls under the
// layer), caps only where the kind can be throttled, the atomic-write
// unit from the kind, a declaration or the profile.
func TestLayering(t *testing.T) {
	fast, err := profile.Find("nvme-tlc") // fsync below tier.SyncCallsBelow
	if err != nil {
		t.Fatal(err)
	}
	fast.IOPS.Write = 1000 // a cap, applied where the kind is throttled
	fast.AtomicWrite = 4096
	kinds := []struct {
		name string
		spec tier.Spec
		host tier.Host
		// layer is where the power-loss layer stands: "never", "cut"
		// (on a power cut), "always", "refused" (a power cut is refused).
		layer string
		// defaultUnit is the kind's atomic-write unit.
		defaultUnit int64
	}{
		{"folder on disk", tier.Spec{Name: "t", Path: "/d", Kind: tier.FolderSpec{}}, tier.Host{}, "cut", 512},
		{"folder in RAM", tier.Spec{Name: "t", Path: "/r", Kind: tier.FolderSpec{}}, tier.Host{FolderInRAM: true}, "never", 512},
		{"folder, no kind", tier.Spec{Name: "t", Path: "/d"}, tier.Host{}, "cut", 512},
		{"tmpfs", tier.Spec{Name: "t", Kind: tier.TmpfsSpec{Size: 1 << 20}}, tier.Host{}, "never", 512},
		{"loop ram", tier.Spec{Name: "t", Kind: tier.LoopSpec{Backing: "ram", Size: 1 << 20, FS: "ext4"}}, tier.Host{}, "never", 512},
		{"loop disk", tier.Spec{Name: "t", Kind: tier.LoopSpec{Backing: "disk", Size: 1 << 20, FS: "ext4"}}, tier.Host{}, "cut", 512},
		{"pmem", tier.Spec{Name: "t", Kind: tier.PmemSpec{Device: "/dev/pmem0", FS: "xfs"}}, tier.Host{}, "refused", 8},
		{"pmem_emulated size", tier.Spec{Name: "t", Kind: tier.PmemEmulatedSpec{Size: 1 << 20}}, tier.Host{}, "always", 8},
		{"pmem_emulated folder", tier.Spec{Name: "t", Path: "/r", Kind: tier.PmemEmulatedSpec{Path: "/r"}}, tier.Host{FolderInRAM: true}, "always", 8},
		{"storage_class", tier.Spec{Name: "t", Kind: tier.StorageClassSpec{Class: "c"}}, tier.Host{}, "refused", 512},
	}
	delays := []struct {
		name    string
		latency *tier.LatencySpec
		prof    bool
		emulate tier.LatencyPath
		unit    int64 // atomic_write declared
	}{
		{name: "none"},
		{name: "none, atomic_write 16KiB", unit: 16 << 10},
		{name: "latency", latency: &tier.LatencySpec{Fsync: time.Millisecond}},
		{name: "latency at the sync calls", latency: &tier.LatencySpec{Fsync: time.Millisecond}, emulate: tier.AtSyncCalls},
		{name: "profile", prof: true},
		{name: "profile through fuse", prof: true, emulate: tier.ThroughFUSE},
		{name: "profile at the sync calls", prof: true, emulate: tier.AtSyncCalls},
	}
	for _, k := range kinds {
		abil := k.spec.Abilities()
		for _, power := range []bool{false, true} {
			for _, d := range delays {
				if (d.latency != nil || d.prof) && !(abil.Latency && abil.Profile) {
					continue // the parser refuses it (a fixed speed)
				}
				t.Run(fmt.Sprintf("%s/power=%v/%s", k.name, power, d.name), func(t *testing.T) {
					s := k.spec
					s.Latency, s.Emulate, s.AtomicWrite = d.latency, d.emulate, d.unit
					if d.prof {
						s.Profile = &fast
					}
					st, err := tier.Layering(s, tier.Crashes{PowerCut: power}, k.host)
					layer := k.layer == "always" || k.layer == "cut" && power
					asksSyncCalls := d.emulate == tier.AtSyncCalls || d.prof && d.emulate == ""
					switch {
					case k.layer == "refused" && power:
						if !errors.Is(err, tier.ErrCrash) {
							t.Fatalf("err %v, want a power cut refused", err)
						}
						return
					case layer && d.emulate == tier.AtSyncCalls:
						if !errors.Is(err, tier.ErrCrash) {
							t.Fatalf("err %v, want the sync calls refused under the layer", err)
						}
						return
					case err != nil:
						t.Fatal(err)
					}
					if st.CrashLayer != layer || st.DurableByLayer != (k.layer == "always") {
						t.Errorf("crash layer %v, durable by layer %v; want %v, %v", st.CrashLayer, st.DurableByLayer, layer, k.layer == "always")
					}
					switch {
					case d.latency == nil && !d.prof:
						if st.Latency != nil {
							t.Errorf("latency %v, want none", st.Latency)
						}
					case asksSyncCalls && !layer:
						if !st.Latency.SyncCalls() {
							t.Errorf("latency path %q, want the sync calls", st.Latency.Path)
						}
					default:
						if st.Latency.Path != tier.ThroughFUSE {
							t.Errorf("latency path %q, want through FUSE", st.Latency.Path)
						}
					}
					if capped := st.Throttle != nil; capped != (d.prof && abil.Throttle) {
						t.Errorf("capped %v, want %v (a profile's caps on a kind that can be throttled)", capped, !capped)
					}
					want := k.defaultUnit
					switch {
					case d.unit > 0:
						want = d.unit
					case d.prof:
						want = int64(fast.AtomicWrite)
					}
					if st.AtomicWrite != want || st.AtomicWriteFrom == "" {
						t.Errorf("atomic write %d (%s), want %d", st.AtomicWrite, st.AtomicWriteFrom, want)
					}
				})
			}
		}
	}
}

// TestLayeringRefuses: a folder that must be RAM and is not, and a unit
// below a sector on a kind that writes sectors.
func TestLayeringRefuses(t *testing.T) {
	pm := tier.Spec{Name: "pm", Path: "/d", Kind: tier.PmemEmulatedSpec{Path: "/d"}}
	if _, err := tier.Layering(pm, tier.Crashes{}, tier.Host{Folder: "ext4"}); err == nil {
		t.Error("a pmem_emulated folder on disk was layered")
	}
	word := tier.Spec{Name: "w", Path: "/d", Kind: tier.FolderSpec{}, AtomicWrite: 8}
	if _, err := tier.Layering(word, tier.Crashes{}, tier.Host{}); err == nil {
		t.Error("an 8 B unit was taken on a folder")
	}
	word.Kind = tier.PmemEmulatedSpec{Size: 1 << 20}
	if st, err := tier.Layering(word, tier.Crashes{}, tier.Host{}); err != nil || st.AtomicWrite != 8 {
		t.Errorf("an 8 B unit on pmem_emulated: %d, %v", st.AtomicWrite, err)
	}
}
