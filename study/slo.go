package study

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/setting"
)

// This file reads what makes a study a capacity study: the latency
// objective (slo:), the rate it must carry (need:), how the search steps
// (search:), and what placements cost (cost: on tiers, host:, size:).
// With slo:, each round searches every placement's capacity, the highest
// open-loop rate meeting the objective, in steps that are runs of their
// own (package capacity, runner/capacity.go).

// Search defaults: where a cold search starts, how close its bracket must
// close, and the most it tries.
const (
	DefaultSearchFrom       = 1000
	DefaultSearchResolution = 0.05
	DefaultSearchMax        = 10_000_000
)

var (
	sloExample    = "slo: {p99: 20ms}, or slo: {p99: 20ms, errors: 0.1%}"
	searchExample = "search: {from: 1000, resolution: 5%, max: 1000000}"
	costExample   = "cost: {per_gib_month: 0.10} or cost: {per_month: 25}"
	costKeys      = []string{"per_gib_month", "per_month"}
	searchKeys    = []string{"from", "resolution", "max"}
	currencies    = []string{"$", "€", "£", "¥"}
)

// capacityKeys are the top-level keys that only a capacity study takes.
var capacityKeys = []string{"need", "search", "size", "host"}

// capacityStudy reads slo, need, search, size, host and the tiers' costs,
// and refuses what a capacity search cannot run with.
func (p *parser) capacityStudy(s *Study) {
	e, ok := p.top["slo"]
	if !ok {
		for _, k := range capacityKeys {
			if f, has := p.top[k]; has {
				p.addf(f.k.Line, "%s is for a capacity study, which searches the rate meeting a latency objective; add slo: {p99: 20ms} or remove %s", k, k)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(p.tierCostLines)) {
			p.addf(p.tierCostLines[name], "tier %q: cost prices placements for a capacity study's decision; add slo: {p99: 20ms} or remove cost", name)
		}
		return
	}
	s.SLO = p.slo(e)
	s.Search = results.Search{FromOpsS: DefaultSearchFrom, Resolution: DefaultSearchResolution, MaxOpsS: DefaultSearchMax}
	p.search(s)
	if f, has := p.top["need"]; has {
		if v, ok := p.scalar(f, "write need: <ops/s the placement must carry>, e.g. need: 20000"); ok {
			switch n, ok := opsRate(v); {
			case !ok || n <= 0:
				p.addf(f.v.Line, "need %q is not a rate above 0; write the ops/s the placement must carry under the objective, e.g. need: 20000", v)
			case n < capacity.MinRate:
				p.addf(f.v.Line, "need %g ops/s is below %g ops/s, the lowest rate a search tries; write e.g. need: 20000", n, capacity.MinRate)
			case n > s.Search.MaxOpsS:
				p.addf(f.v.Line, "need %g ops/s is above search max %g, the most a search tries, so no placement could be found to carry it; lower need, or raise search max (at most %g)", n, s.Search.MaxOpsS, float64(MaxRate))
			default:
				s.Need = n
			}
		}
	}
	s.Costs = p.costs(s)
	p.capacityFits(s)
	p.untilReachable(s)
}

// untilReachable refuses an adaptive capacity study whose until is at or
// below its search's resolution: each capacity is known only to within
// the resolution, so the rounds' ratios never agree closer than it and
// the study would run to max asking for a precision it cannot reach.
func (p *parser) untilReachable(s *Study) {
	a := s.Adaptive
	if a == nil || a.Until > s.Search.Resolution {
		return
	}
	line, given := p.untilLine, "until: "+pctText(a.Until)
	if line == 0 {
		line, given = p.top["repeat"].k.Line, "until (left out: "+pctText(a.Until)+")"
	}
	p.addf(line, "repeat %s is at or below the search's resolution of %s: each capacity is known only to within the resolution, so the rounds would never agree that closely; write until: %s or more, or a finer search, e.g. search: {resolution: %s}",
		given, pctText(s.Search.Resolution), pctText(2*s.Search.Resolution), pctText(a.Until/2))
}

// pctText prints a fraction as a percentage without trailing zeros: "5%".
func pctText(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e4)/1e2, 'f', -1, 64) + "%"
}

