package tier

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// LatencySpec asks for a tier whose operations take longer, to model
// slower storage such as SATA, HDD or network block storage: a device's
// latency, one type (emulate.Latency) from the study's latency: or a
// device profile (ApplyProfile) to where it acts: the FUSE layer
// (Provisioner.Latency), the sync-call supervisor and the in-process
// wrapper (SyncRule, package syncdelay). Each figure is the operation's
// whole latency as an application sees it, not an amount added to the
// backing folder's (see package emulate); zero leaves that operation as
// fast as the backing folder. Its Path says how it is applied.
type LatencySpec = emulate.Latency

// LatencyPath is how a tier's latency is applied (emulate: in a study).
type LatencyPath = emulate.Path

const (
	// ThroughFUSE serves the tier through the FUSE layer (package
	// emulate), which delays reads, writes and syncs.
	ThroughFUSE = emulate.ThroughFUSE
	// AtSyncCalls delays only the sync system calls of files under the
	// tier (package syncdelay).
	AtSyncCalls = emulate.AtSyncCalls
)

// LatencyPaths are the values of emulate:, in the order messages list them.
var LatencyPaths = emulate.Paths

// SyncRule is latency l's fsync applied to the files under dir at the
// sync calls.
func SyncRule(dir string, l LatencySpec) syncdelay.Rule {
	return syncdelay.Rule{Dir: dir, Latency: l.SyncsOnly()}
}

// ThrottleSpec caps a loop tier's device through the block I/O cgroup
// controller. Zero means no cap.
type ThrottleSpec struct {
	ReadIOPS, WriteIOPS, ReadBPS, WriteBPS int64
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
