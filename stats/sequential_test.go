package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
)

// seqSim is a seeded simulation of sequential studies as the runner runs
// them: 4 placements x 2 blocks (clients 1 and 16), an adaptive repeat
// judged after each round from min on by the project's own Analyze and
// Blocks, a decided block no longer run, the study stopped once every
// block is decided or at max. Rounds drift ±20%; each run varies by
// spread (a log-normal sigma).
type seqSim struct {
	trials   int
	min, max int
	until    float64
	spread   float64
	truth    map[string]float64 // per placement; 1 when left out
	// fullAlpha judges every look at full alpha, as before issue 55: the
	// contrast the docs quote.
	fullAlpha bool
}

// seqOutcome counts what the simulated studies ended with.
type seqOutcome struct {
	studies          int
	anyWrong         int // studies with some better/worse against the truth
	covered, judged  int // comparisons whose 95% CI holds the truth
	found, effects   int // true effects called better
	studiesFound     int // studies in which every true effect was found
	rounds           int // rounds run, summed
	blockRounds      int // block rounds run, summed
	fewerRoundsBlock int // studies where one block stopped before the other
}

var simPlacements = []string{"all-disk", "wal-a", "wal-b", "wal-c"}

func (s seqSim) run(seed uint64) seqOutcome {
	rng := rand.New(rand.NewPCG(seed, 55))
	var out seqOutcome
	for range s.trials {
		st := &results.Study{Baseline: "all-disk", Durability: []string{"sync"}, Clients: []int{1, 16}, Repeat: s.max,
			RepeatPlan: &results.RepeatPlan{Min: s.min, Max: s.max, Until: s.until}}
		for _, p := range simPlacements {
			st.Placements = append(st.Placements, results.Placement{Name: p})
		}
		var runs []results.Run
		stopped := map[Block]bool{}
		blockScale := map[int]float64{1: 1000, 16: 9000}
		round := 0
		for round < s.max {
			round++
			drift := 0.8 + 0.4*rng.Float64()
			for _, c := range st.Clients {
				if stopped[Block{"sync", c}] {
					continue
				}
				out.blockRounds++
				for _, p := range simPlacements {
					truth := s.truth[p]
					if truth == 0 {
						truth = 1
					}
					runs = append(runs, results.Run{Placement: p, Durability: "sync", Clients: c, Repeat: round, Status: results.RunOK,
						ThroughputOpsS: blockScale[c] * truth * drift * math.Exp(s.spread*rng.NormFloat64())})
				}
			}
			if round < s.min {
				continue
			}
			st.Rounds = round
			states := Blocks(st, s.analyze(st, runs), s.until)
			all := true
			for _, b := range states {
				if b.Decided && !stopped[b.Block] {
					stopped[b.Block] = true
					st.Decided = append(st.Decided, results.DecidedBlock{Durability: b.Durability, Clients: b.Clients, AfterRound: round})
				}
				all = all && b.Decided
			}
			if all {
				break
			}
		}
		st.Rounds = round
		out.studies++
		out.rounds += round
		if len(st.Decided) == 1 || len(st.Decided) == 2 && st.Decided[0].AfterRound != st.Decided[1].AfterRound {
			out.fewerRoundsBlock++
		}
		a := s.analyze(st, runs)
		wrong, allFound := false, true
		for _, j := range a.Comparisons {
			truth := s.truth[j.Series]
			if truth == 0 {
				truth = 1
			}
			out.judged++
			if j.CI95 != nil && j.CI95[0] <= truth && truth <= j.CI95[1] {
				out.covered++
			}
			switch {
			case j.Verdict == Better && truth <= 1, j.Verdict == Worse && truth >= 1:
				wrong = true
			}
			if truth > 1 {
				out.effects++
				if j.Verdict == Better {
					out.found++
				} else {
					allFound = false
				}
			}
		}
		if wrong {
			out.anyWrong++
		}
		if allFound {
			out.studiesFound++
		}
	}
	return out
}

