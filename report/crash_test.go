package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/tier"
)

// TestCrashCosts: crash runs are gathered per placement, mode and crash
// kind beside the same cell's throughput without a crash; a loss in a
// mode that promises none is called a contradiction, naming the run and
// its tiers; a run that did not come back is counted as inconsistent.
func TestCrashCosts(t *testing.T) {
	st := &results.Study{Placements: []results.Placement{{Name: "p"}}, Durability: []string{"sync", "async"},
		Clients: []int{4}, Crashes: []string{"none", "process"}}
	run := func(seq int, d string, ops float64, c *results.Crash) results.Run {
		return results.Run{Seq: seq, Placement: "p", Durability: d, Clients: 4, Status: results.RunOK, ThroughputOpsS: ops,
			Components: map[string]string{"data": "disk"}, Crash: c}
	}
	lost := func(n int64, promised bool) *results.Crash {
		return &results.Crash{Kind: "process", Checked: true, Consistent: true, LostAcked: n, Promised: promised, RecoveryS: 0.2,
			LostWindowMS: float64(n), Detail: "3 of 40 record fields with an acknowledged write lost it"}
	}
	runs := []results.Run{
		run(1, "sync", 1000, nil), run(2, "sync", 1200, nil), run(3, "sync", 900, lost(0, true)), run(4, "sync", 900, lost(2, true)),
		run(5, "async", 3000, nil), run(6, "async", 2000, lost(10, false)), run(7, "async", 2000, lost(20, false)),
		run(8, "async", 2000, &results.Crash{Kind: "process", Detail: "the engine did not come back after the crash: boom"}),
	}
	costs := CrashCosts(st, runs)
	if len(costs) != 2 {
		t.Fatalf("%d cells, want 2: %+v", len(costs), costs)
	}
	sync, async := costs[0], costs[1]
	if sync.Throughput != 1100 || sync.NoCrash != 2 || sync.Checked != 2 || sync.Unit != "record fields" {
		t.Errorf("sync cell %+v", sync)
	}
	if !strings.Contains(sync.Contradiction, "sync promises to keep every acknowledged write through a process crash, and run 4 lost 2 (on data=disk)") {
		t.Errorf("sync contradiction %q", sync.Contradiction)
	}
	if async.Contradiction != "" || async.Crashed != 3 || len(async.Inconsistent) != 1 || async.WindowMS != 20 {
		t.Errorf("async cell %+v", async)
	}
	want := "async on p, 4 clients: 3,000 ops/s without a crash (median of 1); a process crash lost 15 acknowledged record fields (mean of 2 runs, 95% CI [0-78.5]; the oldest 20 ms before the crash); recovery 0.2s, 95% CI [0.2-0.2]; 1 of 3 runs came back INCONSISTENT: the engine did not come back after the crash: boom"
	if got := async.Sentence(); got != want {
		t.Errorf("sentence\n got %s\nwant %s", got, want)
	}
	var out strings.Builder
	crashTable(&out, costs)
	if !strings.Contains(out.String(), "CONTRADICTS THE DOCUMENTED MODE: sync promises") {
		t.Errorf("show lacks the contradiction:\n%s", out.String())
	}
	gone := CrashCost{Placement: "p", Durability: "sync", Clients: 4, Kind: "power", Crashed: 1,
		Inconsistent: []string{"the engine did not come back after the crash: postgres exited; last lines of its log:\nPANIC: no checkpoint"}}
	if got, want := gone.Sentence(), "sync on p, 4 clients: a power loss left nothing to check; 1 of 1 runs came back INCONSISTENT: the engine did not come back after the crash: postgres exited; last lines of its log (its log: show --format json, runs[].crash.detail)"; got != want {
		t.Errorf("sentence of a cell that never came back\n got %s\nwant %s", got, want)
	}
	all := CrashCost{Placement: "wal-ram", Durability: "sync", Clients: 4, Kind: "power", Crashed: 2, Checked: 2,
		Lost: []float64{300, 500}, Acked: []float64{300, 500}, Unit: "record fields", WindowMS: 800}
	if got, want := all.Sentence(), "sync on wal-ram, 4 clients: a power loss lost every acknowledged write of the window in 2 of 2 runs (400 record fields on average; the oldest 800 ms before the crash)"; got != want {
		t.Errorf("sentence of a cell that lost everything\n got %s\nwant %s", got, want)
	}
	some := CrashCost{Placement: "wal-ram", Durability: "sync", Clients: 1, Kind: "power", Crashed: 2, Checked: 2,
		Lost: []float64{100, 300}, Acked: []float64{400, 400}, Unit: "record fields", WindowMS: 900}
	if got, want := some.Sentence(), "sync on wal-ram, 1 client: a power loss lost 200 (95% CI [0-1471]) of 400 acknowledged record fields (means of 2 runs; the oldest 900 ms before the crash)"; got != want {
		t.Errorf("sentence of a cell that lost some\n got %s\nwant %s", got, want)
	}
	if CrashCosts(&results.Study{}, runs) != nil {
		t.Error("a study without crash runs has a trade-off")
	}
}