// slo reads slo: {p99: 20ms, errors: 0.1%}.
func (p *parser) slo(e entry) *results.SLO {
	ents, ok := p.entries(e.v, "slo", "write "+sloExample)
	if !ok {
		return nil
	}
	var slo results.SLO
	good := true
	for _, f := range ents {
		switch {
		case f.key == "errors":
			v, ok := p.scalar(f, "write errors: 0.1%")
			frac, isPct := percent(v)
			if !ok || !isPct || frac < 0 || frac >= 1 {
				p.addf(f.v.Line, "slo errors %q is not a percentage from 0%% to below 100%%; write e.g. errors: 0.1%%", v)
				good = false
				continue
			}
			slo.Errors = &frac
		case slices.Contains(capacity.Percentiles, f.key):
			if slo.Percentile != "" {
				p.addf(f.k.Line, "slo bounds one percentile, and has %s and %s; keep one, e.g. %s", slo.Percentile, f.key, sloExample)
				good = false
				continue
			}
			v, ok := p.scalar(f, "write "+f.key+": 20ms")
			if !ok {
				good = false
				continue
			}
			d, err := time.ParseDuration(v)
			switch {
			case err != nil:
				unit := ""
				if _, nerr := strconv.ParseFloat(v, 64); nerr == nil {
					unit = " (it has no unit)"
				}
				p.addf(f.v.Line, "slo %s %q is not a latency%s; write a duration with its unit, e.g. %s: 20ms or %s: 500us", f.key, v, unit, f.key, f.key)
				good = false
			case d <= 0 || d > time.Minute:
				p.addf(f.v.Line, "slo %s %s must be above 0 and at most 1m; write e.g. %s: 20ms", f.key, v, f.key)
				good = false
			default:
				slo.Percentile, slo.BoundUs = f.key, float64(d.Microseconds())
				if d < time.Microsecond {
					slo.BoundUs = float64(d.Nanoseconds()) / 1e3
				}
			}
		case percentileSpellings[f.key] != "":
			// The JSON's and other tools' names of p99.9: the edit distance
			// would suggest p99, another percentile.
			p.addf(f.k.Line, "unknown key %q in slo; did you mean %q? (known keys: %s, errors)", f.key, percentileSpellings[f.key], strings.Join(capacity.Percentiles, ", "))
			good = false
		default:
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in slo", f.key), f.key, append(slices.Clone(capacity.Percentiles), "errors"), "known keys: a latency percentile or errors", "remove it")
			good = false
		}
	}
	if good && slo.Percentile == "" {
		p.addf(e.k.Line, "slo bounds no latency percentile; write %s (any of %s)", sloExample, strings.Join(capacity.Percentiles, ", "))
		return nil
	}
	if !good {
		return nil
	}
	return &slo
}

// percentileSpellings are other spellings of a percentile slo takes.
var percentileSpellings = map[string]string{"p999": "p99.9", "p99_9": "p99.9", "p99.90": "p99.9", "p50.0": "p50", "p99.0": "p99"}

// opsRate reads a rate in ops/s, "20000" or "20_000"; ok is false for
// anything else, NaN and infinities included.
func opsRate(v string) (float64, bool) {
	n, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
	return n, err == nil && !math.IsNaN(n) && !math.IsInf(n, 0)
}

