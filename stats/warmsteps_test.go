package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tierbench/tierbench/capacity"
)

// measuredMoves are the seed capacity study's round-to-round moves of a
// placement's capacity (a round's estimate over the round before's), 42
// of them from seven runs of studies/postgres-wal-capacity.yaml on a
// 2-core VM on 2026-12-08.
var measuredMoves = []float64{0.84, 0.84, 0.84, 0.85, 0.86, 0.89, 0.96, 0.96, 0.97, 0.98, 1.0, 1.01, 1.01, 1.01,
	1.01, 1.02, 1.03, 1.03, 1.04, 1.05, 1.06, 1.07, 1.07, 1.07, 1.09, 1.09, 1.09, 1.1, 1.1, 1.1, 1.1, 1.11, 1.12, 1.14,
	1.15, 1.16, 1.16, 1.21, 1.33, 1.38, 1.43, 1.96}

// TestWarmSearchSteps runs a cold search and then a warm one from its
// bracket (capacity.Start), whose truth moved from the cold round's by a
// draw within ±10% or ±20%, or by one of the moves the seed capacity
// study measured, at 5%, 10% and 20% resolution. The warm search takes
// at most the steps it took with steps of two resolutions after its first
// (the rule before; the figures are in capacity.warmFactor's comment), and
// ends within a resolution below the round's truth.
func TestWarmSearchSteps(t *testing.T) {
	const trials = 3000
	uniform := func(spread float64) func(*rand.Rand) float64 {
		return func(rng *rand.Rand) float64 { return 1 - spread + 2*spread*rng.Float64() }
	}
	measured := func(rng *rand.Rand) float64 { return measuredMoves[rng.IntN(len(measuredMoves))] }
	for _, c := range []struct {
		resolution float64
		moves      string
		move       func(*rand.Rand) float64
		most       float64 // mean warm steps with two resolutions' steps
	}{
		{0.05, "±10%", uniform(0.10), 2.98}, {0.05, "±20%", uniform(0.20), 3.74}, {0.05, "as measured", measured, 3.87},
		{0.10, "±10%", uniform(0.10), 2.34}, {0.10, "±20%", uniform(0.20), 3.00}, {0.10, "as measured", measured, 3.07},
		{0.20, "±10%", uniform(0.10), 2.08}, {0.20, "±20%", uniform(0.20), 2.37}, {0.20, "as measured", measured, 2.41},
	} {
		t.Run(fmt.Sprintf("%.0f%% resolution, moves %s", c.resolution*100, c.moves), func(t *testing.T) {
			st := capStudy(c.resolution)
			rng := rand.New(rand.NewPCG(9, 9))
			steps := 0
			for range trials {
				first := 10_000 * (0.95 + 0.1*rng.Float64())
				_, cold := simSearch(st, first, st.Search.FromOpsS, false)
				truth := first * c.move(rng)
				start, warm := capacity.Start(*st.Search, cold, rng.Float64())
				_, w := simSearch(st, truth, start, warm)
				steps += len(w)
				if found := capacity.Capacity(*st.Search, w); found.OpsS > truth || found.OpsS < truth/(1+c.resolution) {
					t.Fatalf("truth %.0f: capacity %.0f, want within a resolution below (steps %v)", truth, found.OpsS, w)
				}
			}
			mean := math.Round(float64(steps)/trials*100) / 100 // as the figures are given
			t.Logf("a warm search took %.2f steps on average (%.2f with steps of two resolutions)", mean, c.most)
			if mean > c.most {
				t.Errorf("a warm search took %.2f steps on average, want at most %.2f", mean, c.most)
			}
		})
	}
}