// TestJSONCarriesCrashCosts: `show --format json` carries the trade-off,
// with each run's lost and acknowledged writes and where the components
// were, so that an answer can be phrased from it alone.
func TestJSONCarriesCrashCosts(t *testing.T) {
	st := &results.Study{Placements: []results.Placement{{Name: "wal-ram"}}, Durability: []string{"sync"},
		Clients: []int{4}, Crashes: []string{"none", "power"}}
	comps := map[string]string{"data": "disk", "wal": "ram"}
	runs := []results.Run{
		{Seq: 1, Placement: "wal-ram", Durability: "sync", Clients: 4, Status: results.RunOK, ThroughputOpsS: 9000, Components: comps},
		{Seq: 2, Placement: "wal-ram", Durability: "sync", Clients: 4, Status: results.RunOK, ThroughputOpsS: 5000, Components: comps,
			Crash: &results.Crash{Kind: "power", Checked: true, Consistent: true, LostAcked: 70, Acked: 70, RecoveryS: 0.1,
				Detail: "70 of 70 record fields with an acknowledged write lost it"}},
	}
	var js strings.Builder
	if err := JSON(&js, st, runs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		CrashCosts []CrashCost `json:"crash_costs"`
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.CrashCosts) != 1 {
		t.Fatalf("crash_costs %+v, want one cell", doc.CrashCosts)
	}
	c := doc.CrashCosts[0]
	if c.Kind != "power" || c.Components["wal"] != "ram" || c.Throughput != 9000 || len(c.Lost) != 1 || c.Lost[0] != 70 ||
		len(c.Acked) != 1 || c.Acked[0] != 70 || c.Unit != "record fields" || !c.lostAll() {
		t.Errorf("crash_costs[0] = %+v", c)
	}
	if !strings.Contains(js.String(), `"acked": 70`) {
		t.Error("the run's crash record lacks acked")
	}
}

// TestPmemEmulatedIsLabelled: a pmem_emulated tier is shown as durable
// only under the power-loss layer, and its note says it is RAM with the
// FUSE layer's speed, not persistent memory's.
func TestPmemEmulatedIsLabelled(t *testing.T) {
	st := &results.Study{Placements: []results.Placement{{Name: "wal-pmem"}}, Durability: []string{"sync"}, Clients: []int{1},
		Tiers: map[string]tier.Info{"pmem": {Name: "pmem", Path: "/mnt/pm", FSType: "fuse.tierbench-latency", Device: "tmpfs",
			Durable: true, Emulated: true, LayerDurable: true, Emulation: tier.PmemEmulatedNote}}}
	notes := strings.Join(NotDurableNotes(st), "\n")
	if !strings.Contains(notes, "Tier pmem is persistent-memory-like and emulated") || !strings.Contains(notes, "not persistent memory's") ||
		strings.Contains(notes, "injected") {
		t.Errorf("notes:\n%s", notes)
	}
	var out strings.Builder
	if err := Show(&out, st, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "durable only under the power-loss layer") {
		t.Errorf("show's tier list does not qualify the pmem tier's durability:\n%s", out.String())
	}
}