// search reads search: {from, resolution, max}.
func (p *parser) search(s *Study) {
	e, ok := p.top["search"]
	if !ok {
		return
	}
	ents, ok := p.entries(e.v, "search", "write "+searchExample)
	if !ok {
		return
	}
	if len(ents) == 0 && len(deref(e.v).Content) == 0 { // not a merge that failed
		p.addf(e.k.Line, "search sets nothing; write %s, or remove search for its defaults", searchExample)
		return
	}
	for _, f := range ents {
		v, ok := p.scalar(f, "write "+searchExample)
		if !ok {
			continue
		}
		switch f.key {
		case "from", "max":
			n, ok := opsRate(v)
			if !ok || n < capacity.MinRate {
				p.addf(f.v.Line, "search %s %q is not a rate of at least %g ops/s; write e.g. %s", f.key, v, capacity.MinRate, searchExample)
				continue
			}
			if n > MaxRate {
				p.addf(f.v.Line, "search %s %g is more than %g ops/s, more than any engine serves on one host; write e.g. %s", f.key, n, float64(MaxRate), searchExample)
				continue
			}
			if f.key == "from" {
				s.Search.FromOpsS = n
			} else {
				s.Search.MaxOpsS = n
			}
		case "resolution":
			frac, isPct := percent(v)
			if !isPct || frac < 0.01 || frac > 0.5 {
				p.addf(f.v.Line, "search resolution %q must be a percentage from 1%% to 50%%: how close the bracket around each capacity closes; write e.g. resolution: 5%%", v)
				continue
			}
			s.Search.Resolution = frac
		default:
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in search", f.key), f.key, searchKeys, "known keys", "remove it")
		}
	}
	if s.Search.FromOpsS > s.Search.MaxOpsS {
		p.addf(e.k.Line, "search from %.0f is above its max %.0f; make max at least from", s.Search.FromOpsS, s.Search.MaxOpsS)
	}
}

// tierCost reads one tier's cost: {per_gib_month, per_month}; prices may
// carry a currency symbol ($0.10), the same one throughout the study.
func (p *parser) tierCost(name string, e entry) {
	if c, ok := p.cost(fmt.Sprintf("tier %q", name), e); ok {
		if p.tierCosts == nil {
			p.tierCosts, p.tierCostLines = map[string]results.Cost{}, map[string]int{}
		}
		p.tierCosts[name], p.tierCostLines[name] = c, e.k.Line
	}
}

