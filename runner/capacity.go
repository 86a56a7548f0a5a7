package runner

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/study"
)

// A capacity study (slo:) runs each round as searches: for every cell of
// the matrix, the highest open-loop rate meeting the objective, one run
// per step (package capacity has the rules). The searches of a block (the
// cells compared with each other) advance in lockstep, one step each in a
// shuffled order, so the placements compared share the machine's moments
// as the cells of a fixed-rate round do. Each step is stored as it ends,
// and a search's next rate follows from its stored steps alone, so a
// resumed study takes every search up where it stopped.

// search is one cell's capacity search in a round.
type search struct {
	cell  study.Cell
	key   stats.Key
	start float64
	warm  bool
	// runs are its steps' runs, in the order they ran; steps judge them.
	runs  []results.Run
	steps []capacity.Step
	done  bool
	// keep holds the search's engine between its steps, when it keeps
	// one open (keep.go); nil when every step opens its own.
	keep *kept
}

// stepEstimate is about how many steps a search takes: more from a cold
// start, fewer from an earlier round's bracket (two when the capacity held
// still, more when it moved); progress counts with it.
func stepEstimate(round int) int {
	if round == 1 {
		return 10
	}
	return 3
}

// SearchSteps is about how many steps a cell's searches take over rounds
// rounds, for validate's estimate and the progress bar.
func SearchSteps(rounds int) int {
	return stepEstimate(1) + stepEstimate(2)*(rounds-1)
}

// searchRound runs round's searches. ran is false when resume found every
// search of it finished.
func (s *studyRun) searchRound(ctx context.Context, round int, prog *progressCount) (ran bool, err error) {
	stored, err := s.opt.Store.Runs(context.WithoutCancel(ctx), s.rec.ID)
	if err != nil {
		return false, err
	}
	for _, r := range stored {
		s.lastSeq = max(s.lastSeq, r.Seq)
	}
	dropped := map[stats.Key]bool{}
	for _, d := range s.rec.Dropped {
		dropped[stats.Key{Series: d.Series, Durability: d.Durability, Clients: d.Clients}] = true
	}
	tally := results.SearchRound{Round: round}
	began := time.Now()
	var searches []*search
	defer func() {
		for _, sr := range searches {
			s.closeKept(sr.keep)
		}
		if tally.Steps > 0 {
			tally.WallS = time.Since(began).Seconds()
			s.rec.SearchRounds = append(s.rec.SearchRounds, tally)
			if perr := s.opt.Store.PutStudy(context.WithoutCancel(ctx), s.rec); err == nil {
				err = perr
			}
		}
	}()
	for _, block := range blocks(s.st.Round(round)) {
		if s.decided(string(block[0].Durability), block[0].Clients) {
			continue
		}
		// The block's searches run side by side, each on its own engine
		// when it keeps one: an idle engine costs little, and the steps
		// stay interleaved as the cells of a fixed-rate round are.
		for _, sr := range searches {
			s.closeKept(sr.keep)
		}
		searches = searches[:0]
		for _, cell := range block {
			sr := s.newSearch(cell, stored)
			if dropped[sr.key] {
				continue
			}
			if s.keeps(cell) {
				sr.keep = &kept{}
			}
			searches = append(searches, sr)
		}
		tally.Searches += len(searches)
		rng := rand.New(rand.NewPCG(s.st.Order.Seed, uint64(round)<<32))
		for step := 0; ctx.Err() == nil; step++ {
			var active []*search
			for _, sr := range searches {
				if rate, more := capacity.Next(s.st.Search, sr.start, sr.warm, sr.steps); more && !sr.done {
					sr.cell.Rate = rate
					active = append(active, sr)
				} else {
					sr.done = true
					s.closeKept(sr.keep)
				}
			}
			if len(active) == 0 {
				break
			}
			if !s.st.Order.Fixed {
				rng.Shuffle(len(active), func(i, j int) { active[i], active[j] = active[j], active[i] })
			}
			for _, sr := range active {
				if ctx.Err() != nil {
					return ran, nil
				}
				ran = true
				probe := capacity.Probing(sr.warm, sr.steps, sr.cell.Rate)
				rec, err := s.runStep(ctx, sr.cell, prog, sr.keep, probe)
				if err != nil || rec == nil {
					return ran, err
				}
				tally.Steps++
				if rec.EngineKeptFrom == "" {
					tally.EngineStarts++
				}
				sr.runs = append(sr.runs, *rec)
				sr.steps = capacity.StepsOf(*s.rec.SLO, sr.runs)
				s.opt.Progress.Line(stepLine(s.rec, sr, sr.steps[len(sr.steps)-1]))
			}
		}
	}
	return ran, nil
}