// TestAtomicWriteShown: show names a tier's atomic-write unit, where it
// comes from, and what its device reports.
func TestAtomicWriteShown(t *testing.T) {
	got := AtomicWriteText("disk", tier.Info{AtomicWrite: 512, AtomicWriteFrom: "assumed: 512B, the conservative unit",
		DeviceAtomicWrite: "device vda promises no atomic writes"})
	if want := "disk: atomic writes up to 512B, assumed: 512B, the conservative unit; device vda promises no atomic writes"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestCrashCorruption: the engine's own check of each cut is counted per
// cell ("corrupt in k of N cuts"), in the sentence, the table's column and
// the answer, and each power-loss model says what it does and does not
// model.
func TestCrashCorruption(t *testing.T) {
	st := &results.Study{Placements: []results.Placement{{Name: "p"}}, Durability: []string{"sync"},
		Clients: []int{1}, Crashes: []string{"none", "power:torn"}}
	run := func(seq int, c *results.Crash) results.Run {
		return results.Run{Seq: seq, Placement: "p", Durability: "sync", Clients: 1, Status: results.RunOK, ThroughputOpsS: 100,
			Components: map[string]string{"data": "disk"}, Crash: c}
	}
	torn := func(corrupt bool) *results.Crash {
		c := &results.Crash{Kind: "power:torn", Checked: true, Consistent: true, Acked: 10, RecoveryS: 0.1,
			Detail: "0 of 10 record fields with an acknowledged write lost it", Model: "torn", Keep: 0.5, Seed: 9, CorruptChecked: true}
		if corrupt {
			c.Corrupt, c.CorruptDetail = true, "pg_amcheck: invalid page in block 3 of relation base/5/16384"
		}
		return c
	}
	costs := CrashCosts(st, []results.Run{run(1, nil), run(2, torn(false)), run(3, torn(true)), run(4, torn(false))})
	if len(costs) != 1 || costs[0].Corrupt != 1 || costs[0].CorruptChecked != 3 {
		t.Fatalf("cells %+v", costs)
	}
	sentence := costs[0].Sentence()
	for _, want := range []string{"a power loss (model torn) lost no acknowledged write", "CORRUPT in 1 of 3 cuts by the engine's own check: pg_amcheck: invalid page in block 3"} {
		if !strings.Contains(sentence, want) {
			t.Errorf("sentence %q lacks %q", sentence, want)
		}
	}
	var out strings.Builder
	crashTable(&out, costs)
	for _, want := range []string{"corrupt", "1/3", "power:torn is torn (each atomic-write unit kept with probability 0.5)", "not modelled: no partial writes inside a unit"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, out.String())
		}
	}
	if got := powerLossText(results.Placement{Name: "p"}, "sync", costs); !strings.HasSuffix(got, "; corrupt in 1 of 3 cuts") {
		t.Errorf("answer %q does not end with the corrupt cuts", got)
	}
}

