package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/results"
)

// kill9Study is small and quick: 2 placements x 2 client counts x 2
// rounds of runs under half a second, on a tmpfs and a disk folder.
const kill9Study = `name: kill9
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
clients: [1, 4]
warmup: 100ms
duration: 250ms
repeat: 2
options: {cache: 8MiB}
`

// kill9Runs is kill9Study's cells: placements x clients x rounds.
const kill9Runs = 2 * 2 * 2

// kill9Kills is how many times the test kills tierbench.
const kill9Kills = 20

// TestKill9AtRandomMoments kills `tierbench run` with -9 at 20 seeded
// moments of a small study (before anything is stored, while the study's
// record is stored, during a run, while a run is stored, at the study's
// end and report, and anywhere), each time running `cleanup` once and
// then `run --resume`, which is killed at the next moment, until the
// study is done; a new study then takes the kills that are left. After
// every kill the results store passes SQLite's integrity check, every run
// stored before the kill is there unchanged with its histograms, show
// reads the study, and cleanup leaves it interrupted (or done) and nothing
// behind: no ledger record, folder, mount or tierbench process. Every
// study ends done with exactly one ok run per cell and round.
// TIERBENCH_KILL9_SEED=N draws the same moments again (their times on the
// clock differ with the machine's load).
func TestKill9AtRandomMoments(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TIERBENCH_KILL9_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TIERBENCH_KILL9_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (TIERBENCH_KILL9_SEED=%d draws these moments again)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed>>32))

	work := t.TempDir()
	w := &kill9World{t: t, ram: ramDir(t), disk: filepath.Join(work, "disk"), state: filepath.Join(work, "state"),
		results: filepath.Join(work, "results"), stored: map[string]string{}, done: map[string]bool{}}
	for _, d := range []string{w.state, w.results} {
		if err := os.MkdirAll(d, 0o755); err != nil { // watched from the start
			t.Fatal(err)
		}
	}
	studyFile := writeStudy(t, work, fmt.Sprintf(kill9Study, w.ram, w.disk))
	events := watchWrites(t, w.results, w.state)
	deck := kill9Deck(rng)

	current := "" // the study being taken up again; "" before it is stored
	began := time.Now()
	for kills, attempt := 0, 1; ; attempt++ {
		if attempt > 3*kill9Kills {
			t.Fatalf("%d attempts for %d kills: the studies make no progress", attempt, kills)
		}
		var m moment
		if kills < kill9Kills {
			m = deck[kills](rng, kill9Runs-w.okRuns(current))
		}
		args := []string{"run", studyFile, "--results", w.results}
		if current != "" {
			args = []string{"run", "--resume", current, "--results", w.results}
		}
		out := w.attempt(args, m, events)
		if !out.killed {
			if out.code != 0 {
				t.Fatalf("attempt %d (%s): exit %d without a kill\n%s", attempt, strings.Join(args, " "), out.code, out.stderr)
			}
			id := w.unfinished(w.check(fmt.Sprintf("attempt %d", attempt)))
			w.checkDone(id)
			w.checkNothingLeft(fmt.Sprintf("attempt %d, which ended by itself", attempt))
			current = ""
			if kills == kill9Kills {
				t.Logf("attempt %d: study %s done without a kill after %s", attempt, id, out.took.Round(time.Millisecond))
				break
			}
			t.Logf("attempt %d: %s (%s after %s) came after its end (%s): study %s done; a new study takes the next kills",
				attempt, m.kind, m.delay.Round(100*time.Microsecond), m.anchor(), out.took.Round(time.Millisecond), id)
			continue
		}
		kills++
		current = w.afterKill(kills, current, m, out)
	}
	if len(w.done) == 0 {
		t.Fatal("no study was done")
	}
	for id := range w.check("the end") {
		if !w.done[id] {
			t.Errorf("study %s is stored but was never done", id)
		}
	}
	t.Logf("%d kills, %d studies done, each with its %d runs ok once, in %s", kill9Kills, len(w.done), kill9Runs, time.Since(began).Round(time.Second))
}

