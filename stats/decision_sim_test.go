package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tierbench/tierbench/results"
)

// simBlock decides one block of simulated placements (rounds from
// simRounds, monthly costs; nil costs: unpriced) with the study's own
// decideBlock, as show does.
func simBlock(st *results.Study, rounds []map[int]float64, costs []float64) *Decision {
	d := &Decision{}
	var block []*CapacityEntry
	for i, r := range rounds {
		g := &Group{Series: fmt.Sprintf("p%d", i), Durability: "sync", Clients: 8, margin: results.DefaultMargin}
		for round := 1; round <= len(r); round++ {
			if v, ok := r[round]; ok && v > 0 {
				g.Runs = append(g.Runs, results.Run{Repeat: round, Status: results.RunOK})
				g.throughputs = append(g.throughputs, v)
			}
		}
		g.N = len(g.Runs)
		e := &CapacityEntry{Series: g.Series, Durability: "sync", Clients: 8, OpsS: geoMean(g.throughputs), Rounds: g.N, group: g}
		if costs != nil {
			e.CostPerMonth = &costs[i]
		}
		block = append(block, e)
	}
	d.decideBlock(st, block)
	d.Capacity = block
	return d
}

// TestFrontierErrors: six identical unpriced placements at 1% resolution
// have any one called dominated in at most 5% of studies (Holm over the
// block's 15 pairs; 26.8% / 17.2% / 5.4% at 5% a pair, the review found),
// and a placement truly 10% better than a cheaper one stays on the
// frontier in at least 80% of studies of 10 rounds.
func TestFrontierErrors(t *testing.T) {
	for _, rounds := range []int{3, 5, 10} {
		trials := map[int]int{3: 2000, 5: 2000, 10: 600}[rounds]
		t.Run(fmt.Sprintf("identical, %d rounds", rounds), func(t *testing.T) {
			st := capStudy(0.01)
			rng := rand.New(rand.NewPCG(58, uint64(rounds)))
			wrong := 0
			six := slices.Repeat([]simPlacement{{10_000, simNoise}}, 6)
			for range trials {
				if d := simBlock(st, simRounds(rng, st, six, rounds), nil); len(d.Dominated) > 0 {
					wrong++
				}
			}
			rate := float64(wrong) / float64(trials)
			t.Logf("six identical placements, %d rounds at 1%% resolution: one called dominated in %.3f of studies", rounds, rate)
			// Holm over 15 pairs holds the rate at about 0.045-0.049
			// here, so a finite simulation may read a little above 0.05:
			// allowed two standard errors of its own.
			if se := math.Sqrt(0.05 * 0.95 / float64(trials)); rate > 0.05+2*se {
				t.Errorf("identical placements dominated in %.3f of studies, want at most 0.05 (+%.3f sampling error)", rate, 2*se)
			}
		})
	}
	for _, c := range []struct {
		rounds int
		least  float64
	}{{3, 0}, {5, 0}, {10, 0.8}} {
		const trials = 1000
		t.Run(fmt.Sprintf("10%% better and pricier, %d rounds", c.rounds), func(t *testing.T) {
			st := capStudy(0.05)
			rng := rand.New(rand.NewPCG(59, uint64(c.rounds)))
			kept := 0
			for range trials {
				r := simRounds(rng, st, []simPlacement{{10_000, simNoise}, {11_000, simNoise}, {9_000, simNoise}}, c.rounds)
				d := simBlock(st, r, []float64{10, 20, 5})
				if slices.Contains(d.Frontiers[0].Series, "p1") {
					kept++
				}
			}
			rate := float64(kept) / trials
			t.Logf("a placement 10%% better at twice the price, %d rounds at 5%% resolution: kept on the frontier in %.3f of studies", c.rounds, rate)
			if rate < c.least {
				t.Errorf("kept in %.3f of studies, want at least %.2f", rate, c.least)
			}
		})
	}
}

// TestRecommendationErrors: a placement whose mean capacity is 1.05x the
// need with 10% round-to-round spread misses the need in about a third of
// rounds, and is recommended in at most 5% of studies at any number of
// rounds; three cheaper placements truly at the need beside one that
// carries it easily: one of the three is recommended in at most 5%; the
// one that carries it (1.6x, 10% spread) is recommended once the rounds
// show it (at 20 rounds: Bonferroni over four candidates and a 95%
// tolerance bound ask for many).
func TestRecommendationErrors(t *testing.T) {
	const trials, need = 1000, 10_000
	st := capStudy(0.05)
	st.NeedOpsS = need
	for _, rounds := range []int{3, 5, 10, 20} {
		t.Run(fmt.Sprintf("%d rounds", rounds), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(60, uint64(rounds)))
			near, atNeed, good := 0, 0, 0
			for range trials {
				d := simBlock(st, simRounds(rng, st, []simPlacement{{1.05 * need, 0.1}}, rounds), []float64{1})
				if d.Recommendations[0].Series != nil {
					near++
				}
				ps := []simPlacement{{need, 0.1}, {need, 0.1}, {need, 0.1}, {1.6 * need, 0.1}}
				d = simBlock(st, simRounds(rng, st, ps, rounds), []float64{1, 1, 1, 5})
				switch s := d.Recommendations[0].Series; {
				case s == nil:
				case *s == "p3":
					good++
				default:
					atNeed++
				}
			}
			t.Logf("%d rounds: 1.05x the need with 10%% spread recommended in %.3f; one of three at the need in %.3f; 1.6x the need in %.3f",
				rounds, float64(near)/trials, float64(atNeed)/trials, float64(good)/trials)
			if r := float64(near) / trials; r > 0.05 {
				t.Errorf("1.05x the need recommended in %.3f of studies, want at most 0.05", r)
			}
			if r := float64(atNeed) / trials; r > 0.05 {
				t.Errorf("a placement at the need recommended in %.3f of studies, want at most 0.05", r)
			}
			if r := float64(good) / trials; rounds >= 20 && r < 0.8 {
				t.Errorf("1.6x the need recommended in only %.3f of studies of %d rounds", r, rounds)
			}
		})
	}
}
