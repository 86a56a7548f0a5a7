package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPrintedBracketsMatchVerdicts: in families of 15 comparisons, each
// true ratio drawn from a table, the bracket shown beside a verdict
// (ShownCI) excludes 1 exactly when the verdict is better or worse: never
// beside an inconclusive or equivalent one. The per-comparison 95% CI,
// printed before, is counted for the record.
func TestPrintedBracketsMatchVerdicts(t *testing.T) {
	for _, c := range []struct {
		name   string
		truths []float64
	}{
		{"all equal", []float64{1}},
		{"a truly 5% faster one among equals", []float64{1, 1, 1, 1.05}},
		{"mixed", []float64{0.8, 0.95, 1, 1.05, 1.1, 1.3}},
		{"all different", []float64{1.2, 1.5, 0.7}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(61, uint64(len(c.truths))))
			const studies, family, rounds = 300, 15, 4
			lines, before, undecided := 0, 0, 0
			for range studies {
				cmps := make([]*Comparison, family)
				for i := range cmps {
					truth := c.truths[i%len(c.truths)]
					a, b := map[int]float64{}, map[int]float64{}
					for r := 1; r <= rounds; r++ {
						speed := 0.8 + 0.4*rng.Float64()
						b[r] = 1000 * speed * math.Exp(0.04*rng.NormFloat64())
						a[r] = 1000 * truth * speed * math.Exp(0.04*rng.NormFloat64())
					}
					cmp := Paired(a, b, true, 0.05)
					cmps[i] = &cmp
				}
				Adjust(cmps)
				for _, cmp := range cmps {
					ci := cmp.ShownCI()
					excludes := ci[0] > 1 || ci[1] < 1
					decided := cmp.Verdict == Better || cmp.Verdict == Worse
					if excludes != decided {
						t.Fatalf("bracket %v (level %.4f) beside %s (p adjusted %.4g)", *ci, cmp.AdjustedLevel, cmp.Verdict, cmp.PAdjusted)
					}
					if !decided {
						undecided++
						if own := cmp.CI95; own[0] > 1 || own[1] < 1 {
							before++
						}
					}
					lines++
				}
			}
			t.Logf("%d lines, %d undecided; the per-comparison 95%% CI excluded 1 beside %d of them (%.3f of lines); the adjusted bracket beside none",
				lines, undecided, before, float64(before)/float64(lines))
		})
	}
}

// TestZeroSpreadDecidesNothing: rounds that all give the same ratio are
// inconclusive with the reason, and show no bracket.
func TestZeroSpreadDecidesNothing(t *testing.T) {
	for _, n := range []int{2, 5, 20} {
		t.Run(fmt.Sprint(n, " rounds"), func(t *testing.T) {
			a, b := map[int]float64{}, map[int]float64{}
			for r := 1; r <= n; r++ {
				b[r] = 1000 * float64(r)
				a[r] = 1200 * float64(r)
			}
			c := Paired(a, b, true, 0.05)
			Adjust([]*Comparison{&c})
			if c.Verdict != Inconclusive || c.Why != ZeroSpread || c.ShownCI() != nil || math.Abs(c.Ratio-1.2) > 1e-9 {
				t.Errorf("%+v, want inconclusive, ratio 1.2, no interval, and why", c)
			}
		})
	}
}
