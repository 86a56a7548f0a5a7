package report

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/tier"
)

func TestShowRatiosMediansAndFailures(t *testing.T) {
	st := &results.Study{ID: "s1", Name: "demo", Engine: "pebble", Workload: "ycsb-a", Baseline: "all-disk",
		Status: results.StudyDone, Repeat: 3, Durability: []string{"sync"}, Clients: []int{4, 16},
		Placements: []results.Placement{
			{Name: "all-disk", Components: map[string]string{"data": "disk", "wal": "disk"}},
			{Name: "wal-ram", Components: map[string]string{"data": "disk", "wal": "ram"}},
		},
		Tiers: map[string]tier.Info{"ram": {Path: "/dev/shm/x", FSType: "tmpfs", Note: "tmpfs keeps data in RAM"},
			"disk": {Path: "/var/tmp/x", FSType: "ext4", Durable: true}},
	}
	round := 0
	run := func(p string, c int, tput float64, status string) results.Run {
		round++
		return results.Run{Placement: p, Durability: "sync", Clients: c, Status: status, ThroughputOpsS: tput, Repeat: (round-1)%3 + 1,
			Latency: hist.Summary{P99: 1500}, Error: map[bool]string{true: "", false: "boom"}[status == results.RunOK]}
	}
	runs := []results.Run{
		run("all-disk", 4, 100, results.RunOK), run("all-disk", 4, 110, results.RunOK), run("all-disk", 4, 90, results.RunOK),
		run("wal-ram", 4, 200, results.RunOK), run("wal-ram", 4, 220, results.RunOK), run("wal-ram", 4, 180, results.RunOK),
		run("all-disk", 16, 100, results.RunOK),
		run("wal-ram", 16, 0, results.RunFailed),
	}
	runs[3].Seq, runs[3].Repeat, runs[3].Caveats = 4, 1, []string{"spilled over: 12 MiB on the slow device"}
	var b strings.Builder
	if err := Show(&b, st, runs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"2.00x",           // 200 over 100 in every round
		"failed",          // the failed group
		"1 run(s) failed", // listed with its error
		"boom",            //
		"NOT DURABLE",     // the tmpfs tier is labelled
		"medians over 3",  // rounds explained
		"vs all-disk",     // ratio column
		"1.50ms",          // p99 formatted
		"all-disk: data=disk wal=disk  (baseline)",
		"run 4, sync c=4 wal-ram #1: spilled over: 12 MiB on the slow device", // the engine's caveat
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestLanesNote: show and the report say when the builtin driver ran its
// clients on lanes, and say nothing when it did not (other engines, tools).
func TestLanesNote(t *testing.T) {
	for _, c := range []struct {
		lanes []int
		want  string
	}{
		{nil, ""},
		{[]int{0, 0}, ""},
		{[]int{0, 1, 1}, "builtin clients on 1 lane(s)"},
		{[]int{2, 0, 1}, "builtin clients on 1 to 2 lanes, as each driver says"},
	} {
		var runs []results.Run
		for _, n := range c.lanes {
			runs = append(runs, results.Run{Lanes: n})
		}
		got := lanesNote(runs)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("lanes %v: %q, want %q", c.lanes, got, c.want)
		}
	}
}
