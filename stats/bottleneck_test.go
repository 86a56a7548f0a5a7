package stats

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tier/probe"
)

// The figures below are recorded telemetry of real runs of the default
// study on a 2-core VM with a virtio disk (vda), unless a case says it is
// made up to reach a rule.
var (
	// all-disk sync c=1 (4922 flushes/s; wal-ram ran 5.1x faster).
	diskSyncC1 = telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{WriteIOPS: 10132, WriteAwaitMs: 0.06, FlushesPerS: 4922,
		FlushAwaitMs: 0.07, UtilPct: 60, AwaitMs: 0.06}}
	// all-disk sync c=16 (wal-ram 2.1x faster).
	diskSyncC16 = telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{WriteIOPS: 4084, WriteAwaitMs: 0.10, FlushesPerS: 1881,
		FlushAwaitMs: 0.14, UtilPct: 38}}
	// wal-ram nosync c=16 on a busy host: another process's fsyncs on vda.
	neighbourFlushes = telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{WriteIOPS: 2080, WriteAwaitMs: 0.11, FlushesPerS: 687,
		FlushAwaitMs: 0.9, UtilPct: 24}}
	// all-disk sync c=1 as stored before flush latency was recorded: only
	// the mean await of reads and writes (wal-ram ran 15.6x faster).
	oldDiskSyncC1 = telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{WriteIOPS: 1971, WriteMBps: 4.4, AwaitMs: 0.14, UtilPct: 22,
		FlushesPerS: 872}}
	quietHost = telemetry.HostSummary{CPUUserPct: 28, CPUSysPct: 14}
	// Ignite FSYNC, 3 nodes and 128 client threads on 2 cores, WAL and
	// persistence on one RAM-backed loop device probed at 21823 syncs/s
	// (fsync p50 45.8 µs), on a host busy with other work.
	igniteFast1 = telemetry.TierSummary{Device: "loop0", DiskRates: telemetry.DiskRates{WriteIOPS: 248, WriteAwaitMs: 4.11, FlushesPerS: 116,
		FlushAwaitMs: 1.33, UtilPct: 45}}
)