// analyze is Analyze, without looks when the simulation judges at full
// alpha.
func (s seqSim) analyze(st *results.Study, runs []results.Run) *Analysis {
	if !s.fullAlpha {
		return Analyze(st, runs)
	}
	c := *st
	c.RepeatPlan = nil
	return Analyze(&c, runs)
}

func rate(n, of int) float64 { return float64(n) / float64(max(of, 1)) }

// TestSequentialStudies is issue 55's check of the stopping rules as
// built: in seeded simulations of adaptive studies with block stopping,
// per-run spreads of 2-7% and rounds drifting ±20%, the chance of any
// wrong better/worse verdict in a study stays at or under 5%, the 95% CI
// at the stop holds the truth in at least 94% of comparisons, and a true
// 10% gain is found within max in at least 80% of studies.
func TestSequentialStudies(t *testing.T) {
	const trials = 200
	cases := []struct {
		name   string
		spread float64
		truth  map[string]float64
		min    int
	}{
		{"identical, 2% spread, min 3", 0.02, nil, 3},
		{"identical, 7% spread, min 2", 0.07, nil, 2},
		{"one 10% faster, 7% spread, min 3", 0.07, map[string]float64{"wal-a": 1.10}, 3},
		{"one 10% faster, one 2.5x, 4.5% spread, min 3", 0.045, map[string]float64{"wal-a": 1.10, "wal-b": 2.5}, 3},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim := seqSim{trials: trials, min: tc.min, max: 30, until: 0.05, spread: tc.spread, truth: tc.truth}
			o := sim.run(uint64(100 + i))
			wrong, coverage := rate(o.anyWrong, o.studies), rate(o.covered, o.judged)
			t.Logf("%d studies: any wrong better/worse %.1f%%, coverage at the stop %.1f%%, mean rounds %.1f, block rounds %.1f a study; effects found %.1f%% (all of a study's in %.1f%%)",
				o.studies, 100*wrong, 100*coverage, rate(o.rounds, o.studies), rate(o.blockRounds, o.studies), 100*rate(o.found, o.effects), 100*rate(o.studiesFound, o.studies))
			if wrong > 0.05 {
				t.Errorf("some wrong better/worse in %.1f%% of studies, want at most 5%%", 100*wrong)
			}
			if coverage < 0.94 {
				t.Errorf("the 95%% CI at the stop held the truth in %.1f%% of comparisons, want at least 94%%", 100*coverage)
			}
			if o.effects > 0 {
				if power := rate(o.found, o.effects); power < 0.80 {
					t.Errorf("true effects found in %.1f%% of studies, want at least 80%%", 100*power)
				}
			}
		})
	}
}

// raceSim simulates capacity studies that race: 4 placements, one block,
// rounds drifting ±20%, each search's capacity varying by spread and
// found on a grid of the search's resolution from a dithered start, as
// the runner's searches do (a met step at the grid point below the
// capacity, a missed one a resolution above). After each round but the
// last the project's own Drops says what stops being searched.
type raceSim struct {
	trials, rounds int
	resolution     float64
	spread         float64
	truth          map[string]float64
}

// raceOutcome counts the studies that dropped something, those that
// dropped a series no worse than its dominator, and the dropped series'
// ratios against the truth (their bias).
type raceOutcome struct {
	studies, dropping, wrong int
	logBias                  float64
	drops                    int
}

