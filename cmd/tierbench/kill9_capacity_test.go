package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// kill9CapacityStudy is a capacity study of two placements, one client
// count and two rounds, each step a run of about a second: round 1's
// searches start cold at 500 ops/s, round 2's from round 1's capacities.
// Where the objective fails depends on the machine; the test does not.
// The bound is loose and the window a second long, so that a busy
// machine's steps miss by falling behind their rate at its top, not at
// every rate: a search that missed down to a rate of a few ops/s would
// find no operation in its window, and no capacity.
const kill9CapacityStudy = `name: kill9-capacity
engine: pebble
tiers:
  ram:  {path: %q}
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
baseline: all-disk
durability: [sync]
workload:
  name: ycsb-a
  records: 2000
clients: [4]
warmup: 200ms
duration: 1s
repeat: 2
options: {cache: 8MiB}
slo: {p50: 100ms}
search: {from: 500, resolution: 50%%, max: 16000}
`

// A capacity step's progress lines: "[7 wal-ram sync c=4 #1 at 2107
// ops/s] loading..." as its run begins (or "... driving the engine its
// search keeps open..." on the engine an earlier step opened), and "capacity wal-ram sync c=4 #1
// at 2107 ops/s: met (...)" once it is stored.
var (
	stepLoadingLine = func(round int) *regexp.Regexp {
		return regexp.MustCompile(`^\[\d+ \S+ sync c=4 #` + strconv.Itoa(round) + ` at \d+ ops/s\] (loading|driving the engine its search keeps open)\.\.\.`)
	}
	stepStoredLine = regexp.MustCompile(`^capacity \S+ sync c=4 #1 at \d+ ops/s: `)
)

// searchID names one capacity search: a placement's in a round.
type searchID struct {
	placement string
	round     int
}

func (s searchID) String() string { return fmt.Sprintf("%s #%d", s.placement, s.round) }

