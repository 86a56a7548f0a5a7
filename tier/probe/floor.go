package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/profile"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// Floor is the FUSE layer's own cost on this machine: the queue-depth-1
// latency of 4 KiB reads, 4 KiB writes and fdatasync on a folder directly
// and through the layer with no delay asked (each operation still goes to
// the layer's server, as it does on a tier with a latency). No emulated
// tier is faster than the layer: a profile figure below the floor is one
// the tier cannot represent (Below).
type Floor struct {
	MeasuredAt time.Time `json:"measured_at"`
	// Backing is the folder measured directly, and under the layer.
	Backing string    `json:"backing"`
	Ops     []FloorOp `json:"ops"`
	// Note says how the figures were measured (O_DIRECT or buffered).
	Note string `json:"note,omitempty"`
}

// FloorOp is one operation's latency (µs) directly and through the layer;
// for fsync also at the sync calls (package syncdelay, emulate: syscall),
// which only delay syncs: reads and writes there cost what they cost
// directly.
type FloorOp struct {
	Op       string   `json:"op"`
	Direct   Latency  `json:"direct_us"`
	Layer    Latency  `json:"layer_us"`
	SyncCall *Latency `json:"sync_call_us,omitempty"`
}

// floorFile is where the last measured floor is kept in tierbench's state
// folder, for validate.
const floorFile = "fuse-floor.json"

// DefaultFloorUS is the floor assumed where none was measured on this
// machine: a FUSE round trip (two context switches and a wake-up on each
// side) takes at least about this many µs on any machine.
const DefaultFloorUS = 10.0

// DefaultSyncFloorUS is the sync calls' floor assumed where none was
// measured: a seccomp notification's round trip to the supervisor and
// back, and its look-up of the file.
const DefaultSyncFloorUS = 5.0

// noDelay asks the layer for a delay so small it never waits, so that
// every read, write and fsync goes through its server (with no latency at
// all, reads and writes would bypass it in passthrough).
var noDelay = tier.LatencySpec{Read: time.Nanosecond, Write: time.Nanosecond, Fsync: time.Nanosecond}

// MeasureFloor measures the floor in base (a folder, best in RAM so the
// backing costs little): its fio jobs first in a folder of base, then
// through a FUSE layer of base that prov mounts and its Close removes.
func MeasureFloor(ctx context.Context, prov *tier.Provisioner, base string, opt Options) (Floor, error) {
	fioBin, err := findFio(opt.FioPath)
	if err != nil {
		return Floor{}, err
	}
	f := Floor{MeasuredAt: time.Now().UTC(), Backing: base}
	direct, err := os.MkdirTemp(base, ".tierbench-floor-*")
	if err != nil {
		return Floor{}, fmt.Errorf("floor: %w", err)
	}
	defer os.RemoveAll(direct)
	d, dNote, err := qd1(ctx, fioBin, direct, opt)
	if err != nil {
		return Floor{}, fmt.Errorf("floor, directly in %s: %w", base, err)
	}
	mnt, err := prov.Latency("fuse-floor", base, noDelay, false)
	if err != nil {
		return Floor{}, fmt.Errorf("floor: %w", err)
	}
	l, lNote, err := qd1(ctx, fioBin, mnt, opt)
	if err != nil {
		return Floor{}, fmt.Errorf("floor, through the FUSE layer: %w", err)
	}
	for i, op := range []string{"read", "write", "fsync"} {
		f.Ops = append(f.Ops, FloorOp{Op: op, Direct: d[i], Layer: l[i]})
	}
	f.Note = fmt.Sprintf("directly: %s; through the layer: %s", dNote, lNote)
	if syncdelay.Supported() == nil {
		// Every sync under a rule that asks for no wait: the calls' own
		// cost, the look-up and the sync made on the caller's behalf.
		opt.SyncDelays = syncdelay.Rules{{Dir: direct, Latency: emulate.Latency{Fsync: time.Nanosecond}}}
		s, _, err := qd1(ctx, fioBin, direct, opt)
		if err != nil {
			return Floor{}, fmt.Errorf("floor, at the sync calls: %w", err)
		}
		f.Ops[2].SyncCall = &s[2]
	}
	return f, nil
}

// qd1 runs the queue-depth-1 jobs (4 KiB random read, random write,
// write + fdatasync) in dir and returns their latencies in that order.
func qd1(ctx context.Context, fioBin, dir string, opt Options) ([3]Latency, string, error) {
	var out [3]Latency
	size, err := fitSize(dir, min(opt.size(), 64<<20))
	if err != nil {
		return out, "", err
	}
	r := &runner{fio: fioBin, dir: dir, size: size, runtime: opt.runtime(), direct: directIOWorks(dir), syncs: opt.SyncDelays}
	note := "O_DIRECT"
	if !r.direct {
		note = "buffered (no O_DIRECT here: reads from the page cache)"
	}
	if _, err := r.run(ctx, r.layoutArgs(), 0); err != nil {
		return out, "", fmt.Errorf("lay out test file: %w", err)
	}
	defer os.Remove(filepath.Join(dir, testFile))
	var version string
	for i, j := range []job{
		{name: "randread_qd1", rw: "randread", bs: "4k", depth: 1},
		{name: "randwrite_qd1", rw: "randwrite", bs: "4k", depth: 1},
	} {
		res, err := r.runJob(ctx, j, &version)
		if err != nil {
			return out, "", err
		}
		out[i] = res.result().Lat
	}
	if err := syncfs(dir); err != nil {
		return out, "", err
	}
	res, err := r.runJob(ctx, job{name: "fsync", rw: "write", bs: "4k", depth: 1, sync: true}, &version)
	if err != nil {
		return out, "", err
	}
	out[2], _ = res.syncLatency()
	return out, note, nil
}

