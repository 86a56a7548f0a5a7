package runner

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/study"
)

// roundPlan follows a study's rounds: how many ran, how long the longest
// took, and, for an adaptive repeat, whether to run another.
type roundPlan struct {
	st      *study.Study
	began   time.Time
	rounds  int
	longest time.Duration
	// perCell is the longest a cell took in any round (its time over the
	// cells it ran), by which the next round is reckoned when decided
	// blocks leave it only some of its cells; 0 for capacity rounds,
	// whose steps are not cells.
	perCell time.Duration
	// stop is why no further round runs, "" while they do.
	stop string
	// disturbed counts the rounds with a run marked disturbed.
	disturbed int
}

// disturbedRounds counts the rounds in which an ok run was disturbed.
func disturbedRounds(runs []results.Run) int {
	rounds := map[int]bool{}
	for _, r := range runs {
		if r.Status == results.RunOK && r.Disturbed {
			rounds[r.Repeat] = true
		}
	}
	return len(rounds)
}

func newRoundPlan(st *study.Study) *roundPlan {
	return &roundPlan{st: st, began: time.Now()}
}

// describe says what the study will run: "24 runs (3 rounds)", or "24 runs
// a round, 5-30 rounds until ...".
func (p *roundPlan) describe() string {
	if p.st.SLO != nil {
		return fmt.Sprintf("a capacity search of each of %d cells a round (%s), each step a run", p.st.RoundSize(), p.st.RoundsText())
	}
	if p.st.Adaptive == nil {
		return fmt.Sprintf("%d runs (%s)", p.st.RoundSize()*p.st.Repeat, p.st.RoundsText())
	}
	return fmt.Sprintf("%d runs a round, %s", p.st.RoundSize(), p.st.RoundsText())
}

// total is the runs the progress bar counts: every round of a fixed study;
// of an adaptive one, its minimum or the rounds begun, whichever is more.
func (p *roundPlan) total() int {
	if p.st.SLO != nil {
		return p.st.RoundSize() * SearchSteps(p.st.Repeat)
	}
	n := p.st.Repeat
	if a := p.st.Adaptive; a != nil {
		n = max(a.Min, p.rounds+1)
		n = min(n, p.st.Repeat)
	}
	return n * p.st.RoundSize()
}

// ended notes that round finished; ran is false for a round resume found
// complete, whose time says nothing of a round's length.
func (p *roundPlan) ended(round int, ran bool, took time.Duration, cells int) {
	p.rounds = round
	if ran {
		p.longest = max(p.longest, took)
		if cells > 0 {
			p.perCell = max(p.perCell, took/time.Duration(cells))
		}
	}
}

// next is about how long the next round takes: its cells of the blocks
// still running at the longest a cell took, or the longest round.
func (s *studyRun) next(p *roundPlan) time.Duration {
	if p.perCell == 0 || p.st.SLO != nil {
		return p.longest
	}
	cells := 0
	for _, c := range p.st.Round(p.rounds + 1) {
		if !s.skips(c, p.rounds+1) {
			cells++
		}
	}
	return min(p.longest, p.perCell*time.Duration(cells))
}

// reason is why the study stopped running rounds.
func (p *roundPlan) reason() string {
	switch {
	case p.stop != "":
		return p.stop
	case p.st.Adaptive != nil:
		return results.StopMax
	}
	return results.StopFixed
}

// judgeRound decides, after each round of an adaptive study, whether it
// runs another. Before round min it always does: fewer rounds give
// intervals too wide to judge (validate says when min rounds would pass
// the budget). From min on it stops once every comparison with a baseline
// has a 95% CI half-width within until, at max rounds, or when the next
// round would pass the budget: its cells of the blocks still running,
// each as long as the longest a cell took so far (at most the longest
// round). It
// says on the progress line how wide the widest interval is, and whose.
func (s *studyRun) judgeRound(ctx context.Context, p *roundPlan) error {
	a := p.st.Adaptive
	if a == nil {
		return nil
	}
	runs, err := s.opt.Store.Runs(context.WithoutCancel(ctx), s.rec.ID)
	if err != nil {
		return err
	}
	runs = throughRound(runs, p.rounds) // resumed: not the next round's runs
	an := stats.Analyze(s.rec, runs)
	w := stats.Widest(an)
	p.disturbed = disturbedRounds(runs)
	line := fmt.Sprintf("round %d of %d-%d: ", p.rounds, a.Min, p.st.Repeat)
	switch {
	case !w.Found:
		line += "nothing to compare yet (no ok runs on both sides of any comparison)"
	case math.IsInf(w.HalfWidth, 1):
		line += fmt.Sprintf("%s has no interval yet (%d paired round(s))", w.Label, w.Pairs)
	default:
		line += fmt.Sprintf("widest 95%% CI half-width ±%s (%s)", pct(w.HalfWidth), w.Label)
	}
	// A round with a disturbed run is run again, so that min rounds ran
	// undisturbed: at most min more rounds, within max and the budget.
	again := min(p.disturbed, a.Min)
	if again > 0 {
		line += fmt.Sprintf("; %d round(s) had a run disturbed by other processes", p.disturbed)
	}
	if p.rounds < a.Min+again && p.rounds < p.st.Repeat && !(a.Budget > 0 && p.rounds >= a.Min && time.Since(p.began)+s.next(p) > a.Budget) {
		if p.rounds >= a.Min {
			line += ": running another in its place"
		}
		s.opt.Progress.Line(line)
		return nil
	}
	open, err := s.decideBlocks(ctx, an, p.rounds)
	if err != nil {
		return err
	}
	if open != "" && len(s.rec.Decided) > 0 {
		// The widest may be a decided block's: say what keeps rounds going.
		line += "; still open: " + open
	}
	switch {
	case open == "":
		p.stop = results.StopConverged
		line += fmt.Sprintf("; every comparison is decided or within ±%s: stopping", pct(a.Until))
	case p.rounds >= p.st.Repeat:
		p.stop = results.StopMax
		line += "; max rounds ran: stopping"
	case a.Budget > 0 && time.Since(p.began)+s.next(p) > a.Budget:
		p.stop = results.StopBudget
		line += fmt.Sprintf("; another round (about %s) would pass the budget of %s: stopping", s.next(p).Round(time.Second), a.Budget)
	}
	s.opt.Progress.Line(line)
	return nil
}

