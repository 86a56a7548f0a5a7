package tier

import (
	"fmt"
	"math"
	"time"

	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/profile"
)

// Profiled is what an emulated tier applies of a device profile: the
// latencies through the FUSE layer, the IOPS and bandwidth caps through
// the block I/O controller on a loop tier (the only kind whose device
// tierbench owns), and, in words, what it does not apply.
type Profiled struct {
	Latency  LatencySpec
	Throttle *ThrottleSpec
	// NotApplied says which parts of the profile the tier cannot apply,
	// one phrase each, for validate and the tier's record.
	NotApplied []string
}

// SyncCallsBelow is the fsync latency under which a profile is applied at
// the sync calls by default: a solid-state device's. The FUSE layer's own
// costs (about 10 µs a call at p50 and 100-300 µs at p99 here) are a
// large part of what such a device takes, and its lock holds a file's
// writes while it syncs, which undoes a database's group commit; a
// buffered database meets such a device at fsync anyway (its writes land
// in the page cache, its reads mostly come from it). A slower device
// (an HDD, a SATA SSD's flush, a cloud volume) goes through the FUSE
// layer, whose costs are lost in its latency, and which also applies its
// reads.
const SyncCallsBelow = time.Millisecond

// ApplyProfile works out what a tier applies of p: loop says the tier is
// a loop tier (caps apply), crashLayer that it runs under the power-loss
// layer (which keeps what was synced and loses the rest), path how its
// latency is applied; "" is the default: at the sync calls for a profile
// whose fsync is faster than SyncCallsBelow, unless under the power-loss
// layer, which is a FUSE layer; else through the FUSE layer.
func ApplyProfile(p profile.Profile, loop, crashLayer bool, path LatencyPath) Profiled {
	if path == "" {
		path = ThroughFUSE
		if !crashLayer && p.Latency.Fsync.P50 > 0 && time.Duration(p.Latency.Fsync.P50) < SyncCallsBelow {
			path = AtSyncCalls
		}
	}
	l := p.Latency
	out := Profiled{Latency: LatencySpec{
		Read: time.Duration(l.Read.P50), Write: time.Duration(l.Write.P50), Fsync: time.Duration(l.Fsync.P50),
		ReadP99: time.Duration(l.Read.P99), WriteP99: time.Duration(l.Write.P99), FsyncP99: time.Duration(l.Fsync.P99),
		DirectWrites: true, Path: path,
	}}
	for _, a := range p.FsyncAtOnce {
		out.Latency.FsyncAtOnce = append(out.Latency.FsyncAtOnce, emulate.SyncsAtOnce{Syncs: a.Syncs, P50: time.Duration(a.P50), P99: time.Duration(a.P99)})
	}
	caps := ThrottleSpec{
		ReadIOPS: int64(math.Round(p.IOPS.Read)), WriteIOPS: int64(math.Round(p.IOPS.Write)),
		ReadBPS: int64(p.Bandwidth.Read * (1 << 20)), WriteBPS: int64(p.Bandwidth.Write * (1 << 20)),
	}
	switch {
	case caps == ThrottleSpec{}:
	case loop:
		out.Throttle = &caps
	default:
		out.NotApplied = append(out.NotApplied, fmt.Sprintf("IOPS and bandwidth caps (%s: only a loop tier is capped)", caps.String()))
	}
	switch {
	case p.Durability == profile.Synced && !crashLayer:
		out.NotApplied = append(out.NotApplied, "durability synced (left to the backing storage: crash: power puts the tier under the power-loss layer, which applies it)")
	case p.Durability == profile.Written:
		out.NotApplied = append(out.NotApplied, "durability written (the power-loss layer keeps only what was synced)")
	case p.Durability == profile.None && crashLayer:
		out.NotApplied = append(out.NotApplied, "durability none (the power-loss layer keeps what was synced)")
	}
	switch {
	case path == AtSyncCalls && (l.Read.P50 > 0 || l.Write.P50 > 0):
		out.NotApplied = append(out.NotApplied, "read and direct-write latency (emulate: syscall delays the sync calls alone; reads and writes run at the backing folder's speed, as a buffered database's do from the page cache: emulate: fuse applies them, at the FUSE layer's own cost)")
	case l.Read.P50 > 0:
		out.NotApplied = append(out.NotApplied, "read latency on page-cache hits (a cached read costs nothing, as on a real device)")
	}
	return out
}
