package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/results"
)

// TestSearchTimeCountsKeptEngines: the searches' time counts the steps
// that opened their engine apart from those that drove one kept open,
// reckons a fixed-rate study by the opening steps (a fixed-rate run opens,
// loads and closes its own), and takes the wall time from the study
// record's rounds of searches when it has them, charging each fixed-rate
// run what a search spent besides its steps (closing its engine, the
// time between steps).
func TestSearchTimeCountsKeptEngines(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	step := func(seq int, placement string, round int, took time.Duration, keptFrom string) results.Run {
		return results.Run{Seq: seq, Placement: placement, Durability: "sync", Clients: 8, Repeat: round,
			StartedAt: at, FinishedAt: at.Add(took), EngineKeptFrom: keptFrom}
	}
	runs := []results.Run{
		step(1, "a", 1, 20*time.Second, ""), step(2, "b", 1, 20*time.Second, ""),
		step(3, "a", 1, 10*time.Second, "r1"), step(4, "b", 1, 10*time.Second, "r2"),
		step(5, "a", 1, 10*time.Second, "r1"),
	}
	entries := []*CapacityEntry{{Series: "a"}, {Series: "b"}}
	for _, c := range []struct {
		name         string
		rounds       []results.SearchRound
		wallS, fixed float64
		text         string
	}{
		{"stored before rounds were kept", nil, 0, 40, "The search ran 5 steps (2.5 a search) on 2 engines opened (the others kept open across their search's steps) in 1m10s; a fixed-rate study of the same matrix is 2 runs, about 40s at the mean of 20s of a step that opened its engine (1.8x)."},
		{"rounds kept", []results.SearchRound{{Round: 1, Searches: 2, Steps: 5, EngineStarts: 2, WallS: 72}}, 72, 42,
			"in 1m12s; a fixed-rate study of the same matrix is 2 runs, about 42s at the mean of 20s of a step that opened its engine, and 1.0s a search spent closing its engine and between steps (1.7x)."},
	} {
		st := &results.Study{SearchRounds: c.rounds}
		got := searchTime(st, runs, entries)
		if got.Steps != 5 || got.EngineStarts != 2 || got.MeanOpeningStepS != 20 || got.FixedRateS != c.fixed || got.WallS != c.wallS {
			t.Errorf("%s: %+v, want 5 steps, 2 engines opened at 20 s each, a fixed-rate study of %g s, wall %g s", c.name, got, c.fixed, c.wallS)
		}
		if text := got.TimeText(); !strings.Contains(text, c.text) {
			t.Errorf("%s: %q, want it to say %q", c.name, text, c.text)
		}
	}
}

// TestFixedRateRunsAreFullOpeningSteps: a step that opened its engine and
// ended early (a miss, a probe that passed) is shorter than any fixed-rate
// run, so the fixed-rate study is reckoned by the opening steps that ran
// their course, and by all of them only when none did.
func TestFixedRateRunsAreFullOpeningSteps(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	step := func(placement string, took time.Duration, ended string) results.Run {
		return results.Run{Placement: placement, Durability: "sync", Clients: 8, Repeat: 1, StartedAt: at, FinishedAt: at.Add(took), EndedEarly: ended}
	}
	entries := []*CapacityEntry{{Series: "a"}, {Series: "b"}}
	for _, c := range []struct {
		name string
		runs []results.Run
		want float64
	}{
		{"one ran its course", []results.Run{step("a", 20*time.Second, ""), step("b", 4*time.Second, "after 2s of 13s: a probe")}, 20},
		{"none ran its course", []results.Run{step("a", 6*time.Second, "after 3s"), step("b", 4*time.Second, "after 2s")}, 5},
	} {
		if got := searchTime(&results.Study{}, c.runs, entries); got.MeanOpeningStepS != c.want || got.FixedRateS != 2*c.want {
			t.Errorf("%s: a fixed-rate run of %g s, study %g s; want %g and %g", c.name, got.MeanOpeningStepS, got.FixedRateS, c.want, 2*c.want)
		}
	}
}
