package stats

import (
	"math"
	"reflect"
	"testing"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
)

func TestDurabilitySide(t *testing.T) {
	st := &results.Study{Clients: []int{4, 8}, Placements: []results.Placement{{Name: "a"}, {Name: "b"}}}
	runs := []results.Run{
		{Placement: "a", Durability: "sync", Clients: 4, Status: results.RunOK},
		{Placement: "a", Durability: "async", Clients: 4, Status: results.RunOK},
		{Placement: "b", Durability: "sync", Clients: 8, Status: results.RunOK},
		{Placement: "b", Durability: "sync", Clients: 8, Status: results.RunFailed},
	}
	s := DurabilitySide(st, runs, "sync")
	if s.Label != "sync" || !reflect.DeepEqual(s.Order, []string{"a c=4", "b c=4", "a c=8", "b c=8"}) {
		t.Errorf("label %q order %v", s.Label, s.Order)
	}
	if len(s.Runs["a c=4"]) != 1 || len(s.Runs["b c=8"]) != 1 || len(s.Runs["b c=4"]) != 0 {
		t.Errorf("runs %v", s.Runs)
	}
}

// TestCompareSaysWhyNothingToCompare: a group with no ok run on one side
// becomes one row that names the side and why, instead of vanishing.
func TestCompareSaysWhyNothingToCompare(t *testing.T) {
	st := &results.Study{Durability: []string{"sync"}, Clients: []int{16},
		Placements: []results.Placement{{Name: "on-disk"}, {Name: "wal-quick"}}}
	ok := func(p string) results.Run {
		return results.Run{Placement: p, Durability: "sync", Clients: 16, Status: results.RunOK, ThroughputOpsS: 1000}
	}
	failed := func(p, why string) results.Run {
		return results.Run{Placement: p, Durability: "sync", Clients: 16, Status: results.RunFailed, Error: why}
	}
	cases := []struct {
		name string
		runs []results.Run
		want string // the note, "" for no note row
	}{
		{"contender failed", []results.Run{ok("on-disk"), failed("wal-quick", "tier quick full"), failed("wal-quick", "tier quick full")},
			"wal-quick: no ok run (2 failed: tier quick full), nothing to compare"},
		{"baseline failed", []results.Run{failed("on-disk", "server died"), ok("wal-quick")},
			"on-disk: no ok run (1 failed: server died), nothing to compare"},
		{"both failed", []results.Run{failed("on-disk", "a"), failed("wal-quick", "b")},
			"on-disk: no ok run (1 failed: a); wal-quick: no ok run (1 failed: b), nothing to compare"},
		{"contender interrupted before it ran", []results.Run{ok("on-disk")},
			"wal-quick: not run, nothing to compare"},
		{"neither side has anything", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := Compare(StudySide("on-disk", st, tc.runs, "on-disk"), []Side{StudySide("wal-quick", st, tc.runs, "wal-quick")})
			var notes []string
			for _, r := range rows {
				if r.Note != "" {
					if r.Verdict != NoData {
						t.Errorf("note row with verdict %q", r.Verdict)
					}
					notes = append(notes, r.Note)
				}
			}
			switch {
			case tc.want == "" && len(notes) > 0:
				t.Errorf("notes %q, want none", notes)
			case tc.want != "" && (len(notes) != 1 || notes[0] != tc.want):
				t.Errorf("notes %q, want [%q]", notes, tc.want)
			}
		})
	}
}

// TestCompareSkipsGroupsOneMatrixLacks: studies with other client counts
// compare the groups they share, without a note per missing group.
func TestCompareSkipsGroupsOneMatrixLacks(t *testing.T) {
	a := &results.Study{Durability: []string{"sync"}, Clients: []int{1, 16}, Placements: []results.Placement{{Name: "p"}}}
	b := &results.Study{Durability: []string{"sync"}, Clients: []int{16}, Placements: []results.Placement{{Name: "p"}}}
	run := func(c int) results.Run {
		return results.Run{Placement: "p", Durability: "sync", Clients: c, Status: results.RunOK, ThroughputOpsS: 10}
	}
	rows := Compare(StudySide("a", a, []results.Run{run(1), run(16)}, ""), []Side{StudySide("b", b, []results.Run{run(16)}, "")})
	for _, r := range rows {
		if r.Note != "" || r.Group == "p sync c=1" {
			t.Errorf("row %+v for a group study b does not have", r)
		}
	}
	if len(rows) != len(Metrics) {
		t.Errorf("%d rows, want %d (one group)", len(rows), len(Metrics))
	}
}

