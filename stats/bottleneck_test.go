package stats

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tier/probe"
)

func TestAttribute(t *testing.T) {
	st := &results.Study{Env: hostenv.Env{CPUs: 2}, Probes: map[string]*results.Probe{
		"disk": {Tier: probe.Tier{Fio: &probe.Fio{SyncCeilingPerS: 1000, SeqWriteMBps: 500, RandWriteQD32: probe.IOResult{IOPS: 50000}}}},
	}}
	run := func(durability string, host telemetry.HostSummary, disk telemetry.TierSummary) *results.Run {
		return &results.Run{Durability: durability, Components: map[string]string{"data": "disk", "wal": "disk"},
			Telemetry: &telemetry.Summary{Host: host, Tiers: map[string]telemetry.TierSummary{"disk": disk}}}
	}
	idle := telemetry.HostSummary{CPUUserPct: 20, CPUSysPct: 10}
	cases := []struct {
		name     string
		run      *results.Run
		kind     string
		fragment string
	}{
		{"cpu", run("sync", telemetry.HostSummary{CPUUserPct: 70, CPUSysPct: 27}, telemetry.TierSummary{Device: "vda"}), BoundCPU, "CPU-bound: 2 cores at 97%"},
		{"fsync", run("sync", idle, telemetry.TierSummary{Device: "vda", FlushesPerS: 910}), BoundFsync, "WAL fsync-bound on tier disk: 910 flushes/s, 91% of its probed sync ceiling"},
		{"fsync from writes on old kernels", run("sync", idle, telemetry.TierSummary{Device: "vda", WriteIOPS: 800}), BoundFsync, "80%"},
		{"nosync is never fsync-bound", run("nosync", idle, telemetry.TierSummary{Device: "vda", FlushesPerS: 990}), BoundNone, "not storage-bound"},
		{"bandwidth", run("nosync", idle, telemetry.TierSummary{Device: "vda", WriteMBps: 450}), BoundBandwidth, "90% of its probed 500 MB/s"},
		{"iops", run("nosync", idle, telemetry.TierSummary{Device: "vda", WriteIOPS: 40000}), BoundIOPS, "80% of its probed 50000"},
		{"busy device without probe figures", &results.Run{Durability: "nosync", Components: map[string]string{"data": "ssd"},
			Telemetry: &telemetry.Summary{Host: idle, Tiers: map[string]telemetry.TierSummary{"ssd": {Device: "nvme0n1", UtilPct: 97}}}}, BoundIOPS, "busy 97%"},
		{"none", run("sync", idle, telemetry.TierSummary{Device: "vda", FlushesPerS: 100, UtilPct: 12}), BoundNone, "busiest device disk (vda) at 12%"},
		{"no telemetry", &results.Run{Durability: "sync"}, BoundNone, "no telemetry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := Attribute(tc.run, st)
			if b.Kind != tc.kind || !strings.Contains(b.Text, tc.fragment) {
				t.Errorf("got %s %q, want %s containing %q", b.Kind, b.Text, tc.kind, tc.fragment)
			}
		})
	}
}