func TestAttribute(t *testing.T) {
	probed := &results.Study{Env: hostenv.Env{CPUs: 2}, Probes: map[string]*results.Probe{
		"disk": {Tier: probe.Tier{Fio: &probe.Fio{SyncCeilingPerS: 1000, SeqWriteMBps: 500, RandWriteQD32: probe.IOResult{IOPS: 50000}}}},
	}}
	unprobed := &results.Study{Env: hostenv.Env{CPUs: 2}}
	allDisk := map[string]string{"data": "disk", "wal": "disk"}
	walRAM := map[string]string{"data": "disk", "wal": "ram"}
	// run builds a run of placement comps whose tiers show the given
	// figures; sync maps components to sampled sync-wait percentages (nil:
	// not sampled, as runs stored before sampling existed).
	run := func(durability string, comps map[string]string, host telemetry.HostSummary, engine telemetry.EngineSummary,
		disk telemetry.TierSummary, sync map[string]float64) *results.Run {
		s := &telemetry.Summary{Host: host, Engine: engine,
			Tiers: map[string]telemetry.TierSummary{"disk": disk, "ram": {}}}
		if sync != nil {
			s.SyncSamples, s.SyncWait = 250, map[string]telemetry.SyncWait{}
			for c, pct := range sync {
				s.SyncWait[c] = telemetry.SyncWait{WaitPct: pct}
			}
		}
		return &results.Run{Durability: durability, Components: comps, Telemetry: s}
	}
	engine := telemetry.EngineSummary{CPUPct: 51, TreeCPUPct: 51, CPUWaitPct: 24}
	cases := []struct {
		name      string
		st        *results.Study
		run       *results.Run
		kind      string
		fragments []string
		evidence  map[string]float64 // keys that must be there, with their values (rounded)
	}{
		{"fsync from device figures and sampled waits", unprobed,
			run("sync", allDisk, quietHost, engine, diskSyncC1, map[string]float64{"wal": 17, "data": 0}), BoundFsync,
			[]string{"WAL fsync-bound on tier disk (vda, shared with data)", "4922 flushes/s x (0.07 ms flush + 0.06 ms write await) = 64% of wall time", "sync call on WAL files 17%"},
			map[string]float64{"flushes_per_s": 4922, "flush_await_ms": 0.07, "write_await_ms": 0.06, "wal_sync_wait_pct": 17, "device_wait_pct": 64, "cpu_busy_pct": 42, "engine_cpu_pct": 51}},
		{"fsync at 16 clients with group commit", unprobed,
			run("sync", allDisk, telemetry.HostSummary{CPUUserPct: 60, CPUSysPct: 23}, engine, diskSyncC16, map[string]float64{"wal": 21}), BoundFsync,
			[]string{"= 45% of wall time"}, map[string]float64{"device_wait_pct": 45}},
		{"fsync from sampled waits when the device looks idle (made up)", unprobed,
			run("sync", allDisk, quietHost, engine, telemetry.TierSummary{Device: "nvme0n1", DiskRates: telemetry.DiskRates{FlushesPerS: 100, FlushAwaitMs: 0.02, WriteAwaitMs: 0.02}}, map[string]float64{"wal": 54}),
			BoundFsync, []string{"sync call on WAL files 54%"}, map[string]float64{"wal_sync_wait_pct": 54}},
		{"a busy CPU is named beside fsync", unprobed,
			run("sync", allDisk, telemetry.HostSummary{CPUUserPct: 70, CPUSysPct: 21}, engine, diskSyncC1, map[string]float64{"wal": 30}),
			BoundFsync, []string{"host CPUs also 91% busy"}, nil},
		{"fsync from device figures alone for runs not sampled", unprobed,
			run("sync", allDisk, quietHost, engine, diskSyncC16, nil), BoundFsync, []string{"1881 flushes/s"}, map[string]float64{"device_wait_pct": 45}},
		{"another process's flushes do not make the WAL fsync-bound", unprobed,
			run("sync", allDisk, quietHost, engine, neighbourFlushes, map[string]float64{"wal": 3}), BoundNone,
			[]string{"not device-bound", "time in sync calls: WAL 3%"}, map[string]float64{"wal_sync_wait_pct": 3}},
		{"fsync from the probed ceiling", probed,
			run("sync", allDisk, quietHost, engine, telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{FlushesPerS: 910}}, nil), BoundFsync,
			[]string{"WAL fsync-bound on tier disk (vda, shared with data): 910 flushes/s, 91% of the tier's probed sync ceiling of 1000/s"},
			map[string]float64{"sync_ceiling_per_s": 1000, "ceiling_pct": 91}},
		{"CPU full and syncs far slower than probed: both named", &results.Study{Env: hostenv.Env{CPUs: 2}, Probes: map[string]*results.Probe{
			"disk": {Tier: probe.Tier{Fio: &probe.Fio{SyncCeilingPerS: 21823, FsyncLat: probe.Latency{P50: 45.8}}}}}},
			run("sync", map[string]string{"persistence": "disk", "wal": "disk", "wal_archive": "disk"}, telemetry.HostSummary{CPUUserPct: 80, CPUSysPct: 20},
				telemetry.EngineSummary{CPUPct: 28, TreeCPUPct: 28, CPUWaitPct: 326}, igniteFast1, map[string]float64{"wal": 37}),
			BoundFsync, []string{"WAL fsync-bound on tier disk (loop0, shared with persistence)", "= 63% of wall time",
				"1% of the tier's probed sync ceiling of 21823/s", "each sync's write and flush took 5.44 ms on the device, 119x the probed fsync p50 of 46 µs",
				"host CPUs also 100% busy"}, map[string]float64{"sync_ceiling_per_s": 21823, "probed_fsync_p50_us": 45.8, "wal_sync_wait_pct": 37, "cpu_busy_pct": 100}},
		{"far below the probed ceiling with CPU to spare: fsync latency", &results.Study{Env: hostenv.Env{CPUs: 2}, Probes: map[string]*results.Probe{
			"disk": {Tier: probe.Tier{Fio: &probe.Fio{SyncCeilingPerS: 21823}}}}},
			run("sync", allDisk, quietHost, engine, diskSyncC1, map[string]float64{"wal": 17}),
			BoundFsync, []string{"WAL fsync-bound", "23% of the tier's probed sync ceiling"}, nil},
		{"ceiling from writes on kernels without flush counts", probed,
			run("sync", allDisk, quietHost, engine, telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{WriteIOPS: 800}}, nil), BoundFsync,
			[]string{"800 writes/s, 80%"}, nil},
		{"nosync is never fsync-bound", unprobed,
			run("nosync", allDisk, quietHost, engine, diskSyncC1, map[string]float64{"wal": 40}), BoundNone, []string{"no single limit found"}, nil},
		{"a WAL on tmpfs waits on no device", unprobed,
			run("sync", walRAM, quietHost, engine, diskSyncC16, map[string]float64{"wal": 0, "data": 4}), BoundNone,
			[]string{"not device-bound", "WAL 0%"}, nil},
		{"background syncs are listed and keep the sentence from saying not device-bound", unprobed,
			run("sync", walRAM, quietHost, engine, diskSyncC16, map[string]float64{"wal": 0, "data": 12}), BoundNone,
			[]string{"no single limit found", "data 12%", "WAL 0%"}, map[string]float64{"data_sync_wait_pct": 12}},
		{"old run: too little for fsync, the flushes are still named", unprobed,
			run("sync", allDisk, telemetry.HostSummary{CPUUserPct: 70, CPUSysPct: 24}, telemetry.EngineSummary{CPUPct: 16}, oldDiskSyncC1, nil),
			BoundCPU, []string{"CPU-bound: the host's 2 cores were 94% busy", "other processes used more", "synced commits also waited on WAL's device vda (872 flushes/s, at least 12% of wall time"},
			map[string]float64{"flushes_per_s": 872, "engine_cpu_pct": 16}},
		{"CPU used by the engine", unprobed,
			run("nosync", walRAM, telemetry.HostSummary{CPUUserPct: 70, CPUSysPct: 24}, telemetry.EngineSummary{CPUPct: 187, TreeCPUPct: 187}, neighbourFlushes, nil),
			BoundCPU, []string{"94% busy, the engine's process using 187% of one core"}, map[string]float64{"engine_cpu_pct": 187}},
		{"CPU wait and steal are named", unprobed,
			run("nosync", walRAM, telemetry.HostSummary{CPUUserPct: 60, CPUSysPct: 34, CPUStealPct: 7}, telemetry.EngineSummary{CPUPct: 87, TreeCPUPct: 87, CPUWaitPct: 124}, neighbourFlushes, nil),
			BoundCPU, []string{"waited for a CPU 124%", "hypervisor stole 7%"}, map[string]float64{"engine_cpu_wait_pct": 124, "cpu_steal_pct": 7}},
		{"bandwidth (made up)", probed, run("nosync", allDisk, quietHost, engine, telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{WriteMBps: 450}}, nil),
			BoundBandwidth, []string{"90% of its probed 500 MB/s"}, map[string]float64{"probed_write_mbps": 500}},
		{"iops (made up)", probed, run("nosync", allDisk, quietHost, engine, telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{WriteIOPS: 40000}}, nil),
			BoundIOPS, []string{"80% of its probed 50000"}, nil},
		{"busy device without probe figures (made up)", unprobed,
			run("nosync", allDisk, quietHost, engine, telemetry.TierSummary{Device: "nvme0n1", DiskRates: telemetry.DiskRates{UtilPct: 97, AwaitMs: 3}}, nil),
			BoundIOPS, []string{"nvme0n1 busy 97% of the time, await 3.00 ms"}, map[string]float64{"device_util_pct": 97}},
		{"no block device", unprobed, run("nosync", map[string]string{"data": "ram", "wal": "ram"}, quietHost, engine, telemetry.TierSummary{}, nil),
			BoundNone, []string{"not storage-bound: CPU 42% busy (engine 51% of one core), no tier has a block device"}, nil},
		{"no telemetry", unprobed, &results.Run{Durability: "sync"}, BoundNone, []string{"no telemetry"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkAttribution(t, Attribute(tc.run, tc.st), tc.kind, tc.fragments, nil, tc.evidence)
		})
	}
}