// TestComparePairsWithinAStudy: two placements of one study are compared
// round by round; the same runs as two studies are compared with Welch's
// interval, which the rounds' drift widens past a verdict.
func TestComparePairsWithinAStudy(t *testing.T) {
	st := &results.Study{ID: "s", Durability: []string{"sync"}, Clients: []int{4},
		Placements: []results.Placement{{Name: "base"}, {Name: "fast"}}}
	var runs []results.Run
	// The rounds' own noise multiplies to 1, so the paired ratio is 1.1;
	// without any, a spread of 0 would decide nothing (ZeroSpread).
	noise := []float64{1.01, 0.99, 1, 1 / 1.01, 1 / 0.99}
	for r, speed := range []float64{1, 0.6, 1.3, 0.8, 1.1} { // the machine drifts between rounds
		for _, p := range []struct {
			name   string
			factor float64
		}{{"base", 1}, {"fast", 1.1 * noise[r]}} {
			runs = append(runs, results.Run{Placement: p.name, Durability: "sync", Clients: 4, Repeat: r + 1, Status: results.RunOK,
				ThroughputOpsS: 1000 * speed * p.factor, Latency: hist.Summary{P50: 100 / speed * p.factor, P99: 1000 / speed * p.factor}})
		}
	}
	within := Compare(StudySide("base", st, runs, "base"), []Side{StudySide("fast", st, runs, "fast")})
	other := *st
	other.ID = "t"
	across := Compare(StudySide("base", st, runs, "base"), []Side{StudySide("fast", &other, runs, "fast")})
	if within[0].Metric != "throughput" || !within[0].Paired || within[0].Verdict != Better || math.Abs(within[0].DiffPct-10) > 1e-6 {
		t.Errorf("within one study: %+v", within[0])
	}
	if across[0].Paired || across[0].Verdict != Inconclusive {
		t.Errorf("across studies: %+v", across[0])
	}
}

// TestCompareDiffAndPercentFromOneEstimator: Diff and DiffPct, and their
// CIs, are one estimate (the paired ratio) in two units, so they never
// disagree in sign, even where the two medians point the other way.
func TestCompareDiffAndPercentFromOneEstimator(t *testing.T) {
	st := &results.Study{ID: "s", Durability: []string{"sync"}, Clients: []int{4},
		Placements: []results.Placement{{Name: "base"}, {Name: "other"}}}
	var runs []results.Run
	for i, p99 := range [][2]float64{{100, 150}, {200, 190}, {300, 500}} {
		for j, name := range []string{"base", "other"} {
			runs = append(runs, results.Run{Placement: name, Durability: "sync", Clients: 4, Repeat: i + 1, Status: results.RunOK,
				ThroughputOpsS: 1000 + 100*float64(i*j), Latency: hist.Summary{P50: 10 + float64(i*j), P99: p99[j]}})
		}
	}
	rows := Compare(StudySide("base", st, runs, "base"), []Side{StudySide("other", st, runs, "other")})
	if len(rows) != len(Metrics) {
		t.Fatalf("%d rows, want %d", len(rows), len(Metrics))
	}
	for _, r := range rows {
		if r.DiffCI == nil || r.DiffPctCI == nil {
			t.Errorf("%s: no CI", r.Metric)
			continue
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
		if !near(r.Diff, r.Baseline*r.DiffPct/100) || !near(r.DiffCI[0], r.Baseline*r.DiffPctCI[0]/100) ||
			!near(r.DiffCI[1], r.Baseline*r.DiffPctCI[1]/100) {
			t.Errorf("%s: Diff %v [%v] is not DiffPct %v%% [%v] of the baseline's %v", r.Metric, r.Diff, *r.DiffCI, r.DiffPct, *r.DiffPctCI, r.Baseline)
		}
		if r.Diff < r.DiffCI[0] || r.Diff > r.DiffCI[1] {
			t.Errorf("%s: Diff %v outside its CI %v", r.Metric, r.Diff, *r.DiffCI)
		}
	}
	p99 := rows[2]
	if p99.Metric != "p99 latency" || !(p99.Value < p99.Baseline) || !(p99.Diff > 0) {
		t.Errorf("want the case where the medians fall and the paired estimate rises: %+v", p99)
	}
}
