package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/progress"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
)

// emulatedRoot is a test's folder and the ledger of what its studies
// make there; the test is skipped where the latency layer (FUSE) cannot
// run.
func emulatedRoot(t *testing.T) (string, *tier.Ledger) {
	t.Helper()
	if err := emulate.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	root := t.TempDir()
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	return root, ledger
}

// storedRuns are the runs study rec stored in runStudy's store under root.
func storedRuns(t *testing.T, root string, rec *results.Study) []results.Run {
	t.Helper()
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.Runs(context.Background(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// runStudy runs st into a fresh store and returns its record, its
// analysis and the progress lines.
func runStudy(t *testing.T, root string, st *study.Study, ledger *tier.Ledger) (*results.Study, *stats.Analysis, string) {
	t.Helper()
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lines := &syncWriter{}
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Ledger: ledger, Progress: progress.NewPlain(lines)})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, lines)
	}
	rec, err := store.Study(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := store.Runs(context.Background(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	return rec, stats.Analyze(rec, runs), lines.String()
}

// TestLargeEffectStopsEarly: Pebble with its WAL on RAM against a tier
// whose every fsync takes 2 ms, synced commits, one client, is better
// after the minimum of rounds, and the study stops once the interval is
// narrow enough, long before its max.
func TestLargeEffectStopsEarly(t *testing.T) {
	root, ledger := emulatedRoot(t)
	st := tinyStudy(t, nil, []study.Placement{
		{Name: "wal-slow", Components: map[string]string{"data": "ram", "wal": "slow"}},
		{Name: "wal-ram", Components: map[string]string{"data": "ram", "wal": "ram"}},
	})
	st.Tiers = []study.Tier{
		{Spec: tier.Spec{Name: "ram", Kind: tier.TmpfsSpec{Size: 64 << 20}}},
		{Spec: tier.Spec{Name: "slow", Kind: tier.TmpfsSpec{Size: 64 << 20}, Latency: &tier.LatencySpec{Fsync: 2 * time.Millisecond}}},
	}
	st.Durability, st.Clients = []engine.Durability{engine.Sync}, []int{1}
	// A second's window: tiny ones on a busy 2-core machine vary by a
	// quarter from round to round, and the rule is what is tested here.
	st.Duration = time.Second
	st.Repeat, st.Adaptive = 8, &study.Adaptive{Min: 3, Until: 0.5}
	rec, a, lines := runStudy(t, root, st, ledger)
	for _, l := range strings.Split(lines, "\n") {
		if strings.HasPrefix(l, "round ") {
			t.Log(l)
		}
	}
	g := a.Group(stats.Key{Series: "wal-ram", Durability: "sync", Clients: 1})
	t.Logf("wal-ram against wal-slow: %.2fx %v, %d rounds, %s", g.Ratio, g.RatioCI, rec.Rounds, rec.StopReason)
	// Better from the first min rounds on: judged on those alone.
	var first []results.Run
	for _, series := range []string{"wal-ram", "wal-slow"} {
		for _, r := range a.Group(stats.Key{Series: series, Durability: "sync", Clients: 1}).Runs {
			if r.Repeat <= 3 {
				first = append(first, r)
			}
		}
	}
	if atMin := stats.Analyze(rec, first).Group(stats.Key{Series: "wal-ram", Durability: "sync", Clients: 1}); atMin.Verdict != stats.Better || atMin.Pairs != 3 {
		t.Errorf("after 3 rounds: %s over %d rounds, want better\n%s", atMin.Verdict, atMin.Pairs, lines)
	}
	// It stops as soon as the interval is narrow enough: the first min
	// rounds of 1 s windows on a busy machine may leave it at ±50-60%, a
	// fourth or fifth narrows it, long before max.
	if g.Verdict != stats.Better || rec.StopReason != results.StopConverged || rec.Rounds >= 8 {
		t.Errorf("ran %d rounds (%s), stopped: %s; want better, converged before 8\n%s", rec.Rounds, g.Verdict, rec.StopReason, lines)
	}
	if !strings.Contains(lines, "round 3 of 3-8: widest 95% CI half-width ±") || !strings.Contains(lines, "every comparison is decided or within ±50.0%: stopping") {
		t.Errorf("the progress does not say why it stopped:\n%s", lines)
	}
	if rec.RepeatPlan == nil || rec.RepeatPlan.Min != 3 || rec.RepeatPlan.Max != 8 || rec.Order != results.OrderRounds {
		t.Errorf("the record lacks the plan or the order: %+v %s", rec.RepeatPlan, rec.Order)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestDecidedBlockStops is a real Pebble study of two blocks: with synced
// commits a WAL whose fsyncs take 200 us against one whose take 5 ms is
// decided (better) after the first rounds, while unsynced the two
// placements are the same and, with a margin and until of 1% on windows
// this short, never decided. The synced block stops: it ran fewer rounds
// than the other, the record says after which round, and each of its
// stored runs is still paired with its baseline's in the same round.
func TestDecidedBlockStops(t *testing.T) {
	root, ledger := emulatedRoot(t)
	st := tinyStudy(t, nil, []study.Placement{
		{Name: "wal-slow", Components: map[string]string{"data": "ram", "wal": "slow"}},
		{Name: "wal-fast", Components: map[string]string{"data": "ram", "wal": "fast"}},
	})
	st.Tiers = []study.Tier{
		{Spec: tier.Spec{Name: "ram", Kind: tier.TmpfsSpec{Size: 64 << 20}}},
		{Spec: tier.Spec{Name: "fast", Kind: tier.TmpfsSpec{Size: 64 << 20}, Latency: &tier.LatencySpec{Fsync: 200 * time.Microsecond}}},
		{Spec: tier.Spec{Name: "slow", Kind: tier.TmpfsSpec{Size: 64 << 20}, Latency: &tier.LatencySpec{Fsync: 5 * time.Millisecond}}},
	}
	st.Durability, st.Clients = []engine.Durability{engine.Sync, engine.NoSync}, []int{1}
	st.Duration, st.Margin = 500*time.Millisecond, 0.01
	// Up to 9 rounds: on a busy machine every round is disturbed, and up
	// to min more run before any block may stop (disturbed runs).
	st.Repeat, st.Adaptive = 9, &study.Adaptive{Min: 3, Until: 0.01}
	rec, a, lines := runStudy(t, root, st, ledger)
	for _, l := range strings.Split(lines, "\n") {
		if strings.HasPrefix(l, "round ") || strings.Contains(l, "is decided after") {
			t.Log(l)
		}
	}
	for _, j := range a.Comparisons {
		t.Logf("%s %s %s against %s %s: %.2fx %v over %d pairs (alpha share %.3f), stopped after %d", j.Kind, j.Series, j.Durability, j.Against, j.AgainstDurability, j.Ratio, j.CI95, j.Pairs, j.AlphaShare, j.StoppedAfter)
	}
	rounds := map[string]map[int]map[string]bool{} // durability -> round -> placement
	for _, g := range a.Groups {
		for _, r := range g.Runs {
			if rounds[r.Durability] == nil {
				rounds[r.Durability] = map[int]map[string]bool{}
			}
			if rounds[r.Durability][r.Repeat] == nil {
				rounds[r.Durability][r.Repeat] = map[string]bool{}
			}
			rounds[r.Durability][r.Repeat][r.Placement] = true
		}
	}
	if len(rec.Decided) != 1 || rec.Decided[0].Durability != "sync" || rec.Decided[0].AfterRound >= rec.Rounds {
		t.Fatalf("decided blocks %+v after %d rounds (%s): want the synced block alone, before the last round\n%s", rec.Decided, rec.Rounds, rec.StopReason, lines)
	}
	if s, n := len(rounds["sync"]), len(rounds["nosync"]); s != rec.Decided[0].AfterRound || s >= n {
		t.Errorf("the synced block ran %d rounds, the unsynced %d; want %d and more", s, n, rec.Decided[0].AfterRound)
	}
	for round, ran := range rounds["sync"] {
		if !ran["wal-slow"] || !ran["wal-fast"] {
			t.Errorf("round %d of the synced block ran %v: a run without its pair", round, ran)
		}
	}
	g := a.Group(stats.Key{Series: "wal-fast", Durability: "sync", Clients: 1})
	if g.Verdict != stats.Better {
		t.Errorf("wal-fast synced: %s %.2fx %v, want better", g.Verdict, g.Ratio, g.RatioCI)
	}
}

// TestIdenticalPlacementsAreNeverDifferent is an A/A' study: four
// placements on the same storage, two durability modes and two client
// counts over five whole shuffled rounds, judged with the study's guard
// against many comparisons. No placement comparison, nor any of the load
// generator's CPU per op, may read better or worse (the durability modes
// truly differ, and may). The guard holds the chance of any wrong verdict
// in a study at 5%, so a study that has one is run once more with another
// order seed: a broken analysis (an order's bias, unguarded verdicts: 36
// comparisons at 5% each go wrong in most studies) fails twice, a sound
// one both times in at most 0.25% of CI runs.
func TestIdenticalPlacementsAreNeverDifferent(t *testing.T) {
	var wrong []string
	for attempt, seed := range []uint64{1, 2} {
		root := t.TempDir()
		st := tinyStudy(t, map[string]string{"a": filepath.Join(root, "a"), "b": filepath.Join(root, "b")}, []study.Placement{
			{Name: "on-a", Components: map[string]string{"data": "a", "wal": "a"}},
			{Name: "on-b", Components: map[string]string{"data": "b", "wal": "b"}},
			{Name: "on-a2", Components: map[string]string{"data": "a", "wal": "a"}},
			{Name: "wal-b", Components: map[string]string{"data": "a", "wal": "b"}},
		})
		st.Durability, st.Clients = []engine.Durability{engine.Sync, engine.NoSync}, []int{1, 2}
		st.Warmup, st.Duration = 50*time.Millisecond, 200*time.Millisecond
		st.Repeat, st.Order = 5, study.Order{Seed: seed, SeedSet: true}
		rec, a, _ := runStudy(t, root, st, nil)
		wrong = nil
		s := a.Summary()
		for _, j := range a.Comparisons {
			if j.Kind != stats.KindDurability && (j.Verdict == stats.Better || j.Verdict == stats.Worse) {
				wrong = append(wrong, fmt.Sprintf("%s %s %s c=%d against %s: %.3fx %v p %.4f adjusted %.4f", j.Verdict, j.Kind, j.Series, j.Clients, j.Against, j.Ratio, j.CI95, *j.P, *j.PAdjusted))
			}
		}
		t.Logf("attempt %d (order seed %d): %d comparisons judged, %d better or worse (%d by raw p values); wrong: %v", attempt+1, rec.OrderSeed, s.Judged, s.Decided, s.RawDecided, wrong)
		if rec.OrderSeed != seed || rec.Rounds != 5 || rec.StopReason != results.StopFixed || s.ByKind[stats.KindPlacement] != 12 {
			t.Errorf("record: seed %d rounds %d stop %s, family %v", rec.OrderSeed, rec.Rounds, rec.StopReason, s.ByKind)
		}
		if len(wrong) == 0 {
			return
		}
	}
	t.Errorf("identical placements called different twice: %v", wrong)
}

// TestWithOrder: a new study draws a seed unless it gave one or a fixed
// order; a resumed study takes its stored order, fixed for one stored
// before orders were.
func TestWithOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		given  study.Order
		resume *results.Study
		check  func(study.Order) bool
	}{
		{"drawn", study.Order{}, nil, func(o study.Order) bool { return o.SeedSet && !o.Fixed }},
		{"given", study.Order{Seed: 7, SeedSet: true}, nil, func(o study.Order) bool { return o.Seed == 7 }},
		{"fixed", study.Order{Fixed: true}, nil, func(o study.Order) bool { return o.Fixed }},
		{"resumed", study.Order{}, &results.Study{Order: results.OrderRounds, OrderSeed: 9}, func(o study.Order) bool { return o.Seed == 9 && !o.Fixed && !o.BlocksInPlace }},
		{"resumed from before whole rounds", study.Order{}, &results.Study{Order: results.OrderShuffled, OrderSeed: 9}, func(o study.Order) bool { return o.Seed == 9 && o.BlocksInPlace }},
		{"resumed from before orders", study.Order{Seed: 5, SeedSet: true}, &results.Study{}, func(o study.Order) bool { return o.Fixed }},
	} {
		st := &study.Study{Order: tc.given}
		if got := withOrder(st, tc.resume).Order; !tc.check(got) {
			t.Errorf("%s: %+v", tc.name, got)
		}
		if st.Order != tc.given {
			t.Errorf("%s: the study given was changed", tc.name)
		}
	}
}

// TestResumeKeepsTheShuffledOrder interrupts a shuffled study in its
// second run and resumes it: every stored run is the cell its sequence
// number has in the order the stored seed draws, before and after the
// resume.
func TestResumeKeepsTheShuffledOrder(t *testing.T) {
	root := t.TempDir()
	disk := filepath.Join(root, "disk")
	st := tinyStudy(t, map[string]string{"disk": disk}, []study.Placement{
		{Name: "a", Components: map[string]string{"data": "disk", "wal": "disk"}},
		{Name: "b", Components: map[string]string{"data": "disk", "wal": "disk"}},
	})
	st.Durability, st.Clients = []engine.Durability{engine.Sync, engine.NoSync}, []int{1, 2}
	st.Warmup, st.Duration = 50*time.Millisecond, 200*time.Millisecond
	st.Repeat, st.Order = 2, study.Order{Seed: 3, SeedSet: true}
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lines := &syncWriter{}
	ctx := ctrlCAt(lines, "[2/16", 0)
	first, err := Run(ctx, st, Options{Catalog: catalog.Default(), Store: store, Progress: progress.NewPlain(lines)})
	if err != nil || !first.Interrupted {
		t.Fatalf("first attempt: %+v, %v", first, err)
	}
	prev, err := store.Study(context.Background(), first.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Resume: prev}); err != nil {
		t.Fatal(err)
	}
	runs, _ := store.Runs(context.Background(), prev.ID)
	ordered := *st
	ordered.Order = study.Order{Seed: prev.OrderSeed, SeedSet: true}
	want := ordered.Matrix()
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(runs), len(want))
	}
	blocks := map[int][]string{}
	for _, r := range runs {
		c := want[r.Seq-1]
		if r.Placement != c.Placement.Name || r.Repeat != c.Repeat || r.Durability != string(c.Durability) || r.Clients != c.Clients {
			t.Errorf("run %d is %s %s c=%d #%d, the seed's order has %s %s c=%d #%d there", r.Seq, r.Placement, r.Durability, r.Clients, r.Repeat,
				c.Placement.Name, c.Durability, c.Clients, c.Repeat)
		}
	}
	for _, c := range want {
		if b := fmt.Sprintf("%s c=%d", c.Durability, c.Clients); !slices.Contains(blocks[c.Repeat], b) {
			blocks[c.Repeat] = append(blocks[c.Repeat], b)
		}
	}
	// Whole rounds are shuffled: the blocks of one durability and client
	// count run in another order in the second round than in the first.
	if slices.Equal(blocks[1], blocks[2]) || len(blocks[1]) != 4 {
		t.Errorf("the blocks ran in the same order in both rounds: %v", blocks)
	}
	t.Logf("blocks by round: %v", blocks)
}

