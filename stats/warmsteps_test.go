package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tierbench/tierbench/capacity"
)

// TestWarmSearchSteps runs a cold search and then a warm one from its
// bracket (capacity.Start) against rounds whose truth lies within ±10% or
// ±20% of the placement's, at 5%, 10% and 20% resolution, and checks that
// the warm search takes at most the steps it took with steps of two
// resolutions after its first (the rule before; figures in
// capacity.warmFactor's comment), and ends within a resolution below the
// round's truth.
func TestWarmSearchSteps(t *testing.T) {
	const trials = 3000
	for _, c := range []struct {
		resolution, spread float64
		most               float64 // mean warm steps with two resolutions' steps
	}{
		{0.05, 0.10, 3.25}, {0.05, 0.20, 4.15},
		{0.10, 0.10, 2.64}, {0.10, 0.20, 3.27},
		{0.20, 0.10, 2.18}, {0.20, 0.20, 2.63},
	} {
		t.Run(fmt.Sprintf("%.0f%% resolution, rounds ±%.0f%%", c.resolution*100, c.spread*100), func(t *testing.T) {
			st := capStudy(c.resolution)
			rng := rand.New(rand.NewPCG(9, 9))
			steps := 0
			for range trials {
				round := func() float64 { return 10_000 * (1 - c.spread + 2*c.spread*rng.Float64()) }
				_, cold := simSearch(st, round(), st.Search.FromOpsS, false)
				truth := round()
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