// TestKill9CapacityResume kills `tierbench run` of a capacity study with -9
// three times mid-search (while a step of round 1 runs, right after a
// step of round 1 is stored, while a step of round 2 runs), each time
// running `cleanup` and then `run --resume`. Each resume takes up every
// search at its next step: a search's steps stored before a kill stay its
// first steps, and its next step is at the rate those steps call for
// (capacity.Next), not the search's start again; each step of every
// search follows from the steps before it. The study ends done with a
// complete answer: every search of both rounds finished, each placement's
// capacity found in both rounds, and nothing is left behind.
// TIERBENCH_KILL9_SEED=N draws the same delays again.
func TestKill9CapacityResume(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TIERBENCH_KILL9_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TIERBENCH_KILL9_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (TIERBENCH_KILL9_SEED=%d draws these delays again)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed>>32))

	work := t.TempDir()
	w := &kill9World{t: t, ram: ramDir(t), disk: filepath.Join(work, "disk"), state: filepath.Join(work, "state"),
		results: filepath.Join(work, "results"), stored: map[string]string{}, done: map[string]bool{}}
	for _, d := range []string{w.state, w.results} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	studyFile := writeStudy(t, work, fmt.Sprintf(kill9CapacityStudy, w.ram, w.disk))
	events := watchWrites(t, w.results, w.state)

	// Round 1 has at least four steps (each search at least two), round
	// 2 at least two (one each); a run's warmup and window take longer
	// than any delay here, so the first and third kills land in a step's
	// run, the second between a step stored and the next begun.
	moments := []moment{
		{kind: "round 1, in step 4", line: stepLoadingLine(1), nth: 4, delay: between(rng, 0, 250*time.Millisecond)},
		{kind: "round 1, a step just stored", line: stepStoredLine, nth: 1, delay: between(rng, 0, 5*time.Millisecond)},
		{kind: "round 2, in its step 2", line: stepLoadingLine(2), nth: 2, delay: between(rng, 0, 250*time.Millisecond)},
	}
	// before holds each kill's searches as stored after its cleanup.
	var before []map[searchID][]results.Run
	id := ""
	for i, m := range moments {
		args := []string{"run", studyFile, "--results", w.results}
		if id != "" {
			args = []string{"run", "--resume", id, "--results", w.results}
		}
		out := w.attempt(args, m, events)
		if !out.killed {
			t.Fatalf("kill %d (%s) never came: exit %d after %s\n%s", i+1, m.kind, out.code, out.took, out.stderr)
		}
		status := w.check(fmt.Sprintf("kill %d", i+1))
		if id == "" {
			if id = w.unfinished(status); id == "" {
				t.Fatalf("kill %d: no study stored\n%s", i+1, out.stderr)
			}
		}
		if r := runBinary(t, binary, "", w.env(), "cleanup"); r.code != 0 {
			t.Fatalf("kill %d: cleanup: exit %d\n%s%s", i+1, r.code, r.stdout, r.stderr)
		}
		if s := w.check(fmt.Sprintf("kill %d, after cleanup", i+1))[id]; s != results.StudyInterrupted {
			t.Fatalf("kill %d: after cleanup study %s is %s, want interrupted", i+1, id, s)
		}
		w.checkNothingLeft(fmt.Sprintf("kill %d, after cleanup", i+1))
		_, runs := w.capacityStudy(id)
		steps := searchesOf(runs)
		before = append(before, steps)
		t.Logf("kill %d at %dms, %s (%s): %s; stored: %s", i+1, out.took.Milliseconds(), m.kind, out.moment, doing(out.last), describeSearches(steps))
	}
	r := runBinary(t, binary, "", w.env(), "run", "--resume", id, "--results", w.results)
	if r.code != 0 {
		t.Fatalf("last resume: exit %d\n%s", r.code, r.stderr)
	}
	w.check("the end")
	w.checkNothingLeft("the end")

	st, runs := w.capacityStudy(id)
	final := searchesOf(runs)
	t.Logf("done: %s", describeSearches(final))
	if st.Status != results.StudyDone || st.Rounds != 2 || st.StopReason != results.StopFixed || len(st.ResumedAt) != len(moments) {
		t.Errorf("study %s: status %s, rounds %d, stop %q, resumed %d times; want done, 2 rounds, fixed, resumed %d times",
			id, st.Status, st.Rounds, st.StopReason, len(st.ResumedAt), len(moments))
	}
	for _, r := range runs {
		if r.Status != results.RunOK {
			t.Errorf("step %d (%s #%d at %.0f ops/s) is %s: %s", r.Seq, r.Placement, r.Repeat, r.TargetRate, r.Status, r.Error)
		}
	}
	dropped := map[string]int{}
	for _, d := range st.Dropped {
		dropped[d.Series] = d.AfterRound
	}

	// Each search continued at its next step after each kill.
	for i, was := range before {
		for sid, old := range was {
			now := final[sid]
			if len(now) < len(old) || !slices.EqualFunc(old, now[:len(old)], func(a, b results.Run) bool { return a.ID == b.ID }) {
				t.Errorf("kill %d: %s's steps %s stored before the resume are not its first steps %s", i+1, sid, rates(old), rates(now))
				continue
			}
			if len(now) == len(old) {
				continue // it had ended before the kill
			}
			want, more := capacity.Next(*st.Search, 0, warmSearch(st, final, sid), capacity.StepsOf(*st.SLO, old))
			switch got := now[len(old)].TargetRate; {
			case !more:
				t.Errorf("kill %d: %s had ended at %s, yet the resume ran a step at %.0f ops/s", i+1, sid, rates(old), got)
			case !sameRate(got, want):
				t.Errorf("kill %d: %s resumed at %.0f ops/s after %s, want its next step, %.0f ops/s", i+1, sid, got, rates(old), want)
			case now[len(old)].EngineKeptFrom != "":
				t.Errorf("kill %d: %s's first step after the resume drove the engine %s opened, which the kill took with it: a resumed search opens its own", i+1, sid, now[len(old)].EngineKeptFrom)
			default:
				t.Logf("kill %d: %s resumed after %s at its next step, %.0f ops/s, on an engine it opened again", i+1, sid, rates(old), got)
			}
		}
	}

	// Every search ran every step as its steps before called for, to its
	// end: the answer is complete.
	for _, p := range []string{"all-disk", "wal-ram"} {
		for round := 1; round <= 2; round++ {
			sid := searchID{p, round}
			steps := final[sid]
			if after, ok := dropped[p]; ok && round > after {
				if len(steps) > 0 {
					t.Errorf("%s was dropped after round %d, yet searched in round %d", p, after, round)
				}
				continue
			}
			if len(steps) == 0 {
				t.Errorf("%s: no step stored", sid)
				continue
			}
			// A search started again from scratch would run its start
			// again where its stored steps call for another rate.
			warm := warmSearch(st, final, sid)
			for j, r := range steps {
				if j == 0 {
					continue // the start, dithered within a resolution
				}
				if want, more := capacity.Next(*st.Search, 0, warm, capacity.StepsOf(*st.SLO, steps[:j])); !more || !sameRate(r.TargetRate, want) {
					t.Errorf("%s: step %d at %.0f ops/s; after %s the search calls for %.0f ops/s (more: %v)", sid, j+1, r.TargetRate, rates(steps[:j]), want, more)
				}
			}
			if rate, more := capacity.Next(*st.Search, 0, warm, capacity.StepsOf(*st.SLO, steps)); more {
				t.Errorf("%s ended unfinished after %s: its next step would be %.0f ops/s", sid, rates(steps), rate)
			}
		}
	}
	d := stats.DecideRuns(st, runs)
	if d == nil || len(d.Capacity) != 2 {
		t.Fatalf("the answer has no capacity of both placements: %+v", d)
	}
	for _, e := range d.Capacity {
		t.Logf("%s: %.0f ops/s in %d rounds, %d steps, %s", e.Series, e.OpsS, e.Rounds, e.Steps, e.Verdict)
		want := 2
		if after, ok := dropped[e.Series]; ok {
			want = after
		}
		if e.Rounds != want || e.Steps != len(final[searchID{e.Series, 1}])+len(final[searchID{e.Series, 2}]) {
			t.Errorf("%s: capacity in %d rounds from %d steps, want %d rounds", e.Series, e.Rounds, e.Steps, want)
		}
	}
	if r := runBinary(t, binary, "", w.env(), "show", id, "--results", w.results); r.code != 0 || !strings.Contains(r.stdout, "wal-ram") {
		t.Errorf("show %s: exit %d\n%s%s", id, r.code, r.stdout, r.stderr)
	}
}