// checkAttribution asserts a bottleneck's kind, the fragments its sentence
// has and has not, and the evidence it rests on.
func checkAttribution(t *testing.T, b *results.Bottleneck, kind string, fragments, absent []string, evidence map[string]float64) {
	t.Helper()
	if b.Kind != kind {
		t.Errorf("kind %s, want %s: %q", b.Kind, kind, b.Text)
	}
	for _, f := range fragments {
		if !strings.Contains(b.Text, f) {
			t.Errorf("%q lacks %q", b.Text, f)
		}
	}
	for _, f := range absent {
		if strings.Contains(b.Text, f) {
			t.Errorf("%q has %q", b.Text, f)
		}
	}
	for k, want := range evidence {
		if got, ok := b.Evidence[k]; !ok || !near(got, want) {
			t.Errorf("evidence %s = %v (present %v), want %v; all: %v", k, got, ok, want, b.Evidence)
		}
	}
}

// near compares evidence to the precision a sentence prints it with.
func near(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 0.5 || d <= 0.01*max(a, b)
}

// TestExplainRecomputesFromTelemetry: the sentence shown is computed from
// the stored telemetry, not the one stored with the run; a run without
// telemetry keeps its stored sentence, and failed runs get none.
func TestExplainRecomputesFromTelemetry(t *testing.T) {
	st := &results.Study{Env: hostenv.Env{CPUs: 2}}
	stale := &results.Bottleneck{Kind: BoundNone, Text: "not storage-bound: CPU at 25%, busiest device disk (vda) at 55% utilisation"}
	runs := []results.Run{
		{Status: results.RunOK, Durability: "sync", Components: map[string]string{"wal": "disk"}, Bottleneck: stale,
			Telemetry: &telemetry.Summary{Host: quietHost, Tiers: map[string]telemetry.TierSummary{"disk": diskSyncC16}}},
		{Status: results.RunOK, Durability: "sync", Bottleneck: stale},
		{Status: results.RunOK, Durability: "sync"},
		{Status: results.RunFailed, Error: "tier tiny full"},
	}
	got := Explain(st, runs)
	if got[0].Bottleneck.Kind != BoundFsync || len(got[0].Bottleneck.Evidence) == 0 {
		t.Errorf("run with telemetry: %+v, want fsync with evidence", got[0].Bottleneck)
	}
	if got[1].Bottleneck != stale {
		t.Errorf("run without telemetry: %+v, want the stored sentence", got[1].Bottleneck)
	}
	if got[2].Bottleneck == nil || !strings.Contains(got[2].Bottleneck.Text, "no telemetry") {
		t.Errorf("run without telemetry or sentence: %+v", got[2].Bottleneck)
	}
	if got[3].Bottleneck != nil {
		t.Errorf("failed run: %+v, want none", got[3].Bottleneck)
	}
	if runs[0].Bottleneck != stale {
		t.Error("Explain changed its input")
	}
}

