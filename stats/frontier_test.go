package stats

import "testing"

// TestDominates: the rule of dominance on a judged pair (b's capacity
// against a's): a cheaper a dominates unless b is shown better; an equal
// cost dominates only when b is shown worse; a pricier a never does.
func TestDominates(t *testing.T) {
	for _, c := range []struct {
		name         string
		costA, costB float64
		verdict      string
		pairs        int
		dom, clear   bool
	}{
		{"cheaper, b better", 1, 2, Better, 5, false, false},
		{"cheaper, b inconclusive", 1, 2, Inconclusive, 5, true, false},
		{"cheaper, b equivalent", 1, 2, Equivalent, 5, true, false},
		{"cheaper, b worse", 1, 2, Worse, 5, true, true},
		{"equal, b inconclusive", 1, 1, Inconclusive, 5, false, false},
		{"equal, b equivalent", 1, 1, Equivalent, 5, false, false},
		{"equal, b worse", 1, 1, Worse, 5, true, true},
		{"pricier a, b worse", 2, 1, Worse, 5, false, false},
		{"never in the same round", 1, 2, NoData, 0, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dom, clear := dominates(c.costA, c.costB, &Comparison{Verdict: c.verdict, Pairs: c.pairs})
			if dom != c.dom || clear != c.clear {
				t.Errorf("dominates %v clear %v, want %v %v", dom, clear, c.dom, c.clear)
			}
		})
	}
}

// TestComparePairsInverse: each pair is judged once, and read the other
// way round its ratio, intervals and verdict turn over.
func TestComparePairsInverse(t *testing.T) {
	a := map[int]float64{1: 1000, 2: 1100, 3: 1050, 4: 990}
	b := map[int]float64{1: 2000, 2: 2150, 3: 2120, 4: 2010}
	p := comparePairs([]map[int]float64{a, b}, 0.05)
	ab, ba := p.cmp[0][1], p.cmp[1][0]
	if ab.Verdict != Worse || ba.Verdict != Better {
		t.Fatalf("verdicts %s / %s, want worse / better", ab.Verdict, ba.Verdict)
	}
	if d := ab.Ratio*ba.Ratio - 1; d > 1e-12 || d < -1e-12 {
		t.Errorf("ratios %g and %g are not each other's inverse", ab.Ratio, ba.Ratio)
	}
	if s, r := ab.ShownCI(), ba.ShownCI(); s[0]*r[1] < 1-1e-12 || s[0]*r[1] > 1+1e-12 {
		t.Errorf("intervals %v and %v are not each other's inverse", *s, *r)
	}
}
