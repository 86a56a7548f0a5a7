package report

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// TestVerdictsWithNothingToCompare: a side without an ok run is named with
// why, and is never given a ratio ("delivers failed the throughput").
func TestVerdictsWithNothingToCompare(t *testing.T) {
	st := &results.Study{Baseline: "on-disk", Durability: []string{"sync"}, Clients: []int{16},
		Placements: []results.Placement{{Name: "on-disk"}, {Name: "on-ram"}, {Name: "wal-quick"}}}
	ok := func(p string, tput float64) results.Run {
		return results.Run{Placement: p, Durability: "sync", Clients: 16, Status: results.RunOK, ThroughputOpsS: tput}
	}
	failed := func(p, why string) results.Run {
		return results.Run{Placement: p, Durability: "sync", Clients: 16, Status: results.RunFailed, Error: why}
	}
	cases := []struct {
		name    string
		runs    []results.Run
		want    []string
		notWant []string
	}{
		{"contender failed, another not run",
			[]results.Run{ok("on-disk", 1000), failed("wal-quick", "tier quick full"), failed("wal-quick", "tier quick full")},
			[]string{"With synced commits, on-ram at 16 clients: not run, nothing to compare.",
				"With synced commits, wal-quick at 16 clients: no ok run (2 failed: tier quick full), nothing to compare."},
			nil},
		{"one measured, one failed with different errors",
			[]results.Run{ok("on-disk", 1000), ok("on-ram", 2000), failed("wal-quick", "tier quick full"), failed("wal-quick", "server died")},
			[]string{"on-ram delivers 2.00x the throughput of on-disk at 16 clients: inconclusive (no interval: 1 round; run 2 or more).",
				"wal-quick at 16 clients: no ok run (2 failed; the first: tier quick full), nothing to compare"},
			nil},
		{"baseline failed",
			[]results.Run{failed("on-disk", "engine: open WAL: no space left on device"), ok("on-ram", 2000), ok("wal-quick", 1500)},
			[]string{"With synced commits, on-ram: there is nothing to compare: the baseline on-disk has no ok run (1 failed: engine: open WAL: no space left on device)."},
			[]string{"delivers"}},
		{"a long error is cut",
			[]results.Run{ok("on-disk", 1000), failed("on-ram", strings.Repeat("x", 300))},
			[]string{"on-ram at 16 clients: no ok run (1 failed: " + strings.Repeat("x", 119) + "…)"},
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(Verdicts(st, stats.Analyze(st, tc.runs), 16), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("verdicts\n%s\nlack %q", got, w)
				}
			}
			for _, w := range append(tc.notWant, "delivers failed", "delivers not measured", "not measured the") {
				if strings.Contains(got, w) {
					t.Errorf("verdicts\n%s\ncontain %q", got, w)
				}
			}
		})
	}
}

// TestDurabilityVerdictsWithNothingToCompare: a durability mode with no ok
// run on a placement says so instead of giving a ratio.
func TestDurabilityVerdictsWithNothingToCompare(t *testing.T) {
	st := &results.Study{Baseline: "inmem", Durability: []string{"async", "sync"}, Clients: []int{128},
		Placements: []results.Placement{{Name: "inmem", Durability: "memory"}, {Name: "ssd"}}}
	runs := []results.Run{
		{Placement: "ssd", Durability: "async", Clients: 128, Status: results.RunOK, ThroughputOpsS: 1000},
		{Placement: "ssd", Durability: "sync", Clients: 128, Status: results.RunFailed, Error: "tier ssd full"},
	}
	got := strings.Join(Verdicts(st, stats.Analyze(st, runs), 128), "\n")
	want := "Durability sync against async, on each placement: ssd at 128 clients: no ok run (1 failed: tier ssd full), nothing to compare."
	if !strings.Contains(got, want) {
		t.Errorf("verdicts\n%s\nlack %q", got, want)
	}
}

// TestRatioTextNamesWhy covers every group with no ratio.
func TestRatioTextNamesWhy(t *testing.T) {
	for _, tc := range []struct {
		g    stats.Group
		want string
	}{
		{stats.Group{Verdict: stats.NoData, Failed: 2, Failures: []string{"tier full", "tier full"}}, "no ok run (2 failed: tier full), nothing to compare"},
		{stats.Group{Verdict: stats.NoData}, "not run, nothing to compare"},
		{stats.Group{Verdict: stats.NoData, N: 3}, "nothing to compare: the baseline has no ok run"},
		{stats.Group{Verdict: stats.IsBaseline, Failures: []string{"boom"}}, "baseline, no ok run (1 failed: boom)"},
		{stats.Group{Verdict: stats.IsBaseline, N: 1}, "1.00x (baseline)"},
	} {
		if got := RatioText(&tc.g); got != tc.want {
			t.Errorf("RatioText(%+v) = %q, want %q", tc.g, got, tc.want)
		}
	}
}