// afterKill checks the store, runs cleanup once and checks what it left,
// and says what the kill hit. It returns the study to resume, "" for a new
// one (none was stored, or the study was done).
func (w *kill9World) afterKill(kill int, current string, m moment, out attemptOutcome) string {
	t := w.t
	t.Helper()
	before := w.check(fmt.Sprintf("kill %d", kill))
	id := current
	if id == "" {
		id = w.unfinished(before)
	}
	r := runBinary(t, binary, "", w.env(), "cleanup")
	if r.code != 0 {
		t.Fatalf("kill %d: cleanup: exit %d\n%s%s", kill, r.code, r.stdout, r.stderr)
	}
	if r2 := runBinary(t, binary, "", w.env(), "cleanup"); !strings.Contains(r2.stdout, "nothing to clean up") {
		t.Errorf("kill %d: cleanup needed a second pass:\n%s%s", kill, r2.stdout, r2.stderr)
	}
	after := w.check(fmt.Sprintf("kill %d, after cleanup", kill))
	w.checkNothingLeft(fmt.Sprintf("kill %d, after cleanup", kill))
	status := "not stored"
	if id != "" {
		status = before[id] + " -> " + after[id]
		if s := after[id]; s != results.StudyInterrupted && s != results.StudyDone {
			t.Errorf("kill %d: after cleanup study %s is %s, want interrupted (or done)", kill, id, s)
		}
	}
	t.Logf("kill %2d at %5dms, %s: %s; %s%s; %d runs stored; study %s; cleanup undid %s",
		kill, out.took.Milliseconds(), m.kind, out.moment, doing(out.last), w.runStored(id, out.last), w.okRuns(id), status, undone(r.stdout))
	if id == "" || after[id] != results.StudyDone {
		return id
	}
	w.checkDone(id)
	if r := runBinary(t, binary, "", w.env(), "run", "--resume", id, "--results", w.results); r.code != 2 || !strings.Contains(r.stderr, "nothing to resume") {
		t.Errorf("kill %d: resume of the done study %s: exit %d, want 2: nothing to resume\n%s", kill, id, r.code, r.stderr)
	}
	return ""
}

// moment is when to kill: delay after an anchor (the start, the nth
// progress line matching line, or the ledger's first holding the study's
// scratch folder), or, with atStoreWrite, delay after the first write to
// the results store after the anchor.
type moment struct {
	kind         string
	line         *regexp.Regexp
	nth          int
	afterScratch bool
	atStoreWrite bool
	delay        time.Duration
}

// anchor says what the moment counts from.
func (m moment) anchor() string {
	switch {
	case m.line != nil:
		return fmt.Sprintf("progress line %d matching %s", m.nth, m.line)
	case m.afterScratch:
		return "the scratch folder's record in the ledger"
	}
	return "the start"
}

// A momentKind draws a moment of its kind in an attempt that has
// remaining runs to run.
type momentKind func(r *rand.Rand, remaining int) moment

var (
	loadingLine    = regexp.MustCompile(`^\[\d+/\d+ .*\] loading\.\.\.`)
	okLine         = regexp.MustCompile(`^\[\d+/\d+ .*\] ok: `)
	bottleneckLine = regexp.MustCompile(`^\[\d+/\d+\] bottleneck: `)
	resumingLine   = regexp.MustCompile(`^resuming: `)
)

func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
}

// studyEnd is a moment in the 12 ms after the attempt's last run said its
// bottleneck (or in the 8 ms after it said none is left to run): that run
// stored, the study's record stored as done, its workspace undone, the
// answer and report; tierbench ends some 10 ms after that line here.
func studyEnd(r *rand.Rand, remaining int) moment {
	if remaining == 0 {
		return moment{kind: "study-end", line: resumingLine, nth: 1, delay: between(r, 0, 8*time.Millisecond)}
	}
	return moment{kind: "study-end", line: bottleneckLine, nth: remaining, delay: between(r, 0, 12*time.Millisecond)}
}