// TestAttributeLoadGenerator: the load generator's CPU is named in the
// sentence when it was recorded, with the fix when it used a good part of
// a full host, and never split from the engine's when they share a process.
func TestAttributeLoadGenerator(t *testing.T) {
	st := &results.Study{Env: hostenv.Env{CPUs: 2}}
	fullHost := telemetry.HostSummary{CPUUserPct: 70, CPUSysPct: 28}
	run := func(host telemetry.HostSummary, engine telemetry.EngineSummary, load *telemetry.LoadGenSummary) *results.Run {
		return &results.Run{Durability: "async", Components: map[string]string{"data": "ram", "wal": "ram"},
			Telemetry: &telemetry.Summary{Host: host, Engine: engine, LoadGen: load, Tiers: map[string]telemetry.TierSummary{"ram": {}}}}
	}
	pgbench := &telemetry.LoadGenSummary{Name: "pgbench", CPUSeconds: 4.8, CPUPct: 80, CPUUsPerOp: 95}
	cases := []struct {
		name      string
		run       *results.Run
		kind      string
		fragments []string
		absent    []string
		evidence  map[string]float64
	}{
		{"a load generator using a good part of a full host, with the fix",
			run(fullHost, telemetry.EngineSummary{CPUPct: 12, TreeCPUPct: 110}, pgbench), BoundCPU,
			[]string{"CPU-bound: the host's 2 cores were 98% busy, the engine's process using 110% of one core and the load generator (pgbench) 80%, 41% of the busy CPU (95 µs per op): run the driver on another host or give it its own cores"},
			[]string{"other processes used more"},
			map[string]float64{"load_cpu_pct": 80, "load_cpu_us_per_op": 95, "engine_cpu_pct": 110}},
		{"a light load generator is named without the fix",
			run(fullHost, telemetry.EngineSummary{TreeCPUPct: 170}, &telemetry.LoadGenSummary{Name: "tierbench", CPUPct: 20}), BoundCPU,
			[]string{"and the load generator (tierbench) 20%, 10% of the busy CPU"}, []string{"run the driver", "µs per op"},
			map[string]float64{"load_cpu_pct": 20}},
		{"engine and load generator together far below the busy CPU: others used more",
			run(telemetry.HostSummary{CPUUserPct: 70, CPUSysPct: 24}, telemetry.EngineSummary{CPUPct: 16}, &telemetry.LoadGenSummary{Name: "sysbench", CPUPct: 20}), BoundCPU,
			[]string{"(other processes used more: other engine nodes or the rest of the host)"}, []string{"the load generator, other"}, nil},
		{"a load generator without the engine's figure",
			run(fullHost, telemetry.EngineSummary{}, pgbench), BoundCPU,
			[]string{"98% busy, the load generator (pgbench) using 80% of one core, 41% of the busy CPU"}, nil, nil},
		{"an in-process engine shares tierbench's process: not split",
			run(fullHost, telemetry.EngineSummary{CPUPct: 190}, &telemetry.LoadGenSummary{Name: "tierbench", CPUPct: 190, SharesEngine: true}), BoundCPU,
			[]string{"the engine's process using 190% of one core; the engine runs inside tierbench's process with the load generator, so their shares of its CPU cannot be told apart"},
			[]string{"run the driver", "of the busy CPU"}, map[string]float64{"engine_cpu_pct": 190}},
		{"a quiet host names the load generator beside the engine",
			run(quietHost, telemetry.EngineSummary{CPUPct: 51}, &telemetry.LoadGenSummary{Name: "pgbench", CPUPct: 30}), BoundNone,
			[]string{"CPU 42% busy (engine 51% of one core, load generator pgbench 30%)"}, nil, map[string]float64{"load_cpu_pct": 30}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := Attribute(tc.run, st)
			checkAttribution(t, b, tc.kind, tc.fragments, tc.absent, tc.evidence)
			if tc.run.Telemetry.LoadGen != nil && tc.run.Telemetry.LoadGen.SharesEngine {
				if _, ok := b.Evidence["load_cpu_pct"]; ok {
					t.Errorf("evidence %v splits the shared process's CPU", b.Evidence)
				}
			}
		})
	}
}

