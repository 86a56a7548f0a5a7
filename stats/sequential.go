package stats

import (
	"fmt"
	"math"

	"github.com/tierbench/tierbench/results"
)

// A study that looks at its data after each round and then stops, skips a
// decided block or drops a placement (an adaptive repeat, a block that
// stops, a capacity race) would, judged at full alpha at every look, call
// identical placements different more often than its stated 5% and give
// intervals that miss the truth more often than 5% at the stop: a
// chance extreme at any look is kept. So each look spends a share of
// alpha, planned before the study starts, over the looks it may take:
// from its first look to its last, the share of look n is
// Spend(n/last) - Spend((n-1)/last) (the first look takes all of
// Spend(first/last)), and the shares add up to 1. A comparison judged on
// n paired rounds is tested at Alpha x share(n), its intervals drawn at
// that level, and Holm then guards the family as before
// (docs/statistics.md#honest-under-repeated-looks).
//
// The shares are combined by the union bound (Bonferroni over looks), not
// by the exact group-sequential boundaries of Lan and DeMets' recursive
// integration: those assume a known variance (a normal statistic), which
// two to five paired rounds do not give, while the union bound holds for
// Student t tests at any degrees of freedom, under any dependence between
// looks and comparisons, and composes with Holm exactly (a p value
// divided by its look's share). It costs some power at the last looks,
// which TestSequentialStudies measures.

// SpendPower is ρ of the spending function Spend(t) = t^ρ (Kim and
// DeMets' power family: 1 spends evenly, like Pocock's; 3 saves alpha for
// the end, like O'Brien-Fleming's). 1 spends on early looks, where a
// decided block saves the most rounds, without starving the last.
const SpendPower = 1.0

// Looks are the rounds after which a study may stop or drop something on
// what it saw: the first to the last. The zero value takes no look (a
// fixed number of rounds), whose one judgment spends all of alpha.
type Looks struct {
	First, Last int
}

// LooksOf is the plan of st's looks: an adaptive repeat's min to max; a
// capacity study that races (drops dominated placements after a round)
// from round 2, when the first interval exists, to its last; none for a
// fixed number of rounds.
func LooksOf(st *results.Study) Looks {
	switch {
	case st.RepeatPlan != nil && st.RepeatPlan.Max > 0:
		return Looks{First: max(st.RepeatPlan.Min, MinRounds), Last: max(st.RepeatPlan.Max, st.RepeatPlan.Min, MinRounds)}
	case st.SLO != nil && st.Repeat > MinRounds:
		return Looks{First: MinRounds, Last: st.Repeat}
	}
	return Looks{}
}

// Any says whether the plan takes looks at all.
func (l Looks) Any() bool { return l.Last > 0 && l.Last > l.First }

// Share is the part of alpha spent at the look on n paired rounds: 1
// without looks. A comparison with fewer pairs than the first look (a
// round left out) is judged at the first look's share, one with more
// than the last (rounds run again in a disturbed one's place) at the
// last's.
func (l Looks) Share(n int) float64 {
	if !l.Any() {
		return 1
	}
	n = min(max(n, l.First), l.Last)
	last := float64(l.Last)
	if n == l.First {
		return spend(float64(n) / last)
	}
	return spend(float64(n)/last) - spend(float64(n-1)/last)
}

// spend is the share of alpha spent by information fraction t.
func spend(t float64) float64 { return math.Pow(t, SpendPower) }

// atLook judges c at the look on its pairs: its p values divided by the
// look's share (its raw ones kept), its intervals drawn at Alpha x share (95% and 90% without
// looks). Its verdict is that of its new intervals; the family's guard
// then judges it on its p values. A comparison without an interval, or
// judged without looks, is unchanged.
func (c *Comparison) atLook(l Looks) {
	c.atShare(l.Share(c.Pairs))
}

