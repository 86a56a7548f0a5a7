package stats

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
)

// Bottleneck kinds.
const (
	BoundFsync     = "fsync"
	BoundIOPS      = "iops"
	BoundBandwidth = "bandwidth"
	BoundCPU       = "cpu"
	BoundMemory    = "memory"
	BoundNone      = "none"
)

// Thresholds. Each is a share of something the kernel measured, never of
// a figure tierbench guessed.
const (
	// cpuBusyPct: host CPUs busy (user+system) at least this much are a limit.
	cpuBusyPct = 90.0
	// ceilingShare: a device figure at this share of its probed ceiling is
	// a limit.
	ceilingShare = 0.7
	// deviceBusyPct: a device with I/O in flight this share of the time is
	// a limit (utilisation undercounts on modern kernels, so it rarely fires
	// alone).
	deviceBusyPct = 90.0
	// memoryFullShare: a memory limit whose peak reached this share was
	// full; memoryReadsPerS: reads (or major faults) per second from the
	// data's device that show the engine fetching back what did not fit.
	memoryFullShare = 0.95
	memoryReadsPerS = 50.0
	// fsyncWaitShare: a commit path that waits on its device this share of
	// wall time or more is fsync-bound. Both measures of the wait are lower
	// bounds (the device figures count one write and one flush per sync;
	// the sampler misses the time a syncing thread is on a CPU: on this
	// VM, fio's fdatasync loop read 48% and 59% while it spent 99% in
	// fdatasync), and removing a quarter of every commit's time alone
	// gives at least 1.33x.
	fsyncWaitShare = 0.25
	// syncSampledMinPct: below this sampled share of wall time, the engine
	// hardly waits in sync calls on the WAL, and the device's flushes are
	// someone else's (the data's, another process's): device figures then
	// do not speak for the commit path.
	syncSampledMinPct = 10.0
	// slowSyncFactor: a sync this many times slower on the device than the
	// probed fsync latency of the idle tier is named as such.
	slowSyncFactor = 3.0
	// quietSyncPct and quietUtilPct: under both, a run is not device-bound.
	quietSyncPct = 10.0
	quietUtilPct = 50.0
	// othersShare: when the engine's processes used less than this share of
	// the busy CPU time, other processes used most of it.
	othersShare = 0.5
	// loadGenShare: a load generator using this share of the busy CPU time
	// or more is named as a cause, with the fix.
	loadGenShare = 0.2
)

// Explain returns runs with every ok run's bottleneck computed from its
// stored telemetry by Attribute. It is called when results are shown, so an
// improved attribution applies to studies stored before it; a run without
// telemetry keeps the sentence stored with it, if any. runs is not modified.
func Explain(st *results.Study, runs []results.Run) []results.Run {
	out := make([]results.Run, len(runs))
	for i, r := range runs {
		if r.Status == results.RunOK && (r.Telemetry != nil || r.Bottleneck == nil) {
			r.Bottleneck = Attribute(&r, st)
		}
		out[i] = r
	}
	return out
}

// Attribute names the likely limit of a run from its telemetry and the
// probed ceilings of its tiers: the WAL's fsync, the CPU, a device's IOPS or
// bandwidth, or none of them, with the figures it rests on as Evidence. It
// is the answer to "why did the fast tier (not) help".
func Attribute(r *results.Run, st *results.Study) *results.Bottleneck {
	if r.Telemetry == nil {
		return &results.Bottleneck{Kind: BoundNone, Text: "unknown: no telemetry was recorded for this run"}
	}
	if r.Telemetry.Source == telemetry.SourceKubelet {
		return clusterUnknown(r.Telemetry)
	}
	v := newView(r, st)
	if b := fsyncBound(v); b != nil {
		return b
	}
	if b := memoryBound(v); b != nil {
		return b
	}
	if b := cpuBound(v); b != nil {
		return b
	}
	if b := deviceBound(v); b != nil {
		return b
	}
	return notBound(v)
}

// view is what the rules read of one run.
type view struct {
	r  *results.Run
	st *results.Study
	t  *telemetry.Summary
	// cpus is the host's CPU count (1 when unknown, so shares stay finite).
	cpus int
	// busy is the host's user+system CPU share, in percent of all CPUs.
	busy float64
	// engineCPU is the engine's CPU in percent of one core: its process
	// tree where that was sampled, else its main process.
	engineCPU float64
	// commitComp is the component commits wait for, on tier commitTier.
	commitComp, commitTier string
	// load is the load generator's CPU, nil when not recorded.
	load *telemetry.LoadGenSummary
}