// TestWindowChosenAfterTheFact: under a steady-state warmup a Pebble run
// lasts the warmup's most and its duration, and MSER's cut after the fact
// chooses its measured window: the run records the cut as its warmup,
// measures everything after it, and the series' measured intervals start
// there.
func TestWindowChosenAfterTheFact(t *testing.T) {
	root := t.TempDir()
	st := tinyStudy(t, map[string]string{"a": filepath.Join(root, "a")}, []study.Placement{
		{Name: "on-a", Components: map[string]string{"data": "a", "wal": "a"}},
	})
	st.Warmup, st.Duration = 2*time.Second, time.Second
	st.Steady = &study.Steady{Band: 0.5, Window: time.Second}
	_, a, lines := runStudy(t, root, st, nil)
	g := a.Group(stats.Key{Series: "on-a", Durability: "nosync", Clients: 2})
	if g == nil || len(g.Runs) != 1 {
		t.Fatalf("no ok run:\n%s", lines)
	}
	r := g.Runs[0]
	tr := r.Truncation
	if tr == nil || !tr.Chosen {
		t.Fatalf("truncation %+v, want the window chosen by it", tr)
	}
	t.Logf("cut at %.2fs, measured share %.2f, steady after %v; measured %.2fs, warmup %.2fs", tr.AtS, tr.MeasuredShare, *tr.SteadyAfter, r.DurationS, r.WarmupS)
	if r.WarmupS != tr.AtS || tr.AtS > 2 || r.DurationS < 3-tr.AtS-0.25 || r.WarmupSteady == nil {
		t.Errorf("warmup %.2fs (cut %.2fs), measured %.2fs: want the warmup at the cut and everything after it measured", r.WarmupS, tr.AtS, r.DurationS)
	}
	for _, iv := range r.Timeline {
		if measured := iv.Phase == "measured"; measured != (iv.T-iv.Length >= tr.AtS-1e-9) {
			t.Errorf("interval ending at %.2fs is %s, the cut is at %.2fs", iv.T, iv.Phase, tr.AtS)
		}
	}
}