// decideBlocks stops each block (durability x clients) whose comparisons
// are all decided (stats.Blocks): it is stored in the study record with
// the round after which, and later rounds skip its cells. open names a
// comparison still undecided, "" when every block is decided. The stop
// is honest because every verdict spends only its look's share of alpha
// (stats.LooksOf).
func (s *studyRun) decideBlocks(ctx context.Context, an *stats.Analysis, round int) (open string, err error) {
	changed := false
	for _, b := range stats.Blocks(s.rec, an, s.st.Adaptive.Until) {
		if !b.Decided {
			if open == "" {
				open = b.Open
			}
			continue
		}
		if s.decided(b.Durability, b.Clients) {
			continue
		}
		s.rec.Decided = append(s.rec.Decided, results.DecidedBlock{Durability: b.Durability, Clients: b.Clients, AfterRound: round})
		changed = true
		s.opt.Progress.Line(fmt.Sprintf("%s is decided after %d rounds: later rounds skip it", b.Block, round))
	}
	if changed {
		return open, s.opt.Store.PutStudy(context.WithoutCancel(ctx), s.rec)
	}
	return open, nil
}

// skips says whether round leaves cell out: its block is decided, or the
// cell crashes its engine and round is past an adaptive study's min. A
// crash run's throughput enters no comparison (stats.CrashRun: its window
// ends at the crash); what it tells, the writes a crash loses and the
// recovery, has min rounds of cuts, as many as every comparison's first
// look has rounds. Rounds past min run only what the verdicts still
// wait on, so an undecided block's later rounds cost its runs without a
// crash alone and more of them fit the budget.
func (s *studyRun) skips(cell study.Cell, round int) bool {
	crashes := cell.Variant.Crash != "" && cell.Variant.Crash != study.CrashNone
	if a := s.st.Adaptive; a != nil && crashes && round > a.Min {
		return true
	}
	return s.decided(string(cell.Durability), cell.Clients)
}

// decided says whether the block of durability d and c clients stopped.
func (s *studyRun) decided(d string, c int) bool {
	for _, b := range s.rec.Decided {
		if b.Durability == d && b.Clients == c {
			return true
		}
	}
	return false
}

// pct prints a fraction as a percentage with one decimal: "7.2%"; above
// 1000% as ">1000%", where an interval on two rounds at a look's small
// share of alpha says only that it is no interval yet.
func pct(f float64) string {
	if f > 10 {
		return ">1000%"
	}
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

// withOrder is st with the order of its rounds settled: a resumed study's
// stored order (fixed for studies stored before shuffling), the study's
// own seed, or a new random seed, stored with the study so a resume
// reproduces it. st itself is not changed.
func withOrder(st *study.Study, resume *results.Study) *study.Study {
	c := *st
	switch {
	case resume != nil && resume.Order == results.OrderShuffled:
		c.Order = study.Order{Seed: resume.OrderSeed, SeedSet: true, BlocksInPlace: true}
	case resume != nil && resume.Order != results.OrderRounds:
		c.Order = study.Order{Fixed: true}
	case resume != nil:
		c.Order = study.Order{Seed: resume.OrderSeed, SeedSet: true}
	case !c.Order.Fixed && !c.Order.SeedSet:
		c.Order = study.Order{Seed: rand.Uint64() >> 11, SeedSet: true} // exact in JSON readers that use doubles
	}
	return &c
}
