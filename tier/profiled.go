package tier

import (
	"fmt"
	"math"
	"time"

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

// ApplyProfile works out what a tier applies of p: loop says the tier is
// a loop tier (caps apply), crashLayer that it runs under the power-loss
// layer (which keeps what was synced and loses the rest).
func ApplyProfile(p profile.Profile, loop, crashLayer bool) Profiled {
	l := p.Latency
	out := Profiled{Latency: LatencySpec{
		Read: time.Duration(l.Read.P50), Write: time.Duration(l.Write.P50), Fsync: time.Duration(l.Fsync.P50),
		ReadP99: time.Duration(l.Read.P99), WriteP99: time.Duration(l.Write.P99), FsyncP99: time.Duration(l.Fsync.P99),
		DirectWrites: true,
	}}
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
	if l.Read.P50 > 0 {
		out.NotApplied = append(out.NotApplied, "read latency on page-cache hits (a cached read costs nothing, as on a real device)")
	}
	return out
}
