package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
)

// TestLoadGeneratorCPUShown: `show` and the report's run table put the
// load generator's CPU (and per op) beside the engine's, say when driver
// and engine share a process, and show nothing of it for runs stored
// before it was sampled.
func TestLoadGeneratorCPUShown(t *testing.T) {
	st := &results.Study{ID: "s1", Name: "drivers", Engine: "postgres", Workload: "tpcb", Baseline: "one",
		Status: results.StudyDone, Repeat: 1, Durability: []string{"async"}, Clients: []int{8}, Drivers: []string{"builtin", "pgbench"},
		Placements: []results.Placement{{Name: "one", Components: map[string]string{"data": "disk"}}}}
	run := func(seq int, driver string, engine float64, load *telemetry.LoadGenSummary) results.Run {
		return results.Run{Seq: seq, Placement: "one", Driver: driver, Durability: "async", Clients: 8, Repeat: 1, Status: results.RunOK,
			ThroughputOpsS: 3000, Latency: hist.Summary{P99: 1500},
			Telemetry: &telemetry.Summary{Engine: telemetry.EngineSummary{CPUPct: 10, TreeCPUPct: engine}, LoadGen: load}}
	}
	runs := []results.Run{
		run(1, "builtin", 110, &telemetry.LoadGenSummary{Name: "tierbench", CPUPct: 82, CPUUsPerOp: 121}),
		run(2, "pgbench", 120, &telemetry.LoadGenSummary{Name: "pgbench", CPUPct: 61, CPUUsPerOp: 96}),
	}
	var show strings.Builder
	if err := Show(&show, st, runs); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(&md, Input{Study: st, Runs: runs}, t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"show": show.String(), "report": md.String()} {
		for _, want := range []string{"110%", "tierbench 82%", "121 µs", "120%", "pgbench 61%", "96 µs"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", what, want, out)
			}
		}
	}
	if !strings.Contains(md.String(), "| engine CPU | engine cache | load generator CPU | load generator CPU per op |") {
		t.Errorf("report's run table lacks the CPU columns:\n%s", md.String())
	}

	shared := []results.Run{run(1, "builtin", 0, &telemetry.LoadGenSummary{Name: "tierbench", CPUPct: 150, SharesEngine: true})}
	shared[0].Telemetry.Engine.CPUPct = 150
	show.Reset()
	if err := Show(&show, st, shared); err != nil {
		t.Fatal(err)
	}
	if out := show.String(); !strings.Contains(out, "tierbench (in the engine)") || !strings.Contains(out, "150%") {
		t.Errorf("show does not say driver and engine share a process:\n%s", out)
	}

	old := []results.Run{run(1, "builtin", 110, nil)}
	show.Reset()
	if err := Show(&show, st, old); err != nil {
		t.Fatal(err)
	}
	if out := show.String(); strings.Contains(out, "load generator") {
		t.Errorf("show prints load generator CPU for a run that recorded none:\n%s", out)
	}
}