func newView(r *results.Run, st *results.Study) *view {
	t := r.Telemetry
	v := &view{r: r, st: st, t: t, cpus: max(st.Env.CPUs, 1), busy: t.Host.CPUUserPct + t.Host.CPUSysPct,
		engineCPU: t.Engine.CPUPct, load: t.LoadGen}
	if t.Engine.TreeCPUPct > 0 {
		v.engineCPU = t.Engine.TreeCPUPct
	}
	// A commit waits for the commit log's writes, or the data's where the
	// engine keeps no log of its own (Redis's append-only file).
	var ok bool
	if v.commitComp, v.commitTier, ok = st.ComponentWith(*r, engine.RoleCommitLog); !ok {
		v.commitComp, v.commitTier, _ = st.ComponentWith(*r, engine.RoleData)
	}
	return v
}

// durability is the mode the engine ran in.
func (v *view) durability() string {
	if v.r.AppliedDurability != "" {
		return v.r.AppliedDurability
	}
	return v.r.Durability
}

// sampled reports whether the engine's sync calls were sampled.
func (v *view) sampled() bool { return v.t.SyncSamples > 0 }

// sharers names the other components whose tier sits on the same device as
// the commit tier: their writes and flushes share its queue and counters.
// The commit component's own kin (Ignite's wal_archive, which on the WAL's
// tier is the WAL's folder) are not others.
func (v *view) sharers() []string {
	dev := v.t.Tiers[v.commitTier].Device
	var out []string
	for c, tier := range v.r.Components {
		if c == v.commitComp || strings.HasPrefix(c, v.commitComp+"_") {
			continue
		}
		if tier == v.commitTier || (dev != "" && v.t.Tiers[tier].Device == dev) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// cpuEvidence is the CPU figures every sentence may rest on.
func (v *view) cpuEvidence(ev map[string]float64) {
	ev["cpu_busy_pct"] = v.busy
	ev["cpus"] = float64(v.cpus)
	if v.engineCPU > 0 {
		ev["engine_cpu_pct"] = v.engineCPU
	}
	if w := v.t.Engine.CPUWaitPct; w > 0 {
		ev["engine_cpu_wait_pct"] = w
	}
	if s := v.t.Host.CPUStealPct; s > 0 {
		ev["cpu_steal_pct"] = s
	}
	if l := v.separateLoad(); l != nil {
		ev["load_cpu_pct"] = l.CPUPct
		if l.CPUUsPerOp > 0 {
			ev["load_cpu_us_per_op"] = l.CPUUsPerOp
		}
	}
}

// separateLoad is the load generator's CPU when it ran in processes of
// its own; nil when unknown or inside the engine's process, where the two
// cannot be told apart.
func (v *view) separateLoad() *telemetry.LoadGenSummary {
	if v.load == nil || v.load.SharesEngine {
		return nil
	}
	return v.load
}

// loadText says how much of the busy CPU a separate load generator used,
// and whether other processes used more than it and the engine together;
// when the load generator used a good part of it, how to give the engine
// its CPU back. When driver and engine share a process, it says so rather
// than split their CPU.
func (v *view) loadText() string {
	others, known, text := "the load generator, other engine nodes or the rest of the host", v.engineCPU, ""
	share := 0.0
	if l := v.separateLoad(); l != nil {
		others, known = "other engine nodes or the rest of the host", known+l.CPUPct
		share = l.CPUPct / (v.busy * float64(v.cpus))
		if v.engineCPU > 0 {
			text += fmt.Sprintf(" and the load generator (%s) %.0f%%", l.Name, l.CPUPct)
		} else {
			text += fmt.Sprintf(", the load generator (%s) using %.0f%% of one core", l.Name, l.CPUPct)
		}
		text += fmt.Sprintf(", %.0f%% of the busy CPU", 100*share)
		if l.CPUUsPerOp > 0 {
			text += fmt.Sprintf(" (%.0f µs per op)", l.CPUUsPerOp)
		}
	}
	if v.load != nil && v.load.SharesEngine {
		others = "other engine nodes or the rest of the host"
	}
	if known > 0 && known/float64(v.cpus) < othersShare*v.busy {
		text += " (other processes used more: " + others + ")"
	}
	if share >= loadGenShare {
		text += ": run the driver on another host or give it its own cores"
	}
	if v.load != nil && v.load.SharesEngine {
		text += fmt.Sprintf("; the engine runs inside %s's process with the load generator, so their shares of its CPU cannot be told apart", v.load.Name)
	}
	return text
}

// ceilingText compares the device's flush rate with the tier's probed sync
// ceiling.
func ceilingText(ts telemetry.TierSummary, frac, ceiling float64) string {
	rate, what := ts.FlushesPerS, "flushes/s"
	if rate == 0 {
		rate, what = ts.WriteIOPS, "writes/s" // kernels before 5.5 count no flushes
	}
	return fmt.Sprintf("%.0f %s, %.0f%% of the tier's probed sync ceiling of %.0f/s", rate, what, 100*frac, ceiling)
}

// deviceWriteAwait is the device's write await; runs stored before await
// was split by direction have only the mean of reads and writes.
func deviceWriteAwait(ts telemetry.TierSummary) float64 {
	if ts.WriteAwaitMs == 0 && ts.ReadAwaitMs == 0 {
		return ts.AwaitMs
	}
	return ts.WriteAwaitMs
}

// deviceWait is the share of wall time a commit path waits on device ts:
// each synced commit needs at least one write and then a flush to
// complete, one after the other, so flushes/s x (flush await + write
// await) is a lower bound (ext4's fdatasync is a chain of two writes and a
// flush). Kernels before 5.5 count no flushes: writes/s x write await then
// stands in. Several processes syncing on one device (Ignite's nodes) add
// up here, while the sampled share is the watched process's alone. Capped
// at 1. what names the rate used.
func deviceWait(ts telemetry.TierSummary) (share float64, what string) {
	lw := deviceWriteAwait(ts)
	if ts.FlushesPerS > 0 {
		share, what = ts.FlushesPerS*(ts.FlushAwaitMs+lw)/1000, "flushes"
	} else {
		share, what = ts.WriteIOPS*lw/1000, "writes"
	}
	return min(share, 1), what
}

// fsyncBound checks whether synced commits spend their time waiting on the
// commit tier's device: the engine's sampled waits in fsync on the WAL's
// files, the device's flush rate and latencies, and, when the tier was
// probed, its flush rate against the probed sync ceiling.
func fsyncBound(v *view) *results.Bottleneck {
	if v.durability() != "sync" || v.commitComp == "" {
		return nil
	}
	ts, ok := v.t.Tiers[v.commitTier]
	if !ok || ts.Device == "" {
		return nil // tmpfs: fsync returns at once, nothing waits on a device
	}
	comp := v.commitComp
	ev := map[string]float64{"flushes_per_s": ts.FlushesPerS, "flush_await_ms": ts.FlushAwaitMs,
		"write_iops": ts.WriteIOPS, "write_await_ms": deviceWriteAwait(ts), "device_util_pct": ts.UtilPct}
	v.cpuEvidence(ev)
	dev, what := deviceWait(ts)
	ev["device_wait_pct"] = 100 * dev
	share := dev
	if v.sampled() {
		sw := v.t.SyncWait[comp].WaitPct
		ev[comp+"_sync_wait_pct"] = sw
		share = sw / 100
		if sw >= syncSampledMinPct {
			share = max(share, dev)
		}
	}
	ceilingFrac, ceiling, probedUs := 0.0, 0.0, 0.0
	if p := v.st.Probes[v.commitTier]; p != nil && p.Tier.Fio != nil && p.Tier.Fio.SyncCeilingPerS > 0 {
		ceiling, probedUs = p.Tier.Fio.SyncCeilingPerS, p.Tier.Fio.FsyncLat.P50
		rate := ts.FlushesPerS
		if rate == 0 {
			rate = ts.WriteIOPS
		}
		ceilingFrac = rate / ceiling
		ev["sync_ceiling_per_s"], ev["ceiling_pct"] = ceiling, 100*ceilingFrac
		if probedUs > 0 {
			ev["probed_fsync_p50_us"] = probedUs
		}
	}
	if share < fsyncWaitShare && ceilingFrac < ceilingShare {
		return nil
	}
	where := ts.Device
	if s := v.sharers(); len(s) > 0 {
		where += ", shared with " + strings.Join(s, ", ")
	}
	var parts []string
	if ceilingFrac >= ceilingShare && share < fsyncWaitShare {
		parts = append(parts, ceilingText(ts, ceilingFrac, ceiling))
	}
	switch {
	case dev == 0:
	case what == "flushes":
		parts = append(parts, fmt.Sprintf("%.0f flushes/s x (%.2f ms flush + %.2f ms write await) = %.0f%% of wall time waiting on the device",
			ts.FlushesPerS, ts.FlushAwaitMs, deviceWriteAwait(ts), 100*dev))
	default:
		parts = append(parts, fmt.Sprintf("%.0f writes/s x %.2f ms await = %.0f%% of wall time waiting on the device (no flush counts)",
			ts.WriteIOPS, deviceWriteAwait(ts), 100*dev))
	}
	if v.sampled() {
		parts = append(parts, fmt.Sprintf("the engine was inside a sync call on %s files %.0f%% of the time", upper(comp), v.t.SyncWait[comp].WaitPct))
	}
	if ceiling > 0 && !(ceilingFrac >= ceilingShare && share < fsyncWaitShare) {
		parts = append(parts, ceilingText(ts, ceilingFrac, ceiling))
	}
	if perSync := ts.FlushAwaitMs + deviceWriteAwait(ts); probedUs > 0 && ts.FlushesPerS > 0 && perSync*1000 >= slowSyncFactor*probedUs {
		// Far slower than the idle device: its syncs queue behind other
		// I/O (the sharers' writes) or wait for a CPU; the figures say
		// how much, not which.
		parts = append(parts, fmt.Sprintf("each sync's write and flush took %.2f ms on the device, %.0fx the probed fsync p50 of %.0f µs",
			perSync, perSync*1000/probedUs, probedUs))
	}
	if v.busy >= cpuBusyPct {
		parts = append(parts, fmt.Sprintf("host CPUs also %.0f%% busy, so a faster WAL tier helps only until they are full", v.busy))
	}
	return &results.Bottleneck{Kind: BoundFsync, Tier: v.commitTier, FractionOfCeiling: max(ceilingFrac, share), Evidence: ev,
		Text: fmt.Sprintf("%s fsync-bound on tier %s (%s): %s", upper(comp), v.commitTier, where, strings.Join(parts, "; "))}
}

// commitFlushNote says, for a synced run whose commit tier's device
// flushed, how much the commits waited on it by the device's figures, and
// adds them to ev; "" otherwise. Below the fsync threshold (or in runs
// stored before the figures that reach it), a reader comparing placements
// still needs to know the commits waited on a device.
func (v *view) commitFlushNote(ev map[string]float64) string {
	ts, ok := v.t.Tiers[v.commitTier]
	if !ok || v.durability() != "sync" || ts.Device == "" || ts.FlushesPerS <= 0 {
		return ""
	}
	if v.sampled() && v.t.SyncWait[v.commitComp].WaitPct < syncSampledMinPct {
		return "" // the engine hardly synced: the flushes are someone else's
	}
	dev, _ := deviceWait(ts)
	ev["flushes_per_s"], ev["device_wait_pct"] = ts.FlushesPerS, 100*dev
	return fmt.Sprintf("synced commits also waited on %s's device %s (%.0f flushes/s, at least %.0f%% of wall time by its figures)",
		upper(v.commitComp), ts.Device, ts.FlushesPerS, 100*dev)
}

// cpuBound checks whether the host's CPUs were saturated, and says whose
// work filled them: a busy host limits the engine whether its own threads
// or other processes (the load generator, other nodes, neighbours) use it.
func cpuBound(v *view) *results.Bottleneck {
	if v.busy < cpuBusyPct {
		return nil
	}
	ev := map[string]float64{}
	v.cpuEvidence(ev)
	text := fmt.Sprintf("CPU-bound: the host's %d cores were %.0f%% busy", v.cpus, v.busy)
	if v.engineCPU > 0 {
		text += fmt.Sprintf(", the engine's process using %.0f%% of one core", v.engineCPU)
	}
	text += v.loadText()
	if w := v.t.Engine.CPUWaitPct; w >= 10 {
		text += fmt.Sprintf("; its threads waited for a CPU %.0f%% of one thread's time", w)
	}
	if s := v.t.Host.CPUStealPct; s >= 5 {
		text += fmt.Sprintf("; the hypervisor stole %.0f%%", s)
	}
	if note := v.commitFlushNote(ev); note != "" {
		text += "; " + note
	}
	return &results.Bottleneck{Kind: BoundCPU, FractionOfCeiling: v.busy / 100, Evidence: ev, Text: text}
}

// deviceBound checks each tier's device against its probed IOPS and
// bandwidth, and its utilisation, and names the one nearest its limit.
// memoryBound names a run whose memory limit (the study's memory) was full
// while the engine read its data from the device: what it could not keep
// in memory it fetched again. A full limit with nothing read back is not
// a limit on this run (a page cache of writes, reclaimed for free).
func memoryBound(v *view) *results.Bottleneck {
	m := v.t.Memory
	if m == nil || m.LimitBytes <= 0 || float64(m.PeakBytes) < memoryFullShare*float64(m.LimitBytes) {
		return nil
	}
	_, dataTier, _ := v.st.ComponentWith(*v.r, engine.RoleData)
	reads := v.t.Tiers[dataTier].ReadIOPS
	if reads < memoryReadsPerS && m.MajorFaultsPerS < memoryReadsPerS {
		return nil
	}
	ev := map[string]float64{"memory_limit_bytes": float64(m.LimitBytes), "memory_peak_bytes": float64(m.PeakBytes),
		"page_cache_bytes": float64(m.CacheBytes), "major_faults_per_s": m.MajorFaultsPerS, "data_read_iops": reads}
	v.cpuEvidence(ev)
	return &results.Bottleneck{Kind: BoundMemory, Tier: dataTier, FractionOfCeiling: float64(m.PeakBytes) / float64(m.LimitBytes), Evidence: ev,
		Text: fmt.Sprintf("memory-bound: the engine's %s limit was full (%s of it page cache); it read %.0f times/s from tier %s's device and took %.0f major faults/s",
			humanize.IBytes(uint64(m.LimitBytes)), humanize.IBytes(uint64(m.CacheBytes)), reads, dataTier, m.MajorFaultsPerS)}
}

func deviceBound(v *view) *results.Bottleneck {
	var best *results.Bottleneck
	consider := func(b *results.Bottleneck) {
		if best == nil || b.FractionOfCeiling > best.FractionOfCeiling {
			best = b
		}
	}
	for _, name := range slices.Sorted(maps.Keys(v.t.Tiers)) {
		ts := v.t.Tiers[name]
		if ts.Device == "" {
			continue
		}
		ev := func(extra map[string]float64) map[string]float64 {
			m := map[string]float64{"device_util_pct": ts.UtilPct, "write_iops": ts.WriteIOPS, "write_mbps": ts.WriteMBps,
				"await_ms": ts.AwaitMs}
			maps.Copy(m, extra)
			v.cpuEvidence(m)
			return m
		}
		if p := v.st.Probes[name]; p != nil && p.Tier.Fio != nil {
			f := p.Tier.Fio
			if f.SeqWriteMBps > 0 && ts.WriteMBps/f.SeqWriteMBps >= ceilingShare {
				frac := ts.WriteMBps / f.SeqWriteMBps
				consider(&results.Bottleneck{Kind: BoundBandwidth, Tier: name, FractionOfCeiling: frac,
					Evidence: ev(map[string]float64{"probed_write_mbps": f.SeqWriteMBps, "ceiling_pct": 100 * frac}),
					Text:     fmt.Sprintf("write-bandwidth-bound on tier %s: %.0f MB/s, %.0f%% of its probed %.0f MB/s", name, ts.WriteMBps, 100*frac, f.SeqWriteMBps)})
			}
			if f.RandWriteQD32.IOPS > 0 && ts.WriteIOPS/f.RandWriteQD32.IOPS >= ceilingShare {
				frac := ts.WriteIOPS / f.RandWriteQD32.IOPS
				consider(&results.Bottleneck{Kind: BoundIOPS, Tier: name, FractionOfCeiling: frac,
					Evidence: ev(map[string]float64{"probed_write_iops": f.RandWriteQD32.IOPS, "ceiling_pct": 100 * frac}),
					Text:     fmt.Sprintf("write-IOPS-bound on tier %s: %.0f IOPS, %.0f%% of its probed %.0f", name, ts.WriteIOPS, 100*frac, f.RandWriteQD32.IOPS)})
			}
		}
		if ts.UtilPct >= deviceBusyPct {
			consider(&results.Bottleneck{Kind: BoundIOPS, Tier: name, FractionOfCeiling: ts.UtilPct / 100, Evidence: ev(nil),
				Text: fmt.Sprintf("device-bound on tier %s: %s busy %.0f%% of the time, await %.2f ms", name, ts.Device, ts.UtilPct, ts.AwaitMs)})
		}
	}
	return best
}

// notBound describes a run no rule fired for. It says "not device-bound"
// only when no component's files were synced for long and no device was
// busy ("not storage-bound" when no tier has a device); otherwise it lists
// the figures without naming a limit. Background
// syncs (a memtable flush's) do not block commits, yet on the default
// study all-ram still ran 1.3-1.4x faster than wal-ram where the data's
// syncs took 12-17% of the time, so they are not called harmless.
func notBound(v *view) *results.Bottleneck {
	ev := map[string]float64{}
	v.cpuEvidence(ev)
	var parts []string
	cpu := fmt.Sprintf("CPU %.0f%% busy", v.busy)
	if v.engineCPU > 0 {
		cpu += fmt.Sprintf(" (engine %.0f%% of one core", v.engineCPU)
		if l := v.separateLoad(); l != nil {
			cpu += fmt.Sprintf(", load generator %s %.0f%%", l.Name, l.CPUPct)
		}
		cpu += ")"
	}
	parts = append(parts, cpu)
	maxSync := 0.0
	if v.sampled() {
		var waits []string
		for _, c := range slices.Sorted(maps.Keys(v.t.SyncWait)) {
			w := v.t.SyncWait[c].WaitPct
			maxSync = max(maxSync, w)
			if c != v.commitComp && w < quietSyncPct {
				continue
			}
			ev[c+"_sync_wait_pct"] = w
			waits = append(waits, fmt.Sprintf("%s %.0f%%", upper(c), w))
		}
		if len(waits) > 0 {
			parts = append(parts, "time in sync calls: "+strings.Join(waits, ", "))
		}
	}
	busiest, util := "", -1.0
	var bts telemetry.TierSummary
	for _, name := range slices.Sorted(maps.Keys(v.t.Tiers)) {
		if ts := v.t.Tiers[name]; ts.Device != "" && ts.UtilPct > util {
			busiest, util, bts = name, ts.UtilPct, ts
		}
	}
	if busiest == "" {
		parts = append(parts, "no tier has a block device to watch")
	} else {
		ev["device_util_pct"], ev["await_ms"], ev["flushes_per_s"] = bts.UtilPct, bts.AwaitMs, bts.FlushesPerS
		parts = append(parts, fmt.Sprintf("busiest device %s (%s) %.0f%% utilised, await %.2f ms", busiest, bts.Device, util, bts.AwaitMs))
	}
	// "Not device-bound", not "not storage-bound": a filesystem on a device
	// costs CPU that tmpfs does not (all-ram ran 1.1-1.3x faster than
	// all-disk without a busy device in the default study's nosync rows).
	head := "not device-bound"
	if busiest == "" {
		head = "not storage-bound"
	}
	if note := v.commitFlushNote(ev); note != "" {
		parts = append(parts, note)
		head = "no single limit found"
	}
	if maxSync >= quietSyncPct || util >= quietUtilPct {
		head = "no single limit found"
	}
	return &results.Bottleneck{Kind: BoundNone, Evidence: ev, Text: head + ": " + strings.Join(parts, ", ")}
}

// upper writes a component's short name as the abbreviation it is: WAL,
// DB.
func upper(s string) string {
	if len(s) <= 3 {
		return strings.ToUpper(s)
	}
	return s
}

// clusterUnknown is the sentence of a run on a cluster: a kubelet reports
// its pods' CPU and memory, not the devices or fsync waits the rules
// need, so it names no bottleneck and says what it saw.
func clusterUnknown(t *telemetry.Summary) *results.Bottleneck {
	var saw []string
	if t.Engine.CPUPct > 0 || t.Engine.RSSBytesMax > 0 {
		saw = append(saw, fmt.Sprintf("the engine's pod used %.0f%% of one core (working set up to %s)", t.Engine.CPUPct, humanize.IBytes(t.Engine.RSSBytesMax)))
	}
	if t.LoadGen != nil {
		saw = append(saw, fmt.Sprintf("the load generator's pod %.0f%%", t.LoadGen.CPUPct))
	}
	text := "unknown on a cluster: the kubelet reports no device I/O or fsync waits to name a bottleneck from"
	if len(saw) > 0 {
		text += "; " + strings.Join(saw, ", ")
	}
	if len(t.Errors) > 0 {
		text += "; unavailable: " + strings.Join(t.Errors, "; ")
	}
	return &results.Bottleneck{Kind: BoundNone, Text: text}
}