// TestNextRoundCountsCellsStillRunning: the budget reckons the next round
// by the cells of the blocks still running, each as long as the longest a
// cell took, never longer than the longest round: a decided block's
// cells cost nothing more.
func TestNextRoundCountsCellsStillRunning(t *testing.T) {
	st := &study.Study{
		Placements: []study.Placement{{Name: "a"}, {Name: "b"}},
		Durability: []engine.Durability{engine.Sync}, Clients: []int{1, 16}, Repeat: 5,
	}
	for _, c := range []struct {
		name    string
		decided []results.DecidedBlock
		perCell time.Duration
		want    time.Duration
	}{
		{"no block decided", nil, 10 * time.Second, 40 * time.Second},
		{"one of two decided", []results.DecidedBlock{{Durability: "sync", Clients: 1, AfterRound: 3}}, 10 * time.Second, 20 * time.Second},
		{"never above the longest round", nil, 15 * time.Second, 40 * time.Second},
		{"capacity rounds, or none timed by cell", nil, 0, 40 * time.Second},
	} {
		s := &studyRun{st: st, rec: &results.Study{Decided: c.decided}}
		p := &roundPlan{st: st, rounds: 3, longest: 40 * time.Second, perCell: c.perCell}
		if got := s.next(p); got != c.want {
			t.Errorf("%s: next round %s, want %s", c.name, got, c.want)
		}
	}
}