// Below names the figures of p that an emulated tier whose latency is
// applied by path cannot represent on a machine with floor f (nil: the
// default floors, DefaultFloorUS and DefaultSyncFloorUS): those below
// what the layer alone takes. Empty when the profile is within it. At the
// sync calls only fsync is delayed, so only fsync has a floor.
func Below(p profile.Profile, f *Floor, path tier.LatencyPath) []string {
	layer := map[string]Latency{}
	for _, op := range []string{"read", "write", "fsync"} {
		layer[op] = Latency{P50: DefaultFloorUS, P99: DefaultFloorUS}
	}
	for _, o := range f.ops() {
		layer[o.Op] = o.Layer
	}
	if path == tier.AtSyncCalls {
		layer = map[string]Latency{"fsync": {P50: DefaultSyncFloorUS, P99: DefaultSyncFloorUS}}
		for _, o := range f.ops() {
			if o.SyncCall != nil {
				layer[o.Op] = *o.SyncCall
			}
		}
	}
	var out []string
	for _, o := range []struct {
		name string
		op   profile.Op
	}{{"read", p.Latency.Read}, {"write", p.Latency.Write}, {"fsync", p.Latency.Fsync}} {
		fl, has := layer[o.name]
		if o.op.P50 == 0 || !has {
			continue
		}
		if us := float64(o.op.P50) / 1e3; us < fl.P50 {
			out = append(out, fmt.Sprintf("%s p50 %s (floor %s)", o.name, latency(us), latency(fl.P50)))
		}
		if us := float64(o.op.Tail()) / 1e3; us < fl.P99 {
			out = append(out, fmt.Sprintf("%s p99 %s (floor %s)", o.name, latency(us), latency(fl.P99)))
		}
	}
	return out
}

// ops are f's operations, none for a nil floor.
func (f *Floor) ops() []FloorOp {
	if f == nil {
		return nil
	}
	return f.Ops
}

// BelowText is Below as one sentence, "" when nothing is below the floor.
func BelowText(p profile.Profile, f *Floor, path tier.LatencyPath) string {
	b := Below(p, f, path)
	if len(b) == 0 {
		return ""
	}
	layer, assumed := "the FUSE layer's floor", DefaultFloorUS
	if path == tier.AtSyncCalls {
		layer, assumed = "the sync calls' floor", DefaultSyncFloorUS
	}
	whose := fmt.Sprintf("%s (assumed %s; tierbench probe --floor measures this machine's)", layer, latency(assumed))
	if f != nil {
		whose = layer + " on this machine (measured " + f.MeasuredAt.Format("2006-01-02") + ")"
	}
	return fmt.Sprintf("profile %s is faster than %s, which it cannot represent: %s", p.Name, whose, strings.Join(b, ", "))
}

// SaveFloor keeps f in tierbench's state folder dir, for validate.
func SaveFloor(dir string, f Floor) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("save floor: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save floor: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, floorFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save floor: %w", err)
	}
	return nil
}

// LoadFloor returns the floor kept in dir, nil when none was measured.
func LoadFloor(dir string) (*Floor, error) {
	data, err := os.ReadFile(filepath.Join(dir, floorFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the FUSE floor: %w", err)
	}
	var f Floor
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("read the FUSE floor %s: %w", filepath.Join(dir, floorFile), err)
	}
	return &f, nil
}

// WriteFloor writes the floor as a table, one operation a row.
func WriteFloor(w interface{ Write([]byte) (int, error) }, f Floor) {
	fmt.Fprintf(w, "FUSE layer floor (QD1, 4 KiB; %s):\n", f.Note)
	fmt.Fprintf(w, "  %-6s %12s %12s %12s %12s %14s %14s\n", "OP", "direct p50", "direct p99", "layer p50", "layer p99", "syscall p50", "syscall p99")
	for _, o := range f.Ops {
		sc50, sc99 := "as direct", "as direct"
		if o.SyncCall != nil {
			sc50, sc99 = latency(o.SyncCall.P50), latency(o.SyncCall.P99)
		}
		fmt.Fprintf(w, "  %-6s %12s %12s %12s %12s %14s %14s\n", o.Op, latency(o.Direct.P50), latency(o.Direct.P99), latency(o.Layer.P50), latency(o.Layer.P99), sc50, sc99)
	}
}