// TestCrashCostsBySweptSetting: a study that sweeps a protection
// (full_page_writes) sets its crash costs apart by it, in the table and
// in each series' answer, instead of adding the two together.
func TestCrashCostsBySweptSetting(t *testing.T) {
	st := &results.Study{Placements: []results.Placement{{Name: "p"}}, Durability: []string{"sync"}, Clients: []int{1},
		Crashes: []string{"none", "power:torn"},
		Axes:    []results.Axis{{Name: "full_page_writes", Values: []string{"true", "false"}, Labels: []string{"true", "false"}}}}
	run := func(seq int, fpw string, corrupt *bool) results.Run {
		r := results.Run{Seq: seq, Placement: "p", Durability: "sync", Clients: 1, Status: results.RunOK, ThroughputOpsS: 100,
			Components: map[string]string{"data": "disk"}, Options: map[string]string{"full_page_writes": fpw}}
		if corrupt != nil {
			r.Crash = &results.Crash{Kind: "power:torn", Checked: true, Consistent: !*corrupt, Acked: 10, RecoveryS: 0.1,
				Model: "torn", Keep: 0.5, Seed: uint64(seq), CorruptChecked: true, Corrupt: *corrupt}
		}
		return r
	}
	yes, no := true, false
	runs := []results.Run{run(1, "true", nil), run(2, "true", &no), run(3, "true", &no),
		run(4, "false", nil), run(5, "false", &yes), run(6, "false", &no)}
	costs := CrashCosts(st, runs)
	if len(costs) != 2 {
		t.Fatalf("want a cell per full_page_writes value, got %+v", costs)
	}
	for i, want := range []struct {
		name             string
		corrupt, checked int
	}{{"p full_page_writes=true", 0, 2}, {"p full_page_writes=false", 1, 2}} {
		if c := costs[i]; c.Name() != want.name || c.Corrupt != want.corrupt || c.CorruptChecked != want.checked {
			t.Errorf("cell %d: %s corrupt %d of %d, want %s %d of %d", i, c.Name(), c.Corrupt, c.CorruptChecked, want.name, want.corrupt, want.checked)
		}
	}
	view, _ := results.SeriesView(st, runs)
	seen := 0
	for _, p := range view.Placements {
		if results.WithoutCrash(p.Settings) != "full_page_writes=false" || strings.Contains(p.Name, "crash=power") {
			continue
		}
		seen++
		if got := powerLossText(p, "sync", costs); !strings.HasSuffix(got, "; corrupt in 1 of 2 cuts") {
			t.Errorf("series %s: answer %q, want its own cuts alone", p.Name, got)
		}
	}
	if seen != 1 {
		t.Errorf("%d series of full_page_writes=false without a crash, want 1", seen)
	}
}

// TestCrashReorderLogFull checks that reorder cuts whose write log was
// full say so in the cell's sentence, with the writes lost whole.
func TestCrashReorderLogFull(t *testing.T) {
	st := &results.Study{Placements: []results.Placement{{Name: "p"}}, Durability: []string{"sync"},
		Clients: []int{1}, Crashes: []string{"power:reorder"}}
	run := func(seq int, unlogged int64) results.Run {
		return results.Run{Seq: seq, Placement: "p", Durability: "sync", Clients: 1, Status: results.RunOK, ThroughputOpsS: 100,
			Components: map[string]string{"data": "disk"}, Crash: &results.Crash{Kind: "power:reorder", Checked: true, Consistent: true,
				Acked: 10, Detail: "0 of 10 record fields with an acknowledged write lost it", Model: "reorder", Keep: 0.5, Seed: 9, Unlogged: unlogged}}
	}
	costs := CrashCosts(st, []results.Run{run(1, 0), run(2, 7), run(3, 5)})
	if len(costs) != 1 || costs[0].UnloggedCuts != 2 || costs[0].Unlogged != 12 {
		t.Fatalf("cells %+v", costs)
	}
	if s, want := costs[0].Sentence(), "in 2 of 3 cuts a tier's write log was full, so 12 unsynced writes were lost whole rather than reordered"; !strings.Contains(s, want) {
		t.Errorf("sentence %q lacks %q", s, want)
	}
	var out strings.Builder
	crashTable(&out, costs)
	if want := "power:reorder is reorder (each write kept with probability 0.5)"; !strings.Contains(out.String(), want) {
		t.Errorf("show lacks %q:\n%s", want, out.String())
	}
}