// newSearch starts cell's search: its steps stored so far in this round
// (resume), and where it starts (capacity.Start): within the final
// bracket its series found in the round before, or from the study's from.
func (s *studyRun) newSearch(cell study.Cell, stored []results.Run) *search {
	probe := s.newRecord(cell)
	sr := &search{cell: cell, key: stats.Key{Series: s.rec.SeriesOf(*probe), Durability: string(cell.Durability), Clients: cell.Clients}, start: s.st.Search.FromOpsS}
	var mine, before []results.Run
	for _, r := range stored {
		if (stats.Key{Series: s.rec.SeriesOf(r), Durability: r.Durability, Clients: r.Clients}) != sr.key {
			continue
		}
		switch {
		case r.Repeat == cell.Repeat:
			mine = append(mine, r)
		case r.Repeat == cell.Repeat-1:
			before = append(before, r)
		}
	}
	slices.SortFunc(mine, func(a, b results.Run) int { return a.Seq - b.Seq })
	slices.SortFunc(before, func(a, b results.Run) int { return a.Seq - b.Seq })
	sr.runs, sr.steps = mine, capacity.StepsOf(*s.rec.SLO, mine)
	sr.start, sr.warm = capacity.Start(s.st.Search, capacity.StepsOf(*s.rec.SLO, before), dither(s.st.Order.Seed, cell.Repeat, sr.key))
	return sr
}

// dither is a number in [0, 1) drawn from the study's seed, the round and
// the search: where within a resolution the search starts
// (capacity.Start). Capacities are found on a grid of rates; a search that started
// where the round before ended would land on the same grid point, and
// rounds that agree to the point would give a capacity a zero-width
// interval it has not earned. Dithered, the rounds' capacities vary
// within the resolution as the truth allows, and the interval shows it.
// The same draw on resume keeps a search's steps its own.
func dither(seed uint64, round int, key stats.Key) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%d", key.Series, key.Durability, key.Clients)
	return rand.New(rand.NewPCG(seed^h.Sum64(), uint64(round))).Float64()
}

// blocks splits a round's cells into its blocks: consecutive cells of the
// same durability and client count.
func blocks(cells []study.Cell) [][]study.Cell {
	var out [][]study.Cell
	for i, c := range cells {
		if i == 0 || c.Durability != cells[i-1].Durability || c.Clients != cells[i-1].Clients {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], c)
	}
	return out
}

// stepLine says what a step found: "wal-fast sync c=8 #1 at 4000 ops/s:
// met (p99 3.2ms <= 20ms; arrivals Poisson (A² = 0.61, p = 0.42))", or
// "unsure: ..., but arrivals not Poisson (A² = 3.40, p = 0.012, 500 gaps)",
// or "passed" for a probe that passed, and when it ended before its time
// and why.
func stepLine(st *results.Study, sr *search, step capacity.Step) string {
	out := step.Outcome
	verdict := "met"
	switch {
	case step.Probe:
		verdict = "passed"
	case out.GeneratorBound:
		verdict = "not counted: " + out.Why
	case out.Unsure:
		verdict = "unsure: " + out.Why
	case !out.Met:
		verdict = "missed: " + out.Why
	case out.Arrivals != "":
		verdict += fmt.Sprintf(" (%s <= %s; %s)", st.SLO.Percentile, hist.FormatMicros(st.SLO.BoundUs), out.Arrivals)
	default:
		verdict += fmt.Sprintf(" (%s <= %s)", st.SLO.Percentile, hist.FormatMicros(st.SLO.BoundUs))
	}
	if n := len(sr.runs); n > 0 && sr.runs[n-1].EndedEarly != "" {
		verdict += "; ended " + sr.runs[n-1].EndedEarly
	}
	return fmt.Sprintf("capacity %s %s c=%d #%d at %.0f ops/s: %s", sr.key.Series, sr.key.Durability, sr.key.Clients, sr.cell.Repeat, sr.cell.Rate, verdict)
}

// dropDominated stops searching, from the next round on, each placement
// whose capacity is clearly below another's that costs no more, judged
// at its look's share of alpha (stats.Drops), and stores why in the
// study record.
func (s *studyRun) dropDominated(ctx context.Context, round int) error {
	if s.st.SLO == nil || round >= s.st.Repeat {
		return nil
	}
	runs, err := s.opt.Store.Runs(context.WithoutCancel(ctx), s.rec.ID)
	if err != nil {
		return err
	}
	// A resumed study judges round's end on its own runs, not on the
	// next round's searches cut short by the kill (throughRound).
	for _, d := range stats.Drops(s.rec, throughRound(runs, round), round) {
		s.rec.Dropped = append(s.rec.Dropped, d.Dropped)
		s.opt.Progress.Line(fmt.Sprintf("capacity: %s %s c=%d is no longer searched: %s", d.Series, d.Durability, d.Clients, d.Why))
	}
	return s.opt.Store.PutStudy(context.WithoutCancel(ctx), s.rec)
}

// footprints are the bytes each component's folder holds: the blocks its
// files have allocated, as du counts them, which is what a tier priced
// per GiB is paid for. A folder that cannot be read counts what could be.
func footprints(dirs map[string]string) map[string]int64 {
	out := map[string]int64{}
	for comp, dir := range dirs {
		var n int64
		_ = filepath.WalkDir(dir, func(path string, de os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			var st unix.Stat_t
			if unix.Lstat(path, &st) == nil {
				n += st.Blocks * 512
			}
			return nil
		})
		out[comp] = n
	}
	return out
}
