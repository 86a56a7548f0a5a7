package probe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/profile"
)

// TestMeasureFloor measures the FUSE layer's floor in a RAM folder: every
// operation has its figures directly and through the layer, the floor is
// kept for validate, and nothing is left mounted or in the ledger.
func TestMeasureFloor(t *testing.T) {
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	if err := Available(); err != nil {
		testenv.Skipf(t, "%v", err)
	}
	base, err := os.MkdirTemp("/dev/shm", "tierbench-test-floor-")
	if err != nil {
		testenv.Skipf(t, "no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	state := filepath.Join(t.TempDir(), "state")
	ledger, err := tier.OpenLedger(state)
	if err != nil {
		t.Fatal(err)
	}
	prov := &tier.Provisioner{Ledger: ledger, Tag: "floortest"}
	f, err := MeasureFloor(context.Background(), prov, base, Options{Runtime: 200 * time.Millisecond, Size: 4 << 20})
	if cerr := prov.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Ops) != 3 {
		t.Fatalf("floor ops %+v, want read, write and fsync", f.Ops)
	}
	for _, o := range f.Ops {
		if o.Direct.P50 <= 0 || o.Layer.P50 <= 0 || o.Layer.P99 < o.Layer.P50 {
			t.Errorf("%s: %+v; want positive figures directly and through the layer", o.Op, o)
		}
	}
	t.Logf("floor: %+v", f.Ops)
	if err := SaveFloor(state, f); err != nil {
		t.Fatal(err)
	}
	back, err := LoadFloor(state)
	if err != nil || back == nil || len(back.Ops) != 3 {
		t.Fatalf("kept floor %+v, %v", back, err)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("left in the ledger: %v", left)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 0 {
		t.Errorf("left in %s: %v", base, ents)
	}
}

// Below names a profile's figures under the floor, measured or assumed.
func TestBelow(t *testing.T) {
	p := profile.Profile{Name: "fast"}
	p.Latency.Read = profile.Op{P50: profile.Duration(5 * time.Microsecond), P99: profile.Duration(50 * time.Microsecond)}
	p.Latency.Fsync = profile.Op{P50: profile.Duration(2 * time.Millisecond)}
	floor := &Floor{Ops: []FloorOp{{Op: "read", Layer: Latency{P50: 8, P99: 100}},
		{Op: "fsync", Layer: Latency{P50: 7, P99: 90}, SyncCall: &Latency{P50: 4, P99: 3000}}}}
	for _, c := range []struct {
		name  string
		floor *Floor
		path  tier.LatencyPath
		want  []string
	}{
		{"measured", floor, tier.ThroughFUSE, []string{"read p50 5.00 µs (floor 8.00 µs)", "read p99 50.0 µs (floor 100 µs)"}},
		{"assumed", nil, tier.ThroughFUSE, []string{"read p50 5.00 µs (floor 10.0 µs)"}},
		// At the sync calls only fsync has a floor.
		{"sync calls", floor, tier.AtSyncCalls, []string{"fsync p99 2.00 ms (floor 3.00 ms)"}},
		{"sync calls assumed", nil, tier.AtSyncCalls, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Below(p, c.floor, c.path); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("below %q, want %q", got, c.want)
			}
		})
	}
	slow := profile.Profile{Name: "slow"}
	slow.Latency.Fsync = profile.Op{P50: profile.Duration(time.Millisecond)}
	if b := BelowText(slow, floor, tier.ThroughFUSE); b != "" {
		t.Errorf("a profile above the floor: %q", b)
	}
}

// A probe turns into a profile that reads back, with its figures and a
// source naming the host and the date; fidelity against it is exact.
func TestProfileOfProbe(t *testing.T) {
	tr := Tier{Path: "/var/tmp", FSType: "ext4", Device: "/dev/sda1", Durable: true, Fio: &Fio{
		RandReadQD1: IOResult{IOPS: 5000, Lat: Latency{P50: 180, P99: 420}}, RandReadQD32: IOResult{IOPS: 40000},
		RandWriteQD1: IOResult{IOPS: 9000, Lat: Latency{P50: 100, P99: 300}}, RandWriteQD32: IOResult{IOPS: 30000},
		SeqReadMBps: 500, SeqWriteMBps: 400, FsyncLat: Latency{P50: 1500, P99: 4000}, FioVersion: "fio-3.33",
	}}
	p := ProfileOf(tr, "box", time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := profile.Parse(data, "")
	if err != nil {
		t.Fatalf("saved profile does not read back: %v\n%s", err, data)
	}
	if back.Name != "measured-var-tmp" || back.Durability != profile.Synced || !strings.Contains(back.Source, "measured on box 2026-11-28 by tierbench probe") {
		t.Errorf("profile %+v", back)
	}
	for _, r := range Fidelity(back, tr.Fio) {
		if r.Error > 0.01 || r.Error < -0.01 {
			t.Errorf("%s: asked %v achieved %v: a profile of a probe should match it", r.Figure, r.Asked, r.Achieved)
		}
	}
	if n := len(Fidelity(back, tr.Fio)); n != 10 {
		t.Errorf("%d fidelity rows, want 10 (6 latencies, 2 IOPS, 2 bandwidths)", n)
	}
}
