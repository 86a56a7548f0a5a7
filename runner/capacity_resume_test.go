package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/progress"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
)

// TestResumeJudgesARoundOnItsRuns: a capacity study killed in round 2 and
// resumed judges round 1's end again before it goes on (Run calls
// dropDominated after each round, the rounds resume found done included).
// It must judge it on what round 1 stored, as the study did before the
// kill: round 2's searches, cut short by the kill, are no round's
// capacities yet, and with them the placement half as fast would be
// dropped "after round 1" on two rounds' evidence, in the middle of its
// round-2 search, which then never ends; an adaptive study would stop
// there. Once round 2 is complete, its end drops it on both rounds.
func TestResumeJudgesARoundOnItsRuns(t *testing.T) {
	store, err := results.Open(filepath.Join(t.TempDir(), "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	slo := &results.SLO{Percentile: "p50", BoundUs: 2000}
	search := results.Search{FromOpsS: 1000, Resolution: 0.5, MaxOpsS: 100_000}
	rec := &results.Study{ID: "20261207-060000-abcdef", Name: "resume-drop", Engine: "pebble", Workload: "ycsb-a", Baseline: "fast",
		Status: results.StudyRunning, StartedAt: time.Now().UTC(), SLO: slo, Search: &search, Durability: []string{"sync"}, Clients: []int{4},
		Placements: []results.Placement{{Name: "fast", Components: map[string]string{"data": "a", "wal": "a"}},
			{Name: "slow", Components: map[string]string{"data": "b", "wal": "b"}}}}
	if err := store.PutStudy(ctx, rec); err != nil {
		t.Fatal(err)
	}
	seq := 0
	// step stores one search step at rate: met or not.
	step := func(placement string, round int, rate float64, met bool) {
		t.Helper()
		seq++
		p50 := 500.0
		if !met {
			p50 = 5000
		}
		r := &results.Run{ID: fmt.Sprintf("%s-%03d", rec.ID, seq), StudyID: rec.ID, Seq: seq, Placement: placement, Durability: "sync",
			Clients: 4, Repeat: round, Status: results.RunOK, TargetRate: rate, ThroughputOpsS: rate, Ops: int64(rate),
			Latency: hist.Summary{P50: p50, P90: p50, P95: p50, P99: p50, P999: p50, Mean: p50}, ServiceTime: hist.Summary{Mean: 400}}
		if err := store.AddRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Round 1: fast carries 2828 ops/s, slow 1414.
	for _, s := range []struct {
		p     string
		rates []float64
		met   []bool
	}{
		{"fast", []float64{1000, 2000, 4000, 2828}, []bool{true, true, false, true}},
		{"slow", []float64{1000, 2000, 1414}, []bool{true, false, true}},
	} {
		for i, rate := range s.rates {
			step(s.p, 1, rate, s.met[i])
		}
	}
	// Round 2, killed in slow's search: fast's is done, slow's first step
	// met, its next (up) never ran.
	for i, rate := range []float64{2900, 8700, 5022, 3819} {
		step("fast", 2, rate, i == 0)
	}
	step("slow", 2, 1450, true)

	st := &study.Study{Repeat: 3, SLO: slo}
	var lines syncWriter
	s := &studyRun{st: st, rec: rec, opt: Options{Store: store, Progress: progress.NewPlain(&lines)}}
	if err := s.dropDominated(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if len(rec.Dropped) > 0 {
		t.Fatalf("round 1's end, judged again on resume, dropped %+v on round 2's unfinished search\n%s", rec.Dropped, lines.String())
	}
	// An adaptive study's stop rule, judged again at round 1's end, has
	// one round's pair and no interval: it runs round 2 on, however wide
	// an interval it would accept. With round 2's unfinished search as a
	// second pair, it stopped there, leaving that search unfinished.
	s.st = &study.Study{Repeat: 3, SLO: slo, Adaptive: &study.Adaptive{Min: 1, Until: 10}}
	plan := newRoundPlan(s.st)
	plan.ended(1, false, 0, 0)
	if err := s.judgeRound(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if plan.stop != "" {
		t.Fatalf("round 1's end, judged again on resume, stopped the study (%s) on round 2's unfinished search\n%s", plan.stop, lines.String())
	}
	s.st = st

	// Slow's round-2 search ends (up to 4350 missed: 1450 is its
	// capacity); at round 2's end, half fast's capacity in both rounds,
	// slow is dropped.
	step("slow", 2, 4350, false)
	step("slow", 2, 2512, false)
	step("slow", 2, 1909, false)
	if err := s.dropDominated(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if len(rec.Dropped) != 1 || rec.Dropped[0].Series != "slow" || rec.Dropped[0].AfterRound != 2 {
		t.Errorf("round 2's end dropped %+v, want slow after round 2\n%s", rec.Dropped, lines.String())
	}
}
