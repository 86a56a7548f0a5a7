package study

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/setting"
)

// This file holds how a study repeats its matrix: rounds (repeat:), the
// order of cells within a round (order:), and the equivalence margin its
// comparisons are judged with (margin:). A round is one run of every cell;
// the cells compared with each other run back to back within it, so the
// analysis pairs them round by round (stats.Paired).

// Adaptive is repeat: {min, max, until, budget}: whole rounds from Min on,
// until every comparison with a baseline has a 95% CI half-width of at
// most Until, or Study.Repeat (max) rounds ran, or the next round would
// pass Budget.
type Adaptive struct {
	Min int
	// Until is a fraction: 0.05 for 5%.
	Until float64
	// Budget bounds the study's time; 0 is no bound.
	Budget time.Duration
}

// Defaults of an adaptive repeat's keys left out.
const (
	DefaultMinRounds = 3
	DefaultMaxRounds = 30
	DefaultUntil     = 0.05
)

// Order is how the cells of a round are ordered: shuffled by a seeded
// generator (the default), or the study's own order (order: fixed).
type Order struct {
	Fixed bool
	// BlocksInPlace keeps the blocks (durability x clients) in the study's
	// order and shuffles only within each: how studies stored before whole
	// rounds were shuffled ran, which a resume of one reproduces.
	BlocksInPlace bool
	// Seed draws the shuffle; SeedSet says the study gave it (order:
	// {seed: 42}); otherwise the runner draws one and stores it.
	Seed    uint64
	SeedSet bool
}

// repeatKeys are the keys of an adaptive repeat.
var repeatKeys = []string{"min", "max", "until", "budget"}

const repeatExample = "repeat: 3, or repeat: {min: 5, max: 30, until: 5%, budget: 2h}"

// repeat reads repeat: a whole number of rounds, or an adaptive rule.
func (p *parser) repeat(s *Study) {
	e, ok := p.top["repeat"]
	if !ok {
		return
	}
	if deref(e.v).Kind == yaml.MappingNode {
		p.adaptive(s, e)
		return
	}
	v, ok := p.scalar(e, "write "+repeatExample)
	if !ok {
		return
	}
	if norm, ok := p.settingValue("", repeatRounds, v, e.v.Line); ok {
		s.Repeat, _ = strconv.Atoi(norm)
	}
}

// defaultRounds is the rounds of a study without repeat: one.
const defaultRounds = 1

// repeatRounds is a fixed number of rounds; minRounds and maxRounds bound
// an adaptive study's.
var (
	repeatRounds = setting.Setting{Name: "repeat", Kind: setting.Int, Min: "1", Max: maxRoundsText, Default: strconv.Itoa(defaultRounds)}
	minRounds    = setting.Setting{Name: "min", Kind: setting.Int, Min: "2", Max: maxRoundsText, Default: "3",
		Why: "one round gives no interval to judge; repeat: 1 runs a single round"}
	maxRounds = setting.Setting{Name: "max", Kind: setting.Int, Min: "2", Max: maxRoundsText, Default: "30"}
)

// adaptive reads repeat: {min, max, until, budget}.
func (p *parser) adaptive(s *Study, e entry) {
	ents, ok := p.entries(e.v, "repeat", "write "+repeatExample)
	if !ok {
		return
	}
	a := Adaptive{Min: DefaultMinRounds, Until: DefaultUntil}
	most, good := DefaultMaxRounds, true
	var minLine, maxLine int
	for _, f := range ents {
		switch f.key {
		case "min", "max":
			v, ok := p.scalar(f, "write "+f.key+": <whole number of rounds>")
			if !ok {
				good = false
				continue
			}
			st := maxRounds
			if f.key == "min" {
				st = minRounds
			}
			norm, ok := p.settingValue("repeat", st, v, f.v.Line)
			n, _ := strconv.Atoi(norm)
			switch {
			case !ok:
				good = false
			case f.key == "min":
				a.Min, minLine = n, f.v.Line
			default:
				most, maxLine = n, f.v.Line
			}
		case "until":
			v, ok := p.scalar(f, "write until: 5%")
			if !ok {
				good = false
				continue
			}
			frac, ok := percent(v)
			if !ok || frac <= 0 || frac >= 1 {
				p.addf(f.v.Line, "repeat until %q must be a percentage above 0%% and below 100%%: the widest 95%% CI half-width to stop at; write e.g. until: 5%%", v)
				good = false
				continue
			}
			a.Until, p.untilLine = frac, f.v.Line
		case "budget":
			d, ok := p.duration(f)
			switch {
			case !ok:
				good = false
			case d <= 0:
				p.addf(f.v.Line, "repeat budget must be more than 0, got %s; write e.g. budget: 2h, or leave it out for no bound", f.v.Value)
				good = false
			case d > MaxStudyTime:
				p.addf(f.v.Line, "repeat budget %s is more than %s, the most a study may measure; write e.g. budget: 2h", f.v.Value, daysText(MaxStudyTime.Seconds()))
				good = false
			default:
				a.Budget = d
			}
		default:
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in repeat", f.key), f.key, repeatKeys, "known keys", "remove it")
			good = false
		}
	}
	if good && a.Min > most {
		line := maxLine
		if line == 0 {
			line = minLine
		}
		p.addf(line, "repeat min %d is more than max %d; make max at least min, e.g. {min: %d, max: %d}", a.Min, most, a.Min, max(a.Min, DefaultMaxRounds))
		good = false
	}
	if good {
		s.Repeat, s.Adaptive = most, &a
	}
}