// ofARun is a moment of one of the remaining runs, or the study's end when
// none is left.
func ofARun(f momentKind) momentKind {
	return func(r *rand.Rand, remaining int) moment {
		if remaining == 0 {
			return studyEnd(r, 0)
		}
		return f(r, remaining)
	}
}

// momentKinds are the kinds of moment, each with how many of the 20 kills
// it takes.
var momentKinds = []struct {
	kind  momentKind
	kills int
}{
	// Before anything is stored: flags, checks, opening the store.
	{func(r *rand.Rand, _ int) moment {
		return moment{kind: "early", delay: between(r, 0, 80*time.Millisecond)}
	}, 2},
	// The study's record being stored: up to 2 ms after the first write
	// to the store once the workspace's scratch folder is recorded (made
	// and confirmed) in the ledger.
	{func(r *rand.Rand, _ int) moment {
		return moment{kind: "study-record", afterScratch: true, atStoreWrite: true, delay: between(r, 0, 2*time.Millisecond)}
	}, 2},
	// Anywhere in a run: loading, warmup, measuring, closing.
	{ofARun(func(r *rand.Rand, remaining int) moment {
		return moment{kind: "run", line: loadingLine, nth: 1 + r.IntN(remaining), delay: between(r, 0, 400*time.Millisecond)}
	}), 4},
	// Up to 2 ms after the first write to the results store after a run
	// said ok: its record and histograms going in, or just in.
	{ofARun(func(r *rand.Rand, remaining int) moment {
		return moment{kind: "storing", line: okLine, nth: 1 + r.IntN(remaining), atStoreWrite: true, delay: between(r, 0, 2*time.Millisecond)}
	}), 4},
	// Just after a run's bottleneck line, which comes right before the run
	// is stored.
	{ofARun(func(r *rand.Rand, remaining int) moment {
		return moment{kind: "stored", line: bottleneckLine, nth: 1 + r.IntN(remaining), delay: between(r, 0, 5*time.Millisecond)}
	}), 2},
	{studyEnd, 3},
	// Anywhere over the attempt's expected length.
	{func(r *rand.Rand, remaining int) moment {
		return moment{kind: "uniform", delay: between(r, 0, 450*time.Millisecond+time.Duration(remaining)*400*time.Millisecond)}
	}, 3},
}

// kill9Deck is the kinds of the 20 kills in a seeded order.
func kill9Deck(r *rand.Rand) []momentKind {
	var deck []momentKind
	for _, k := range momentKinds {
		for range k.kills {
			deck = append(deck, k.kind)
		}
	}
	r.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
	return deck
}

var runLabel = regexp.MustCompile(`^\[(\d+)/\d+[ \]]`)

// doing says what tierbench was doing after the last line it printed.
func doing(last string) string {
	run := ""
	if m := runLabel.FindStringSubmatch(last); m != nil {
		run = "run " + m[1]
	}
	switch {
	case last == "":
		return "starting: checks, the store, the workspace, the study's record"
	case strings.HasPrefix(last, "note: "):
		return "preparing, the study's record stored"
	case strings.HasPrefix(last, "study "), resumingLine.MatchString(last):
		return "starting its first run (with none left: ending the study)"
	case loadingLine.MatchString(last):
		return "loading " + run
	case strings.Contains(last, " warmup "):
		return "measuring " + run
	case strings.Contains(last, " measured "):
		return "ending " + run + ": verify, close"
	case okLine.MatchString(last):
		return "closing " + run + ", then storing it"
	case bottleneckLine.MatchString(last):
		return "storing " + run + ", then the next run or the study's end"
	}
	return "after " + clip(last, 40)
}

// undone counts what cleanup's output says it undid, by kind.
func undone(out string) string {
	n := map[string]int{}
	var kinds []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, "undone: ")); strings.HasPrefix(l, "undone: ") && len(f) > 0 {
			if n[f[0]]++; n[f[0]] == 1 {
				kinds = append(kinds, f[0])
			}
		}
	}
	if len(kinds) == 0 {
		return "nothing"
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s x%d", k, n[k]))
	}
	return strings.Join(parts, ", ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
