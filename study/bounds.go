package study

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// A study's numbers are bounded, so that every count and time computed
// from them (runs, measuring time, the estimates validate prints) fits in
// its integer, and a value no study means (repeat: 4611686018427387904, a
// 292-year duration) is refused as the mistake it is. docs/study-file.md
// states them.
const (
	// MaxRounds bounds repeat: and an adaptive repeat's min and max.
	MaxRounds = 10000
	// MaxWindow bounds a run's warmup and its measured window.
	MaxWindow = 24 * time.Hour
	// MaxRuns bounds the runs of a study's matrix, every round counted
	// (an adaptive study's max): the runner lays them all out.
	MaxRuns = 100000
	// MaxStudyTime bounds the warmups and measured windows of a study's
	// runs added up, and an adaptive study's budget.
	MaxStudyTime = 30 * 24 * time.Hour
	// MaxRate bounds target_rate and a capacity search's from and max,
	// in ops/s: no engine tierbench runs serves a billion operations a
	// second on one host, and the open-loop driver's gap between two
	// operations is then one nanosecond, the finest it keeps.
	MaxRate = 1e9
	// MaxPrice bounds a price (cost:), in the study's currency: a billion
	// a month is no device's price, and prices times sizes stay finite.
	MaxPrice = 1e9
	// MaxComponentSize bounds a component's production size (size:):
	// 1 EiB is past any one tier, and bytes times prices stay exact.
	MaxComponentSize = 1 << 60
)

// maxRoundsText is MaxRounds as a setting's bound.
var maxRoundsText = strconv.Itoa(MaxRounds)

// mul multiplies counts, saturating past MaxRuns so no product overflows.
func mul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > MaxRuns/b+1 {
		return MaxRuns + 1
	}
	return min(a*b, MaxRuns+1)
}

// boundAxes refuses option sweeps whose combinations alone pass MaxRuns,
// and drops them: the checks after options expand every combination.
func (p *parser) boundAxes(s *Study) {
	n := 1
	for _, a := range s.Axes {
		n = mul(n, len(a.Values))
	}
	if n > MaxRuns {
		p.addf(p.top["options"].k.Line, "options sweep more than %d combinations of values, more than the %d runs a study may have; sweep fewer values", MaxRuns, MaxRuns)
		s.Axes = nil
	}
}

// boundMatrix refuses a study of more than MaxRuns runs, or whose runs'
// warmups and measured windows add up to more than MaxStudyTime (an
// adaptive study's at its budget, when it has one). It counts without
// expanding the matrix.
func (p *parser) boundMatrix(s *Study) {
	if len(s.Placements) == 0 || len(s.Clients) == 0 || len(s.Durability) == 0 {
		return // a problem reported elsewhere
	}
	combos := 1
	for _, a := range s.Axes {
		combos = mul(combos, len(a.Values))
	}
	// A list of target rates is one more axis (Variants).
	combos = mul(combos, max(len(s.TargetRates), 1))
	// Every cell of a round but its cache state: warm and cold cells
	// differ in warmup.
	rest := mul(mul(mul(mul(len(s.Placements), len(s.drivers())), len(s.Clients)), len(s.Durability)), mul(combos, len(s.crashesOrNone())))
	caches := s.Caches
	if len(caches) == 0 {
		caches = []string{CacheWarm}
	}
	rounds := max(s.Repeat, 1)
	runs := mul(mul(rest, len(caches)), rounds)
	line := p.lineOf(p.top, "repeat", p.lineOf(p.top, "clients", p.line))
	if runs > MaxRuns {
		dims := fmt.Sprintf("%d placements", len(s.Placements))
		if n := len(s.drivers()); n > 1 {
			dims += fmt.Sprintf(" x %d drivers", n)
		}
		if n := combos * len(caches) * len(s.crashesOrNone()); n > 1 {
			dims += fmt.Sprintf(" x %d swept combinations", n)
		}
		p.addf(line, "the study has more than %d runs (%s x %d durability x %d client counts x %d rounds); run fewer rounds, client counts or swept values",
			MaxRuns, dims, len(s.Durability), len(s.Clients), rounds)
		return
	}
	// runs is at most MaxRuns and each run's time at most 2 MaxWindow,
	// so the seconds below are exact enough in a float64.
	var round float64
	for _, c := range caches {
		per := s.Duration
		if c != CacheCold {
			per += s.Warmup
		}
		round += float64(rest) * per.Seconds()
	}
	total := round * float64(rounds)
	if a := s.Adaptive; a != nil && a.Budget > 0 {
		// Rounds end at the budget, but only from round min on.
		total = min(total, max(round*float64(a.Min), a.Budget.Seconds()))
	}
	if total > MaxStudyTime.Seconds() {
		p.addf(line, "the study's runs warm up and measure for up to %s added up, more than %s; shorten duration or warmup, run fewer rounds, or give repeat a budget",
			daysText(total), daysText(MaxStudyTime.Seconds()))
	}
}

// daysText says a long time in days and hours ("30 days", "41 days 16h"),
// from seconds, which a time.Duration past 292 years could not hold.
func daysText(seconds float64) string {
	if seconds < 24*3600 {
		return time.Duration(seconds * float64(time.Second)).Round(time.Second).String()
	}
	days, hours := int64(seconds/(24*3600)), int64(math.Mod(seconds, 24*3600)/3600)
	if hours == 0 {
		return fmt.Sprintf("%d days", days)
	}
	return fmt.Sprintf("%d days %dh", days, hours)
}
