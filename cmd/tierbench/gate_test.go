package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
)

// gateStudy is a tiny Pebble study of synced commits on one tier:
// TIER is its definition. Five rounds of half a second.
const gateStudy = `name: gate
engine: pebble
tiers:
  fast: TIER
placements:
  all-fast: {data: fast, wal: fast}
baseline: all-fast
durability: [sync]
workload: {name: ycsb-a, records: 1000}
clients: [4]
warmup: 200ms
duration: 500ms
repeat: 5
`

// TestCompareGate runs the regression gate on real studies: a study
// against itself passes; the same study with every fsync slowed by 2 ms
// (an emulated tier: tierbench's FUSE layer, a real delay in each commit)
// fails it, naming the comparisons that regressed, with exit 1 and
// nothing else exiting 1; a bad condition exits 2 naming the values; a
// study from another host is refused unless --force.
func TestCompareGate(t *testing.T) {
	if err := emulate.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	work := t.TempDir()
	resultsDir := filepath.Join(work, "results")
	ram := ramDir(t)
	var ids []string
	for _, c := range []struct{ name, tier string }{
		{"baseline", fmt.Sprintf("{path: %s}", filepath.Join(ram, "baseline"))},
		{"candidate", fmt.Sprintf("{path: %s, latency: {fsync: 2ms}}", filepath.Join(ram, "candidate"))},
	} {
		st := writeStudy(t, t.TempDir(), strings.Replace(gateStudy, "TIER", c.tier, 1))
		if r := tierbench(t, "run", st, "--results", resultsDir); r.code != 0 {
			t.Fatalf("run the %s study: exit %d\n%s\n%s", c.name, r.code, r.stdout, r.stderr)
		}
		ids = studyIDs(t, resultsDir) // newest first
	}
	candidate, baseline := ids[0], ids[1]

	// A study against itself: every comparison equivalent, the gate passes.
	r := tierbench(t, "compare", baseline, baseline, "--results", resultsDir, "--fail-on", "worse")
	t.Logf("the baseline against itself, exit %d:\n%s", r.code, gateLines(r.stdout))
	if r.code != 0 || !strings.Contains(r.stdout, "gate --fail-on worse: passed: none of 3 comparisons worse") {
		t.Errorf("a study against itself: exit %d, want 0 and the gate passed\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Every commit waits 2 ms more: throughput falls and p99 rises, worse.
	r = tierbench(t, "compare", baseline, candidate, "--results", resultsDir, "--fail-on", "worse")
	t.Logf("the candidate with fsync slowed by 2 ms, exit %d:\n%s", r.code, gateLines(r.stdout))
	want := fmt.Sprintf("FAIL throughput (ops/s, higher is better) of all-fast sync c=4, %s against %s: ", candidate, baseline)
	if r.code != exitGateFailed || !strings.Contains(r.stdout, "gate --fail-on worse: FAILED: ") || !strings.Contains(r.stdout, want) ||
		!strings.Contains(r.stderr, "regression gate failed") {
		t.Errorf("a real slowdown: exit %d, want %d and the throughput named\n%s%s", r.code, exitGateFailed, r.stdout, r.stderr)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "FAIL ") && (!strings.Contains(line, "x [") || !strings.Contains(line, "adjusted p ") || !strings.HasSuffix(line, ": worse")) {
			t.Errorf("a failing line lacks its ratio, CI, adjusted p or verdict: %q", line)
		}
	}

	// Without --fail-on, compare reports and exits 0 as before.
	if r = tierbench(t, "compare", baseline, candidate, "--results", resultsDir); r.code != 0 || strings.Contains(r.stdout, "gate") {
		t.Errorf("compare without --fail-on: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// not-equivalent, beside JSON: stdout stays one document, the gate's
	// lines go to stderr.
	r = tierbench(t, "compare", baseline, candidate, "--results", resultsDir, "--fail-on", "not-equivalent", "--format", "json")
	var doc struct{ Rows []struct{ Verdict string } }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Rows) != 3 {
		t.Errorf("compare --format json with the gate: %v\n%s", err, r.stdout)
	}
	if r.code != exitGateFailed || !strings.Contains(r.stderr, "gate --fail-on not-equivalent: FAILED: ") {
		t.Errorf("--fail-on not-equivalent: exit %d\n%s", r.code, r.stderr)
	}

	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an unknown condition", []string{"compare", baseline, candidate, "--fail-on", "slower"}, exitBadInput, "unknown --fail-on \"slower\": use worse or not-equivalent"},
		{"a study not stored", []string{"compare", baseline, "20990101-000000-abcdef", "--fail-on", "worse"}, exitNothingStored, "not found"},
	} {
		if r = tierbench(t, append(c.args, "--results", resultsDir)...); r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d (want %d)\n%s", c.name, r.code, c.code, r.stderr)
		}
	}

	// The candidate's record as if it had run on another machine.
	store, err := results.OpenExisting(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Study(context.Background(), candidate)
	if err == nil {
		st.Env.Hostname = "another-host"
		err = store.PutStudy(context.Background(), st)
	}
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	r = tierbench(t, "compare", baseline, candidate, "--results", resultsDir, "--fail-on", "worse")
	if r.code != exitBadInput || !strings.Contains(r.stderr, "host differs: ") || !strings.Contains(r.stderr, candidate+" on another-host (") ||
		!strings.Contains(r.stderr, "pass --force") {
		t.Errorf("a study of another host: exit %d, want %d naming the host\n%s", r.code, exitBadInput, r.stderr)
	}
	if r = tierbench(t, "compare", baseline, candidate, "--results", resultsDir, "--fail-on", "worse", "--force"); r.code != exitGateFailed {
		t.Errorf("--force with another host: exit %d, want the gate's %d\n%s", r.code, exitGateFailed, r.stderr)
	}
}

// gateLines are the gate's lines of compare's output.
func gateLines(out string) string {
	if i := strings.Index(out, "gate --fail-on"); i >= 0 {
		return out[i:]
	}
	return "(no gate lines)"
}