// TestRoundsPastMinSkipCrashRuns: an adaptive study runs its crash runs
// (whose throughput no verdict judges) through its min rounds only, and a
// decided block's cells in no later round; a fixed study runs every cell
// of every round.
func TestRoundsPastMinSkipCrashRuns(t *testing.T) {
	crash := study.Cell{Durability: engine.Sync, Clients: 16, Variant: study.Variant{Crash: study.CrashPower}}
	plain := study.Cell{Durability: engine.Sync, Clients: 16, Variant: study.Variant{Crash: study.CrashNone}}
	other := study.Cell{Durability: engine.Sync, Clients: 1}
	adaptive := &studyRun{st: &study.Study{Repeat: 8, Adaptive: &study.Adaptive{Min: 3}},
		rec: &results.Study{Decided: []results.DecidedBlock{{Durability: "sync", Clients: 1, AfterRound: 3}}}}
	fixed := &studyRun{st: &study.Study{Repeat: 8}, rec: &results.Study{}}
	for _, tc := range []struct {
		name  string
		s     *studyRun
		cell  study.Cell
		round int
		want  bool
	}{
		{"a crash run within min", adaptive, crash, 3, false},
		{"a crash run past min", adaptive, crash, 4, true},
		{"a run without a crash past min", adaptive, plain, 4, false},
		{"a decided block's run", adaptive, other, 4, true},
		{"a fixed study's crash run", fixed, crash, 8, false},
	} {
		if got := tc.s.skips(tc.cell, tc.round); got != tc.want {
			t.Errorf("%s: skips %v, want %v", tc.name, got, tc.want)
		}
	}
}
