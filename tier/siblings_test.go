package tier

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// TestTiersOfOneSpecShareACalibration: a study's two FUSE tiers of one
// latency spec are calibrated once, the second taking the first's
// overhead and round trip and saying so in its record, while a tier of
// another spec measures its own; two sync-call tiers of one spec carry
// one calibration, measured at provisioning rather than at each engine's
// start. Nothing is left after.
func TestTiersOfOneSpecShareACalibration(t *testing.T) {
	if err := emulate.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	if err := syncdelay.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	ledger, err := OpenLedger(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	lat := LatencySpec{Fsync: 200 * time.Microsecond}
	other := LatencySpec{Fsync: 300 * time.Microsecond}
	syscalls := LatencySpec{Fsync: 200 * time.Microsecond, Path: AtSyncCalls}
	tmpfs := TmpfsSpec{Size: 16 << 20}
	ws, err := NewWorkspace(context.Background(), ledger, "alike",
		Spec{Name: "a", Kind: tmpfs, Latency: &lat},
		Spec{Name: "other", Kind: tmpfs, Latency: &other},
		Spec{Name: "a2", Kind: tmpfs, Latency: &lat},
		Spec{Name: "s", Kind: tmpfs, Latency: &syscalls},
		Spec{Name: "s2", Kind: tmpfs, Latency: &syscalls})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ws.Close(); err != nil {
			t.Error(err)
		}
		if left, _ := ledger.All(); len(left) != 0 {
			t.Errorf("left in the ledger: %v", left)
		}
	}()
	cal := map[string]emulate.Calibration{}
	for _, name := range []string{"a", "other", "a2"} {
		cal[name], _ = ws.prov.LatencyCalibration(name)
		t.Logf("tier %s: %s", name, ws.Tiers()[name].Emulation)
	}
	a, a2 := cal["a"], cal["a2"]
	if a.Shared || !a2.Shared || a2.Overhead != a.Overhead || a2.RoundTrip != a.RoundTrip {
		t.Errorf("a2 does not take a's calibration: a %+v, a2 %+v", a, a2)
	}
	if a2.FsyncP50 == 0 {
		t.Errorf("a2 did not measure what it delivers: %+v", a2)
	}
	if cal["other"].Shared {
		t.Errorf("a tier of another spec took a calibration: %+v", cal["other"])
	}
	if e := ws.Tiers()["a2"].Emulation; !strings.Contains(e, "measured at the first mount of this spec") {
		t.Errorf("a2's record does not say its calibration is shared: %s", e)
	}
	rules := ws.SyncDelays()
	if len(rules) != 2 || rules[0].Calibration == nil || rules[1].Calibration == nil || *rules[0].Calibration != *rules[1].Calibration {
		t.Errorf("the sync-call tiers of one spec do not share one calibration: %+v", rules)
	}
	t.Logf("warnings: %v", ws.Warnings())
}

// TestSiblingsApartAreRecalibratedOrWarnedOf: two tiers of one spec
// whose layers delay differently (the second given a calibration that
// takes every wait off, as one measured under a burst of load might) are
// found apart side by side and recalibrated there, and the note of each
// says so; two more, the second delaying longer than asked whatever its
// layer takes off (as on a backing folder slower than asked), stay apart,
// and each is warned of with the figures.
func TestSiblingsApartAreRecalibratedOrWarnedOf(t *testing.T) {
	if err := emulate.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	ledger, err := OpenLedger(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	p := &Provisioner{Ledger: ledger, Tag: "apart"}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		if left, _ := ledger.All(); len(left) != 0 {
			t.Errorf("left in the ledger: %v", left)
		}
	}()
	mount := func(name string, lat LatencySpec, base string) {
		t.Helper()
		if base == "" {
			var err error
			if base, err = p.Tmpfs(name, TmpfsSpec{Size: 16 << 20}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := p.Latency(name, base, lat, false); err != nil {
			t.Fatal(err)
		}
	}
	lat := LatencySpec{Fsync: 2 * time.Millisecond}
	mount("a", lat, "")
	// A wait of 2 ms shortened by 2 ms, and no spin: the layer's round
	// trip alone.
	bogus := emulate.Calibration{Overhead: lat.Fsync, RoundTrip: lat.Fsync}
	for k := range p.bySpec {
		p.bySpec[k] = bogus
	}
	mount("a2", lat, "")
	// A layer that delays 5 ms where its sibling delays 2 ms, as one on
	// a backing folder slower than asked would: no overhead taken off
	// brings it down, as it takes off at most the asked 2 ms.
	mount("b", lat, "")
	mount("b2", LatencySpec{Fsync: 5 * time.Millisecond}, "")
	keyA, keyB2 := specKey(emulate.Latency{Fsync: lat.Fsync}, false), specKey(emulate.Latency{Fsync: 5 * time.Millisecond}, false)
	group := p.siblings[keyA]
	p.siblings[keyA] = group[:2]
	p.siblings["b"] = append(group[2:], p.siblings[keyB2]...)
	delete(p.siblings, keyB2)

	notes, err := p.CheckSiblings()
	if err != nil {
		t.Fatal(err)
	}
	byTier := map[string]SiblingNote{}
	for _, n := range notes {
		t.Logf("%+v", n)
		byTier[n.Tier] = n
	}
	if c, _ := p.LatencyCalibration("a2"); len(byTier["a"].Note) == 0 || len(byTier["a2"].Note) == 0 || c.Overhead == bogus.Overhead {
		t.Errorf("a2, apart from a, was not recalibrated: notes %+v, a2's calibration now %+v", byTier, c)
	}
	for _, name := range []string{"b", "b2"} {
		if n := byTier[name]; !n.Warn || !strings.Contains(n.Note, "fsync p50 b ") {
			t.Errorf("tier %s, apart from its sibling for good, not warned of: %+v", name, n)
		}
	}
}