// cost reads cost: {per_gib_month: 0.10, per_month: 25}.
func (p *parser) cost(what string, e entry) (results.Cost, bool) {
	ents, ok := p.entries(e.v, what+" cost", "write "+costExample)
	if !ok {
		return results.Cost{}, false
	}
	var c results.Cost
	good := true
	for _, f := range ents {
		if !slices.Contains(costKeys, f.key) {
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in %s cost", f.key, what), f.key, costKeys, "known keys (a GiB-month price, or a device's price a month)", "write "+costExample)
			good = false
			continue
		}
		v, ok := p.scalar(f, "write "+costExample)
		if !ok {
			good = false
			continue
		}
		n, ok := p.price(what, f, v)
		if !ok {
			good = false
			continue
		}
		if f.key == "per_gib_month" {
			c.PerGiBMonth = n
		} else {
			c.PerMonth = n
		}
	}
	if good && c == (results.Cost{}) && len(ents) == 0 {
		p.addf(e.k.Line, "%s cost sets no price; write %s", what, costExample)
		good = false
	}
	return c, good
}

// price reads 0.10 or $0.10, noting the currency.
func (p *parser) price(what string, f entry, v string) (float64, bool) {
	num := strings.TrimSpace(v)
	for _, cur := range currencies {
		if rest, ok := strings.CutPrefix(num, cur); ok {
			if p.currency != "" && p.currency != cur {
				p.addf(f.v.Line, "%s cost %s is in %s, and an earlier price in %s; give every price in one currency", what, v, cur, p.currency)
				return 0, false
			}
			p.currency, num = cur, strings.TrimSpace(rest)
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		p.addf(f.v.Line, "%s cost %s %q is not a price tierbench can read; write a number, optionally after one of %s, e.g. %s: 0.10", what, f.key, v, strings.Join(currencies, " "), f.key)
		return 0, false
	}
	if n > MaxPrice {
		p.addf(f.v.Line, "%s cost %s %s is more than %g a month, which no device costs; write the price in units of its currency, e.g. %s: 0.10", what, f.key, v, float64(MaxPrice), f.key)
		return 0, false
	}
	return n, true
}

// costs gathers the tiers' costs, the host's (host: {cost: ...}) and the
// components' declared sizes (size: {wal: 16GiB}).
func (p *parser) costs(s *Study) *results.Costs {
	c := &results.Costs{Tiers: p.tierCosts}
	if e, ok := p.top["host"]; ok {
		if ents, ok := p.entries(e.v, "host", "write host: {cost: {per_month: 300}}"); ok {
			if len(ents) == 0 && len(deref(e.v).Content) == 0 {
				p.addf(e.k.Line, "host sets nothing; write host: {cost: {per_month: 300}}, or remove host")
			}
			for _, f := range ents {
				if f.key != "cost" {
					p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in host", f.key), f.key, []string{"cost"}, "known keys", "write host: {cost: {per_month: 300}}")
					continue
				}
				if hc, ok := p.cost("host", f); ok {
					c.Host = &hc
				}
			}
		}
	}
	if e, ok := p.top["size"]; ok {
		c.Sizes = p.sizes(e)
	}
	if c.Tiers == nil && c.Host == nil {
		if e, ok := p.top["size"]; ok {
			p.addf(e.k.Line, "size prices components, and no tier has a cost; add %s to a tier or remove size", costExample)
		}
		return nil
	}
	c.Currency = p.currency
	return c
}

// componentSize is a component's production size.
var componentSize = setting.Setting{Name: "size", Kind: setting.Size, Default: "1GiB"}

// sizes reads size: {wal: 16GiB, data: 500GiB}: the engine's components.
func (p *parser) sizes(e entry) map[string]int64 {
	const fix = "write size: {<component>: <size>}, e.g. size: {wal: 16GiB, data: 500GiB}"
	ents, ok := p.entries(e.v, "size", fix)
	if !ok {
		return nil
	}
	if len(ents) == 0 && len(deref(e.v).Content) == 0 {
		p.addf(e.k.Line, "size sets nothing; %s, or remove size", fix)
		return nil
	}
	var comps []string
	if p.spec != nil {
		for _, c := range p.spec.Components {
			comps = append(comps, c.Name)
		}
	}
	out := map[string]int64{}
	for _, f := range ents {
		if p.spec != nil && !slices.Contains(comps, f.key) {
			p.unknown(f.k.Line, fmt.Sprintf("size: unknown component %q", f.key), f.key, comps, "the engine's components", "remove it")
			continue
		}
		v, ok := p.scalar(f, fix)
		if !ok {
			continue
		}
		norm, err := componentSize.Parse(v)
		if err != nil {
			p.addf(f.v.Line, "size of %s: %v", f.key, err)
			continue
		}
		n, _ := strconv.ParseInt(norm, 10, 64)
		if n > MaxComponentSize {
			p.addf(f.v.Line, "size of %s %s is more than 1 EiB, past any one tier; write the component's production size, e.g. %s: 500GiB", f.key, v, f.key)
			continue
		}
		out[f.key] = n
	}
	return out
}

// capacityFits refuses what a capacity search cannot run with: it sets
// each step's rate, runs tierbench's own open-loop driver, and crashes
// nothing.
func (p *parser) capacityFits(s *Study) {
	refuse := func(key, why string) {
		if e, ok := p.top[key]; ok {
			p.addf(e.k.Line, "%s: %s", key, why)
		}
	}
	refuse("target_rate", "a capacity study (slo) searches the rate itself; remove target_rate, or slo for a fixed rate")
	refuse("max_ops", "a capacity study (slo) runs open loop; remove max_ops or slo")
	if !s.onlyBuiltin() {
		refuse("driver", "a capacity study (slo) searches open-loop rates with tierbench's own driver, whose latency counts from each operation's intended start; remove driver or slo")
	}
	if len(s.Crashes) > 0 {
		refuse("crash", "a capacity study (slo) does not crash its steps; study crashes apart, or remove slo")
	}
	if s.Kubernetes != nil {
		refuse("platform", "a capacity study (slo) cannot run on a cluster yet: tierbench drive runs closed loop; remove slo")
	}
}
