package study

import (
	"fmt"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Steady is a steady-state warmup (warmup: {steady: 5%, window: 3s, max:
// 60s}): each run lasts the study's Warmup (its max) and Duration, and its
// measured window is chosen after the fact, where MSER-5 cuts the
// transient (driver.Config.AfterTheFact); the run is steady when the
// first Window after the cut lies within Band of its mean, fio's
// steadystate range criterion on throughput.
type Steady struct {
	// Band is a fraction: 0.05 for 5%.
	Band   float64
	Window time.Duration
}

// Defaults of a steady-state warmup's keys left out.
const (
	DefaultSteadyWindow = 3 * time.Second
	DefaultSteadyMax    = 60 * time.Second
	// minSteadyWindow is two of the intervals a steady-state run is
	// recorded at (runner.AfterTheFactTick): one alone is always within
	// any band of itself.
	minSteadyWindow = 400 * time.Millisecond
	// minSteadyBand is the narrowest band: at 1000 ops/s, 0.1% is one
	// operation a second either way.
	minSteadyBand = 0.001
)

const warmupExample = "warmup: 5s, or warmup: {steady: 5%, window: 3s, max: 60s}"

// warmup reads warmup: a duration, or a steady-state rule.
func (p *parser) warmup(s *Study) {
	e, ok := p.top["warmup"]
	if !ok {
		return
	}
	if deref(e.v).Kind == yaml.MappingNode {
		p.steady(s, e)
		return
	}
	if d, ok := p.duration(e); ok {
		switch {
		case d < 0:
			p.addf(e.v.Line, "warmup must not be negative, got %s; use 0s for no warmup or e.g. 2s", e.v.Value)
		case d > MaxWindow:
			p.addf(e.v.Line, "warmup %s is more than %s, the longest a run may warm up; write e.g. warmup: 2s", e.v.Value, MaxWindow)
		default:
			s.Warmup = d
		}
	}
}

// steady reads warmup: {steady, window, max}.
func (p *parser) steady(s *Study, e entry) {
	ents, ok := p.entries(e.v, "warmup", "write "+warmupExample)
	if !ok {
		return
	}
	rule := Steady{Window: DefaultSteadyWindow}
	most, good, sawBand := DefaultSteadyMax, true, false
	for _, f := range ents {
		switch f.key {
		case "steady":
			v, ok := p.scalar(f, "write steady: 5%")
			frac, isPct := percent(v)
			if !ok || !isPct || !(frac > 0 && frac < 1) {
				if ok {
					p.addf(f.v.Line, "warmup steady %q must be a percentage above 0%% and below 100%%: how far each second's throughput may lie from the window's mean; write e.g. steady: 5%%", v)
				}
				good = false
				continue
			}
			if frac < minSteadyBand {
				p.addf(f.v.Line, "warmup steady %q is below 0.1%%, finer than a second's count of operations tells apart, so no run would ever be steady; write e.g. steady: 5%%", v)
				good = false
				continue
			}
			rule.Band, sawBand = frac, true
		case "window", "max":
			d, ok := p.duration(f)
			if !ok {
				good = false
				continue
			}
			if f.key == "window" {
				rule.Window = d
			} else {
				most = d
			}
		default:
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in warmup", f.key), f.key, []string{"steady", "window", "max"}, "known keys", "remove it")
			good = false
		}
	}
	switch {
	case !good:
		return
	case !sawBand:
		p.addf(e.k.Line, "warmup as a rule needs steady: the band each second's throughput must stay within; write %s", warmupExample)
	case rule.Window < minSteadyWindow:
		p.addf(e.k.Line, "warmup window %s is shorter than %s: the driver records throughput every 200ms, and one interval is always steady; write e.g. window: 1s", rule.Window, minSteadyWindow)
	case most <= rule.Window:
		p.addf(e.k.Line, "warmup max %s must be longer than its window %s: no window fits; write e.g. {steady: 5%%, window: 3s, max: 60s}", most, rule.Window)
	case most > MaxWindow:
		p.addf(e.k.Line, "warmup max %s is more than %s, the longest a run may warm up; write e.g. max: 60s", most, MaxWindow)
	default:
		s.Warmup, s.Steady = most, &rule
	}
}

// steadyFits refuses a steady-state warmup where nothing can watch a
// closed loop's throughput settle: an open loop (throughput is its
// rate), max_ops (its window is one pass), a standard tool's driver (it
// runs its own warmup) and a cluster (its pods' driver takes a fixed
// warmup).
func (p *parser) steadyFits(s *Study) {
	if s.Steady == nil {
		return
	}
	line := p.top["warmup"].k.Line
	switch {
	case s.TargetRate > 0:
		p.addf(line, "warmup: {steady} watches throughput settle, which target_rate fixes; give warmup a duration (warmup: 5s) or remove target_rate")
	case s.SLO != nil:
		p.addf(line, "warmup: {steady} watches throughput settle, which each capacity search step fixes; give warmup a duration (warmup: 5s)")
	case s.MaxOps > 0:
		p.addf(line, "warmup: {steady} does not go with max_ops, whose window is one pass from a cold start; remove one of them")
	case !s.onlyBuiltin():
		p.addf(line, "warmup: {steady} is watched by tierbench's own driver only; a standard tool runs its own warmup: give warmup a duration or run driver: builtin")
	case s.Kubernetes != nil:
		p.addf(line, "warmup: {steady} runs on this machine only for now; give warmup a duration on a cluster")
	}
}

// WarmupText says how a run warms up, for validate's summary and show:
// "2s", or "cut after the fact (MSER-5), at most 1m0s, judged steady
// within ±5% over 3s".
func (s *Study) WarmupText() string {
	if s.Steady == nil {
		return s.Warmup.String()
	}
	return fmt.Sprintf("cut after the fact (MSER-5), at most %s, judged steady within ±%s over %s", s.Warmup, strconv.FormatFloat(s.Steady.Band*100, 'f', -1, 64)+"%", s.Steady.Window)
}