// TestMemoryBound: a full memory limit is the limit only while the engine
// reads back from its data's device what did not fit.
func TestMemoryBound(t *testing.T) {
	st := &results.Study{Env: hostenv.Env{CPUs: 2}, Roles: map[string]engine.Role{"store": engine.RoleData, "log": engine.RoleCommitLog}}
	for _, c := range []struct {
		name  string
		mem   *telemetry.MemorySummary
		reads float64
		want  string
	}{
		{"full and reading", &telemetry.MemorySummary{LimitBytes: 512 << 20, PeakBytes: 510 << 20, CacheBytes: 300 << 20, MajorFaultsPerS: 3}, 14200,
			"memory-bound: the engine's 512 MiB limit was full (300 MiB of it page cache); it read 14200 times/s from tier disk's device"},
		{"full, nothing read back", &telemetry.MemorySummary{LimitBytes: 512 << 20, PeakBytes: 510 << 20}, 2, ""},
		{"room to spare", &telemetry.MemorySummary{LimitBytes: 512 << 20, PeakBytes: 100 << 20}, 14200, ""},
		{"no limit", nil, 14200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := results.Run{Durability: "sync", Components: map[string]string{"store": "disk", "log": "disk"},
				Telemetry: &telemetry.Summary{Memory: c.mem, Tiers: map[string]telemetry.TierSummary{"disk": {Device: "vda", DiskRates: telemetry.DiskRates{ReadIOPS: c.reads}}}}}
			b := Attribute(&r, st)
			if got := b.Kind == BoundMemory; got != (c.want != "") || !strings.Contains(b.Text, c.want) {
				t.Errorf("%s: %s", b.Kind, b.Text)
			}
		})
	}
}