// atShare judges c at share w of alpha (see atLook).
func (c *Comparison) atShare(w float64) {
	if w >= 1 || c.CI95 == nil || math.IsNaN(c.P) {
		return
	}
	c.Share = w
	c.PAdjusted, c.PEquivalenceAdjusted = min(1, c.P/w), min(1, c.PEquivalence/w)
	if c.se > 0 {
		t95 := tQuantile(1-Alpha*w/2, c.df)
		t90 := tQuantile(1-Alpha*w, c.df)
		c.CI95 = &[2]float64{math.Exp(c.m - t95*c.se), math.Exp(c.m + t95*c.se)}
		c.CI90 = &[2]float64{math.Exp(c.m - t90*c.se), math.Exp(c.m + t90*c.se)}
	}
	c.rejudge()
}

// Block is one durability x client-count block of a study: the cells
// compared with each other, which run back to back in a round.
type Block struct {
	Durability string
	Clients    int
}

func (b Block) String() string { return fmt.Sprintf("%s c=%d", b.Durability, b.Clients) }

// BlockState says whether a block's comparisons are all decided, and if
// not, which one is still open.
type BlockState struct {
	Block
	Decided bool
	// Open names a comparison still undecided: "wal-ram sync c=16
	// against all-disk: inconclusive, ±12.0%".
	Open string
}

// Blocks says of each of st's blocks whether every comparison touching
// it is decided: better, worse or equivalent after the study's guards
// (looks and Holm), or with a 95% CI half-width of at most until. A
// comparison across blocks (a durability mode against the first) touches
// both. The load generator's CPU per op is left out: it is a check on the
// measurement, not the study's question. A block without any comparison
// (one placement) is decided when each of its groups' own throughput
// interval is within until, and not before one of them has an ok run.
func Blocks(st *results.Study, a *Analysis, until float64) []BlockState {
	open := map[Block]string{}
	compared := map[Block]bool{}
	for _, j := range a.Comparisons {
		if j.Kind == KindLoadCPU {
			continue
		}
		mine, theirs := Block{j.Durability, j.Clients}, Block{j.AgainstDurability, j.Clients}
		compared[mine], compared[theirs] = true, true
		if decided(j, until) {
			continue
		}
		why := fmt.Sprintf("%s %s c=%d against %s: %s", j.Series, j.Durability, j.Clients, j.Against, j.Verdict)
		if j.AgainstDurability != j.Durability {
			why = fmt.Sprintf("%s %s c=%d against %s: %s", j.Series, j.Durability, j.Clients, j.AgainstDurability, j.Verdict)
		}
		if hw := j.cmp.HalfWidth(); hw <= 10 {
			why += fmt.Sprintf(", ±%.1f%%", hw*100)
		} else {
			why += ", its interval wider than ±1000%"
		}
		for _, b := range []Block{mine, theirs} {
			if open[b] == "" {
				open[b] = why
			}
		}
	}
	var out []BlockState
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			b := Block{d, c}
			if !compared[b] {
				open[b] = groupsOpen(a, b, until)
			}
			out = append(out, BlockState{Block: b, Decided: open[b] == "", Open: open[b]})
		}
	}
	return out
}

// decided says whether a judged comparison needs no further round.
func decided(j *Judged, until float64) bool {
	switch j.Verdict {
	case Better, Worse, Equivalent:
		return true
	}
	return j.cmp != nil && j.cmp.HalfWidth() <= until
}

// groupsOpen names a group of block b, which compares nothing, whose
// throughput interval is wider than until; "" when none is.
func groupsOpen(a *Analysis, b Block, until float64) string {
	ran := false
	for _, g := range a.Groups {
		if g.Durability != b.Durability || g.Clients != b.Clients || g.N == 0 {
			continue
		}
		ran = true
		if hw := halfWidth(g.ThroughputCI); hw > until {
			return fmt.Sprintf("%s %s c=%d: its own throughput interval is wider than ±%.1f%%", g.Series, g.Durability, g.Clients, until*100)
		}
	}
	if !ran {
		return fmt.Sprintf("%s: no ok run yet", b)
	}
	return ""
}

