package tier

import (
	"fmt"
	"strings"
	"time"

	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// LatencySpec asks for a tier whose operations take longer (through a FUSE
// passthrough), to model slower storage such as SATA, HDD or network block
// storage. Each is the operation's whole latency as an application sees
// it, not an amount added to the backing folder's (see package emulate).
// Zero leaves that operation as fast as the backing folder. The P99s,
// when set above their operation's latency, make the layer draw each
// operation's time from a distribution with that median and 99th
// percentile (see emulate.Latency); a profile sets them.
type LatencySpec struct {
	Read, Write, Fsync          time.Duration
	ReadP99, WriteP99, FsyncP99 time.Duration
	// DirectWrites delays only the writes that must reach the device
	// before they return (O_DIRECT, O_SYNC, O_DSYNC), as a device profile
	// means its write latency (measured by fio with O_DIRECT): a buffered
	// write lands in the page cache, and the device's time is paid at
	// fsync. Without it, `latency: {write: ...}` delays every write.
	DirectWrites bool
	// Path is how the latency is applied: through the FUSE layer (every
	// operation; the default) or at the sync system calls alone.
	Path LatencyPath
	// FsyncAtOnce is how a sync's time grows with the tier's syncs in
	// flight (a profile's fsync_at_once; emulate.Latency).
	FsyncAtOnce []emulate.SyncsAtOnce
}

// LatencyPath is how a tier's latency is applied (emulate: in a study).
type LatencyPath string

const (
	// ThroughFUSE serves the tier through the FUSE layer (package
	// emulate), which delays reads, writes and syncs, at its own cost on
	// each (its floor) and with writes to a file held while it syncs.
	ThroughFUSE LatencyPath = "fuse"
	// AtSyncCalls delays only the sync system calls of files under the
	// tier (package syncdelay): no layer, no floor on reads and writes,
	// which run at the backing folder's speed.
	AtSyncCalls LatencyPath = "syscall"
)

// LatencyPaths are the values of emulate:, in the order messages list them.
var LatencyPaths = []string{string(ThroughFUSE), string(AtSyncCalls)}

// Delays counts the operations the latency delays (read, write, fsync):
// 0 for a latency that sets nothing.
func (l LatencySpec) Delays() int {
	n := 0
	for _, d := range []time.Duration{l.Read, l.Write, l.Fsync} {
		if d > 0 {
			n++
		}
	}
	return n
}

// SyncCalls reports whether the latency is applied at the sync calls.
func (l LatencySpec) SyncCalls() bool { return l.Path == AtSyncCalls }

// SyncRule is the latency's fsync applied to the files under dir at the
// sync calls.
func (l LatencySpec) SyncRule(dir string) syncdelay.Rule {
	return syncdelay.Rule{Dir: dir, Fsync: l.Fsync, FsyncP99: l.FsyncP99, FsyncAtOnce: l.FsyncAtOnce}
}

// ThrottleSpec caps a loop tier's device through the block I/O cgroup
// controller. Zero means no cap.
type ThrottleSpec struct {
	ReadIOPS, WriteIOPS, ReadBPS, WriteBPS int64
}

// String describes the injected latency, for labels.
func (l LatencySpec) String() string {
	if l.SyncCalls() {
		l.Read, l.Write = 0, 0
	}
	var parts []string
	for _, p := range []struct {
		name    string
		d, tail time.Duration
	}{{"read", l.Read, l.ReadP99}, {l.writeName(), l.Write, l.WriteP99}, {"fsync", l.Fsync, l.FsyncP99}} {
		switch {
		case p.d > 0 && p.tail > p.d:
			parts = append(parts, fmt.Sprintf("%s p50 %s p99 %s", p.name, p.d, p.tail))
		case p.d > 0:
			parts = append(parts, fmt.Sprintf("%s %s", p.name, p.d))
		}
	}
	if len(l.FsyncAtOnce) > 0 {
		var at []string
		for _, a := range l.FsyncAtOnce {
			at = append(at, fmt.Sprintf("%d: %s", a.Syncs, a.P50))
		}
		parts = append(parts, "fsync p50 by syncs in flight "+strings.Join(at, ", "))
	}
	if l.SyncCalls() {
		return strings.Join(parts, ", ") + " at the sync calls"
	}
	return strings.Join(parts, ", ")
}

// writeName names the write latency in labels: "direct write" when only
// direct and synchronous writes are delayed.
func (l LatencySpec) writeName() string {
	if l.DirectWrites {
		return "direct write"
	}
	return "write"
}

// String describes the caps, for labels.
func (t ThrottleSpec) String() string {
	var parts []string
	for _, p := range []struct {
		name string
		v    int64
	}{{"read_iops", t.ReadIOPS}, {"write_iops", t.WriteIOPS}, {"read_bps", t.ReadBPS}, {"write_bps", t.WriteBPS}} {
		if p.v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", p.name, p.v))
		}
	}
	return strings.Join(parts, ", ")
}
