package stats

// A block's frontier judges every pair of its placements' capacities, and
// each pair can go wrong: at 5% a pair, six identical placements would
// have one of them called dominated in about a quarter of studies. So the
// pairs are one family, adjusted together with Holm (Multiplicity), as
// the study's comparisons are: the chance that any capacity of the block
// is called better or worse than another's when the two are equal is at
// most Alpha. An equal placement is then dominated only for costing more,
// and a pricier placement stays on the frontier once its capacity is
// shown better than every cheaper one's under that guard.

// pairwise is a block's capacities compared pair by pair, adjusted
// together.
type pairwise struct {
	// cmp[i][j] is entry i's capacity against entry j's (ratio i/j).
	cmp [][]*Comparison
}

// comparePairs judges each pair of rounds maps, paired by round, higher
// being better; the family is Holm-adjusted, intervals included
// (AdjustedCI95).
func comparePairs(rounds []map[int]float64, margin float64) pairwise {
	n := len(rounds)
	p := pairwise{cmp: make([][]*Comparison, n)}
	for i := range p.cmp {
		p.cmp[i] = make([]*Comparison, n)
	}
	var fam []*Comparison
	for i := range n {
		for j := i + 1; j < n; j++ {
			c := Paired(rounds[i], rounds[j], true, margin)
			p.cmp[i][j] = &c
			fam = append(fam, &c)
		}
	}
	Adjust(fam)
	for i := range n {
		for j := i + 1; j < n; j++ {
			inv := p.cmp[i][j].inverse()
			p.cmp[j][i] = &inv
		}
	}
	return p
}

// inverse is the comparison the other way round: ratio 1/r, its intervals
// turned over, better and worse swapped.
func (c Comparison) inverse() Comparison {
	out := c
	if c.Ratio > 0 {
		out.Ratio = 1 / c.Ratio
	}
	flip := func(ci *[2]float64) *[2]float64 {
		if ci == nil {
			return nil
		}
		return &[2]float64{1 / ci[1], 1 / ci[0]}
	}
	out.CI95, out.CI90, out.AdjustedCI95 = flip(c.CI95), flip(c.CI90), flip(c.AdjustedCI95)
	out.m = -c.m
	switch c.Verdict {
	case Better:
		out.Verdict = Worse
	case Worse:
		out.Verdict = Better
	}
	return out
}

// dominates says whether a placement costing costA with capacities
// compared by c (b's against a's) dominates one costing costB: a costs
// less and b's capacity is not shown better, or they cost the same and
// b's is shown worse. clear is true when b's is shown worse: the search
// may stop running it.
func dominates(costA, costB float64, c *Comparison) (dom, clear bool) {
	if c == nil || c.Pairs == 0 || costA > costB {
		return false, false
	}
	clear = c.Verdict == Worse
	if costA < costB {
		return c.Verdict != Better, clear
	}
	return clear, clear
}

// ShownCI is the interval printed beside a verdict: the adjusted one
// when the comparison was judged in a family, else its own 95% CI.
func (c Comparison) ShownCI() *[2]float64 {
	if c.AdjustedCI95 != nil {
		return c.AdjustedCI95
	}
	return c.CI95
}