// capacityStudy reads study id and its runs from the results store.
func (w *kill9World) capacityStudy(id string) (*results.Study, []results.Run) {
	w.t.Helper()
	store, err := results.OpenExisting(w.results)
	if err != nil {
		w.t.Fatal(err)
	}
	defer store.Close()
	st, err := store.Study(context.Background(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	runs, err := store.Runs(context.Background(), id)
	if err != nil {
		w.t.Fatal(err)
	}
	return st, runs
}

// searchesOf groups a capacity study's steps by search, in the order they
// ran.
func searchesOf(runs []results.Run) map[searchID][]results.Run {
	out := map[searchID][]results.Run{}
	for _, r := range runs {
		k := searchID{r.Placement, r.Repeat}
		out[k] = append(out[k], r)
	}
	for _, steps := range out {
		slices.SortFunc(steps, func(a, b results.Run) int { return a.Seq - b.Seq })
	}
	return out
}

// warmSearch says whether sid's search started from the round before's
// capacity, which sets its ramp (capacity.Next).
func warmSearch(st *results.Study, searches map[searchID][]results.Run, sid searchID) bool {
	prev := searches[searchID{sid.placement, sid.round - 1}]
	return capacity.Capacity(*st.Search, capacity.StepsOf(*st.SLO, prev)).OpsS > 0
}

// sameRate compares a stored step's rate with one computed again.
func sameRate(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(a, b) }

// rates prints a search's steps' rates: "[250 500 354]".
func rates(steps []results.Run) string {
	var parts []string
	for _, r := range steps {
		parts = append(parts, fmt.Sprintf("%.0f", r.TargetRate))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// describeSearches prints each search's rates, in a stable order.
func describeSearches(s map[searchID][]results.Run) string {
	keys := slices.SortedFunc(func(yield func(searchID) bool) {
		for k := range s {
			if !yield(k) {
				return
			}
		}
	}, func(a, b searchID) int {
		if a.round != b.round {
			return a.round - b.round
		}
		return strings.Compare(a.placement, b.placement)
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %s", k, rates(s[k])))
	}
	return strings.Join(parts, ", ")
}
