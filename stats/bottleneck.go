package stats

import (
	"fmt"
	"sort"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
)

// Bottleneck kinds.
const (
	BoundFsync     = "fsync"
	BoundIOPS      = "iops"
	BoundBandwidth = "bandwidth"
	BoundCPU       = "cpu"
	BoundNone      = "none"
)

// Thresholds: a figure at or above this share of its ceiling is a limit.
const (
	cpuBusyPct    = 90.0
	ceilingShare  = 0.7
	deviceBusyPct = 90.0
)

// commitComponents are, in order of preference, the components whose
// writes a commit waits for.
var commitComponents = []string{"wal", "redo", "journal", "data"}

// Attribute names the likely limit of a run from its telemetry and the
// probed ceilings of its tiers: the CPU, the commit tier's sync ceiling,
// a device's IOPS or bandwidth, or none of them. It is the answer to "why did
// the fast tier not help".
func Attribute(r *results.Run, st *results.Study) *results.Bottleneck {
	if r.Telemetry == nil {
		return &results.Bottleneck{Kind: BoundNone, Text: "unknown: no telemetry was recorded for this run"}
	}
	t := r.Telemetry
	cpu := t.Host.CPUUserPct + t.Host.CPUSysPct
	if cpu >= cpuBusyPct {
		return &results.Bottleneck{Kind: BoundCPU, FractionOfCeiling: cpu / 100,
			Text: fmt.Sprintf("CPU-bound: %d cores at %.0f%%", st.Env.CPUs, cpu)}
	}
	if b := fsyncBound(r, st); b != nil {
		return b
	}
	tiers := make([]string, 0, len(t.Tiers))
	for name := range t.Tiers {
		tiers = append(tiers, name)
	}
	sort.Strings(tiers)
	var best *results.Bottleneck
	consider := func(b *results.Bottleneck) {
		if best == nil || b.FractionOfCeiling > best.FractionOfCeiling {
			best = b
		}
	}
	for _, name := range tiers {
		ts := t.Tiers[name]
		if p := st.Probes[name]; p != nil && p.Tier.Fio != nil {
			f := p.Tier.Fio
			if f.SeqWriteMBps > 0 && ts.WriteMBps/f.SeqWriteMBps >= ceilingShare {
				consider(&results.Bottleneck{Kind: BoundBandwidth, Tier: name, FractionOfCeiling: ts.WriteMBps / f.SeqWriteMBps,
					Text: fmt.Sprintf("write-bandwidth-bound on tier %s: %.0f MB/s, %.0f%% of its probed %.0f MB/s", name, ts.WriteMBps, 100*ts.WriteMBps/f.SeqWriteMBps, f.SeqWriteMBps)})
			}
			if f.RandWriteQD32.IOPS > 0 && ts.WriteIOPS/f.RandWriteQD32.IOPS >= ceilingShare {
				consider(&results.Bottleneck{Kind: BoundIOPS, Tier: name, FractionOfCeiling: ts.WriteIOPS / f.RandWriteQD32.IOPS,
					Text: fmt.Sprintf("write-IOPS-bound on tier %s: %.0f IOPS, %.0f%% of its probed %.0f", name, ts.WriteIOPS, 100*ts.WriteIOPS/f.RandWriteQD32.IOPS, f.RandWriteQD32.IOPS)})
			}
		}
		if ts.UtilPct >= deviceBusyPct {
			consider(&results.Bottleneck{Kind: BoundIOPS, Tier: name, FractionOfCeiling: ts.UtilPct / 100,
				Text: fmt.Sprintf("device-bound on tier %s: %s busy %.0f%% of the time", name, ts.Device, ts.UtilPct)})
		}
	}
	if best != nil {
		return best
	}
	return &results.Bottleneck{Kind: BoundNone, Text: notBoundText(cpu, t)}
}

// fsyncBound checks the commit tier's flush rate against its sync ceiling.
func fsyncBound(r *results.Run, st *results.Study) *results.Bottleneck {
	if r.Durability != "sync" {
		return nil
	}
	var comp, tierName string
	for _, c := range commitComponents {
		if t, ok := r.Components[c]; ok {
			comp, tierName = c, t
			break
		}
	}
	ts, ok := r.Telemetry.Tiers[tierName]
	p := st.Probes[tierName]
	if !ok || p == nil || p.Tier.Fio == nil || p.Tier.Fio.SyncCeilingPerS <= 0 || ts.Device == "" {
		return nil
	}
	rate, what := ts.FlushesPerS, "flushes/s"
	if rate == 0 {
		rate, what = ts.WriteIOPS, "writes/s" // kernels before 5.5 count no flushes
	}
	frac := rate / p.Tier.Fio.SyncCeilingPerS
	if frac < ceilingShare {
		return nil
	}
	return &results.Bottleneck{Kind: BoundFsync, Tier: tierName, FractionOfCeiling: frac,
		Text: fmt.Sprintf("%s fsync-bound on tier %s: %.0f %s, %.0f%% of its probed sync ceiling of %.0f/s",
			upper(comp), tierName, rate, what, 100*frac, p.Tier.Fio.SyncCeilingPerS)}
}

func notBoundText(cpu float64, t *telemetry.Summary) string {
	busiest, util := "", -1.0
	for name, ts := range t.Tiers {
		if ts.Device != "" && ts.UtilPct > util {
			busiest, util = name+" ("+ts.Device+")", ts.UtilPct
		}
	}
	if busiest == "" {
		return fmt.Sprintf("not storage-bound: CPU at %.0f%%, no tier has a block device to watch", cpu)
	}
	return fmt.Sprintf("not storage-bound: CPU at %.0f%%, busiest device %s at %.0f%% utilisation", cpu, busiest, util)
}

func upper(s string) string {
	if s == "wal" {
		return "WAL"
	}
	return s
}