// RaceClear says whether a capacity race may drop series b for series
// a: whether b's capacity is worse than a's with its interval drawn at the
// share of alpha the look on their pairs may spend, split among the
// block's pairs (pairs: a race may drop any of a block's series for any
// other, and each unordered pair may go wrong either way, which the
// interval's two sides cover), so that dropping after any round keeps the
// stated error for the whole block. ok is false when either is not a
// group of the analysis.
func RaceClear(an *Analysis, st *results.Study, b, a Key, pairs int) (clear, ok bool) {
	gb, ga := an.Group(b), an.Group(a)
	if gb == nil || ga == nil {
		return false, false
	}
	c := Paired(gb.Rounds(), ga.Rounds(), true, gb.margin)
	c.atShare(LooksOf(st).Share(c.Pairs) / float64(max(pairs, 1)))
	return c.CI95 != nil && c.CI95[1] < 1, true
}

// markStopped marks each comparison with a side in a block the study
// stopped before its last round (results.Study.Decided) with the round
// its pairs ended at.
func markStopped(st *results.Study, fam []*Judged) {
	after := map[Block]int{}
	for _, d := range st.Decided {
		if d.AfterRound < st.RoundsRun() {
			after[Block{d.Durability, d.Clients}] = d.AfterRound
		}
	}
	for _, j := range fam {
		for _, r := range []int{after[Block{j.Durability, j.Clients}], after[Block{j.AgainstDurability, j.Clients}]} {
			if r > 0 && (j.StoppedAfter == 0 || r < j.StoppedAfter) {
				j.StoppedAfter = r
			}
		}
	}
}

// RoundsToReachAt is RoundsToReach for a study judged at looks: the
// half-width hw after pairs rounds was drawn at the look's share of
// alpha, and so will every later one be. 0 when it is already there or
// cannot be told; at most 1000.
func RoundsToReachAt(l Looks, hw float64, pairs int, until float64) int {
	if !l.Any() {
		return RoundsToReach(hw, pairs, until)
	}
	if hw <= until || pairs < MinRounds || math.IsInf(hw, 1) || until <= 0 {
		return 0
	}
	at := func(n int) float64 { return tQuantile(1-Alpha*l.Share(n)/2, float64(n-1)) }
	spread := math.Log1p(hw) * math.Sqrt(float64(pairs)) / at(pairs)
	want := math.Log1p(until)
	for n := pairs + 1; n <= pairs+1000; n++ {
		if at(n)*spread/math.Sqrt(float64(n)) <= want {
			return n - pairs
		}
	}
	return 1000
}

// Drop is a series a capacity race stops searching, and why.
type Drop struct {
	results.Dropped
	Why string
}

// Drops are the series a capacity race stops searching after round: each
// series Decide finds dominated whose capacity is also clearly below its
// dominator's at its look's share of alpha, split among the block's pairs
// of series (RaceClear), other than the
// baseline and those dropped before. The runner drops them; a simulation
// judges the same rule.
func Drops(st *results.Study, runs []results.Run, round int) []Drop {
	d := DecideRuns(st, runs)
	if d == nil {
		return nil
	}
	an := Analyze(st, runs)
	var out []Drop
	for _, dom := range d.Dominated {
		x := results.Dropped{Series: dom.Series, Durability: dom.Durability, Clients: dom.Clients, AfterRound: round, By: dom.By}
		if dom.Series == st.BaselineSeries() || dropped(st.Dropped, x) || dropped(droppedOf(out), x) {
			continue
		}
		k := len(st.Series())
		clear, _ := RaceClear(an, st, Key{dom.Series, dom.Durability, dom.Clients}, Key{dom.By, dom.Durability, dom.Clients}, k*(k-1)/2)
		if !clear {
			continue
		}
		out = append(out, Drop{Dropped: x, Why: dom.Why})
	}
	return out
}

// dropped says whether x's series was dropped in its block already.
func dropped(all []results.Dropped, x results.Dropped) bool {
	for _, y := range all {
		if y.Series == x.Series && y.Durability == x.Durability && y.Clients == x.Clients {
			return true
		}
	}
	return false
}

func droppedOf(ds []Drop) []results.Dropped {
	out := make([]results.Dropped, len(ds))
	for i, d := range ds {
		out[i] = d.Dropped
	}
	return out
}