func (s raceSim) run(seed uint64) raceOutcome {
	rng := rand.New(rand.NewPCG(seed, 56))
	var out raceOutcome
	for range s.trials {
		st := &results.Study{Baseline: "all-disk", Durability: []string{"sync"}, Clients: []int{16}, Repeat: s.rounds,
			SLO: &results.SLO{Percentile: "p99", BoundUs: 20000}, Search: &results.Search{FromOpsS: 1000, Resolution: s.resolution, MaxOpsS: 1e7}}
		for _, p := range simPlacements {
			st.Placements = append(st.Placements, results.Placement{Name: p})
		}
		var runs []results.Run
		seq := 0
		step := func(p string, round int, rate float64, met bool) {
			seq++
			p99 := 1000.0
			if !met {
				p99 = 30000
			}
			runs = append(runs, results.Run{Placement: p, Durability: "sync", Clients: 16, Repeat: round, Seq: seq, Status: results.RunOK,
				TargetRate: rate, ThroughputOpsS: rate, Ops: 1000, Latency: hist.Summary{P99: p99}})
		}
		for round := 1; round <= s.rounds; round++ {
			drift := 0.8 + 0.4*rng.Float64()
			for _, p := range simPlacements {
				if dropped(st.Dropped, results.Dropped{Series: p, Durability: "sync", Clients: 16}) {
					continue
				}
				truth := s.truth[p]
				if truth == 0 {
					truth = 1
				}
				c := 5000 * truth * drift * math.Exp(s.spread*rng.NormFloat64())
				grid := 1000 * (1 + s.resolution*rng.Float64())
				lo := grid * math.Pow(1+s.resolution, math.Floor(math.Log(c/grid)/math.Log1p(s.resolution)))
				step(p, round, lo, true)
				step(p, round, lo*(1+s.resolution), false)
			}
			if round < s.rounds {
				for _, d := range Drops(st, runs, round) {
					st.Dropped = append(st.Dropped, d.Dropped)
				}
			}
		}
		out.studies++
		if len(st.Dropped) > 0 {
			out.dropping++
		}
		for _, d := range st.Dropped {
			tb, ta := s.truth[d.Series], s.truth[d.By]
			if tb == 0 {
				tb = 1
			}
			if ta == 0 {
				ta = 1
			}
			if tb >= ta {
				out.wrong++
			}
			if g := Analyze(st, runs).Group(Key{d.Series, "sync", 16}); g != nil {
				if c := Paired(g.Rounds(), Analyze(st, runs).Group(Key{d.By, "sync", 16}).Rounds(), true, 0.05); c.Pairs > 0 {
					out.logBias += math.Log(c.Ratio) - math.Log(tb/ta)
					out.drops++
				}
			}
		}
	}
	return out
}

// TestRacingKeepsItsError: a capacity race drops a placement after a
// round only when its capacity is clearly below another's at the look's
// share of alpha. Among 4 identical placements at a 1% resolution (where
// dropping at 2.5% one-sided after every round dropped something in a
// quarter of studies) some placement is dropped, wrongly, in at most 5%
// of studies; one truly 30% slower is still dropped in most.
func TestRacingKeepsItsError(t *testing.T) {
	cases := []struct {
		name        string
		truth       map[string]float64
		maxWrong    float64
		minDropping float64
	}{
		{"4 identical placements", nil, 0.05, 0},
		{"one 30% slower", map[string]float64{"wal-c": 0.7}, 0.05, 0.8},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := raceSim{trials: 400, rounds: 6, resolution: 0.01, spread: 0.03, truth: tc.truth}.run(uint64(200 + i))
			wrong, dropping := rate(o.wrong, o.studies), rate(o.dropping, o.studies)
			bias := 0.0
			if o.drops > 0 {
				bias = math.Expm1(o.logBias / float64(o.drops))
			}
			t.Logf("%d raced studies: something dropped in %.1f%%, wrongly in %.1f%%; dropped ratios off the truth by %+.1f%% on average",
				o.studies, 100*dropping, 100*wrong, 100*bias)
			if wrong > tc.maxWrong {
				t.Errorf("wrong drops in %.1f%% of studies, want at most %.0f%%", 100*wrong, 100*tc.maxWrong)
			}
			if dropping < tc.minDropping {
				t.Errorf("something dropped in %.1f%% of studies, want at least %.0f%%", 100*dropping, 100*tc.minDropping)
			}
		})
	}
}