// margin reads margin:, the equivalence margin of the study's verdicts.
func (p *parser) margin(s *Study) {
	e, ok := p.top["margin"]
	if !ok {
		return
	}
	v, ok := p.scalar(e, "write margin: 5%")
	if !ok {
		return
	}
	frac, ok := percent(v)
	if !ok || frac <= 0 || frac >= 1 {
		p.addf(e.v.Line, "margin %q must be a percentage above 0%% and below 100%%: how close two figures must be to be called equivalent; write e.g. margin: 5%%", v)
		return
	}
	s.Margin = frac
}

// order reads order: fixed | shuffled | {seed: N}.
func (p *parser) order(s *Study) {
	e, ok := p.top["order"]
	if !ok {
		return
	}
	const fix = "write order: shuffled (the default), order: fixed, or order: {seed: 42}"
	if deref(e.v).Kind == yaml.MappingNode {
		ents, ok := p.entries(e.v, "order", fix)
		if !ok {
			return
		}
		for _, f := range ents {
			if f.key != "seed" {
				p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in order", f.key), f.key, []string{"seed"}, "known keys", "remove it")
				continue
			}
			v, ok := p.scalar(f, fix)
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				p.addf(f.v.Line, "order seed %q is not a whole number >= 0; write e.g. order: {seed: 42}", v)
				continue
			}
			s.Order = Order{Seed: n, SeedSet: true}
		}
		return
	}
	v, ok := p.scalar(e, fix)
	if !ok {
		return
	}
	switch v {
	case "fixed":
		s.Order = Order{Fixed: true}
	case "shuffled":
		s.Order = Order{}
	default:
		p.unknown(e.v.Line, fmt.Sprintf("unknown order %q", v), v, []string{"shuffled", "fixed"}, "known orders", fix)
	}
}

// percent parses "5%" into 0.05; NaN and infinities are not percentages.
func percent(v string) (float64, bool) {
	num, ok := strings.CutSuffix(strings.TrimSpace(v), "%")
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f / 100, true
}

// RoundSize is the number of cells in one round.
func (s *Study) RoundSize() int {
	return len(s.Durability) * len(s.Clients) * len(s.Variants()) * len(s.drivers()) * len(s.Placements)
}

// Round expands round r (from 1) of the matrix in blocks: one per
// durability and client count, each holding the cells compared with each
// other (placements x drivers x swept variants), which run back to back.
// Unless the order is fixed, a generator seeded with the study's seed and r
// shuffles the blocks' order and each block's cells, so no cell is always
// first or last, and a comparison across blocks (a durability mode against
// another) has its sides in either order as often: a fixed order is a
// bias, whichever cell runs later may be slower, and pairing by round
// would then call identical cells different. A resumed study reproduces
// the same order. Seq numbers cells from 1 across rounds.
func (s *Study) Round(r int) []Cell {
	rng := rand.New(rand.NewPCG(s.Order.Seed, uint64(r)))
	seq := (r - 1) * s.RoundSize()
	var blocks [][]Cell
	for _, d := range s.Durability {
		for _, c := range s.Clients {
			var block []Cell
			for _, v := range s.Variants() {
				for _, drv := range s.drivers() {
					for _, p := range s.Placements {
						block = append(block, Cell{Placement: p, Durability: d, Clients: c, Driver: drv, Variant: v, Repeat: r, Rate: v.Rate})
					}
				}
			}
			blocks = append(blocks, block)
		}
	}
	if !s.Order.Fixed && !s.Order.BlocksInPlace {
		rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
	}
	var cells []Cell
	for _, block := range blocks {
		if !s.Order.Fixed {
			rng.Shuffle(len(block), func(i, j int) { block[i], block[j] = block[j], block[i] })
		}
		for _, cell := range block {
			seq++
			cell.Seq = seq
			cells = append(cells, cell)
		}
	}
	return cells
}

// Matrix expands every round the study may run (Repeat: the fixed count,
// or an adaptive study's max) in execution order (see Round).
func (s *Study) Matrix() []Cell {
	var cells []Cell
	for r := 1; r <= s.Repeat; r++ {
		cells = append(cells, s.Round(r)...)
	}
	return cells
}

// RoundsText says how the study repeats, for validate's summary: "3
// rounds", or "3-30 rounds until every comparison is decided or its 95%
// CI within ±5%, at most 2h".
func (s *Study) RoundsText() string {
	a := s.Adaptive
	if a == nil {
		if s.Repeat == 1 {
			return "1 round"
		}
		return fmt.Sprintf("%d rounds", s.Repeat)
	}
	t := fmt.Sprintf("%d-%d rounds until every comparison is decided or its 95%% CI within ±%s", a.Min, s.Repeat, strconv.FormatFloat(a.Until*100, 'f', -1, 64)+"%")
	if a.Budget > 0 {
		t += ", at most " + a.Budget.String()
	}
	return t
}
