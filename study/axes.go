package study

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/setting"
)

// Axis is an engine option (or the run setting memory) the study sweeps
// (`options: {heap: [1g, 2g]}`): one more dimension of the matrix. Every run records the value it ran
// with, and statistics group and compare within the same values.
type Axis struct {
	Name string
	// Values are normal forms, as the engine gets them (sizes in bytes).
	Values []string
	// Labels are the values as the study wrote them ("2g"), for reports.
	Labels []string
}

// Setting is one axis's value in one cell.
type Setting struct {
	Name, Value, Label string
}

// Variant is one combination of the study's swept values: a value of each
// option axis, a cache state and a crash kind. Its label names the values
// that vary ("heap=2g cold crash=power"), "" when nothing varies.
type Variant struct {
	Settings []Setting
	Cache    string
	// Crash is one of CrashKinds.
	Crash string
	// CrashNodes is how many nodes a process crash kills; 0: all.
	CrashNodes int
	// Memory is the engine's memory limit in bytes (the run setting
	// memory, fixed or swept); 0: none.
	Memory int64
	// Rate is the open-loop rate of a study whose target_rate is a list
	// (an axis); 0 otherwise.
	Rate  float64
	Label string
}

// Variants expands the option axes and cache states in the study's order,
// the first axis varying slowest. A study that sweeps nothing has one
// variant with an empty label.
func (s *Study) Variants() []Variant {
	out := s.optionVariants()
	caches := s.Caches
	if len(caches) == 0 {
		caches = []string{CacheWarm}
	}
	crashes := s.crashesOrNone()
	rates := s.TargetRates
	if len(rates) == 0 {
		rates = []float64{0}
	}
	var all []Variant
	for _, v := range out {
		for _, c := range caches {
			for _, k := range crashes {
				for _, rate := range rates {
					w := Variant{Settings: v.Settings, Cache: c, Crash: k, Memory: v.Memory, Rate: rate}
					if ck, ok := engine.FindCrash(k); ok && ck.Nodes {
						w.CrashNodes = s.CrashNodes
					}
					w.Label = variantLabel(w, len(s.Caches) > 1, len(crashes) > 1)
					all = append(all, w)
				}
			}
		}
	}
	return all
}

// optionVariants expands the option axes alone: one variant for each
// combination of swept values, with its memory limit, and no cache state
// or crash. What depends on the options alone is checked once for each.
func (s *Study) optionVariants() []Variant {
	out := []Variant{{}}
	for _, a := range s.Axes {
		var next []Variant
		for _, v := range out {
			for i := range a.Values {
				set := append(slices.Clone(v.Settings), Setting{a.Name, a.Values[i], a.Labels[i]})
				next = append(next, Variant{Settings: set})
			}
		}
		out = next
	}
	for i := range out {
		out[i].Memory = memoryIn(s.OptionsIn(out[i]))
	}
	return out
}

// variantLabel names a variant's swept values; the cache state and the
// crash are named only when they are swept.
func variantLabel(v Variant, cacheSwept, crashSwept bool) string {
	var parts []string
	for _, st := range v.Settings {
		parts = append(parts, st.Name+"="+st.Label)
	}
	if cacheSwept {
		parts = append(parts, v.Cache)
	}
	if crashSwept {
		parts = append(parts, "crash="+v.Crash+nodesText(v.CrashNodes))
	}
	if v.Rate > 0 {
		parts = append(parts, results.RateLabel(v.Rate))
	}
	return strings.Join(parts, " ")
}

// OptionsIn returns the options of a run in variant v as its record keeps
// them: the study's fixed options with the variant's values, the run
// setting memory among them (EngineOptionsIn leaves it out).
func (s *Study) OptionsIn(v Variant) map[string]string {
	out := maps.Clone(s.Options)
	if out == nil {
		out = map[string]string{}
	}
	for _, st := range v.Settings {
		out[st.Name] = st.Value
	}
	return out
}

// EngineOptionsIn are the engine's own options of a run in variant v, in
// normal form: OptionsIn without the run setting memory.
func (s *Study) EngineOptionsIn(v Variant) map[string]string {
	out := s.OptionsIn(v)
	delete(out, Memory.Name)
	return out
}

// EngineOptions are the engine's options of a run in variant v resolved
// against its Spec, every default filled in (engine.Spec.ResolveOptions):
// the Config.Options of the run's engine. Whoever builds a run's Config
// calls it once; the study's own checks read optionSets.
func (s *Study) EngineOptions(spec engine.Spec, v Variant) (engine.Options, error) {
	return spec.ResolveOptions(s.EngineOptionsIn(v))
}

// optionSet is one combination of the study's swept values: the engine's
// options, resolved, and the memory limit.
type optionSet struct {
	options engine.Options
	memory  int64
}

// resolveOptions resolves the engine's options of each combination of
// swept values once, for the checks that read them (memory, crashed
// nodes, the engine's files on tiers). Each value was checked as it was
// read, so a failure here is a default the engine declares wrong.
func (p *parser) resolveOptions(s *Study) {
	if p.spec == nil {
		return
	}
	for _, v := range s.optionVariants() {
		o, err := s.EngineOptions(*p.spec, v)
		if err != nil {
			p.addf(p.line, "%v", err)
			p.optionSets = nil
			return
		}
		p.optionSets = append(p.optionSets, optionSet{options: o, memory: v.Memory})
	}
}

// options checks engine options, and the run setting memory written among
// them, by their declared kinds (setting.Setting.Parse) and keeps what the
// study gave in normal form, sizes as decimal bytes, so engines never parse
// "64MiB" themselves. A list of values makes the option an axis of the
// matrix. Defaults are not filled in here: the stored study keeps what the
// user wrote, and a run's engine options get their defaults from its Spec
// (engine.Spec.ResolveOptions).
func (p *parser) options(s *Study) {
	e, ok := p.top["options"]
	if !ok {
		return
	}
	if isNull(e.v) {
		p.addf(e.k.Line, "options has no value; write options: {<option>: <value>, ...} or remove it")
		return
	}
	ents, ok := p.entries(e.v, "options", "write options: {<option>: <value or [values]>, ...}")
	if !ok {
		return
	}
	for _, oe := range ents {
		if p.spec == nil {
			continue // the engine's problem is reported; its options cannot be checked
		}
		known := OptionSettings(*p.spec)
		opt, found := setting.Find(known, oe.key)
		if !found && oe.key == Memory.Name && p.spec.InProcess {
			p.addf(oe.k.Line, "option memory bounds a server's processes, and engine %s runs inside tierbench's own process; remove it, or use a server engine (see tierbench engines)", p.spec.Name)
			continue
		}
		if !found {
			p.unknown(oe.k.Line, fmt.Sprintf("unknown option %q for engine %s", oe.key, p.spec.Name), oe.key,
				setting.Names(known), "known options", "remove it")
			continue
		}
		fix := fmt.Sprintf("write %s: <value>, or %s: [<value>, ...] to sweep it", oe.key, oe.key)
		items, ok := p.list(oe, "option "+oe.key, fix)
		if !ok {
			continue
		}
		a := Axis{Name: oe.key}
		once := p.listedOnce("option " + oe.key)
		for _, n := range items {
			v, ok := p.item(n, "option "+oe.key, fix)
			if !ok {
				continue
			}
			norm, ok := p.settingValue("option", opt, v, n.Line)
			if !ok {
				continue
			}
			if once.again(norm, v, n.Line) {
				continue
			}
			a.Values, a.Labels = append(a.Values, norm), append(a.Labels, v)
		}
		switch {
		case len(a.Values) == 1:
			s.Options[oe.key] = a.Values[0]
		case len(a.Values) > 1:
			s.Axes = append(s.Axes, a)
		}
	}
}

// memoryFits refuses a memory limit below what the engine's own settings
// hold in memory (its caches and heaps), under every swept value: the
// engine could not start, or would be killed by its limit at once.
func (p *parser) memoryFits(s *Study) {
	e, ok := p.top["options"]
	if p.spec == nil || !ok {
		return
	}
	for _, set := range p.optionSets {
		limit := set.memory
		if limit == 0 {
			continue // no limit
		}
		need, what := p.spec.MemoryNeedOf(set.options)
		if need > limit {
			p.addf(e.k.Line, "option memory %s is below what engine %s's own settings hold in memory: %s (%s); raise memory or lower them",
				humanize.IBytes(uint64(limit)), p.spec.Name, humanize.IBytes(uint64(need)), strings.Join(what, " + "))
			return
		}
	}
}

// settingValue parses one value of an engine option or a workload
// parameter (what names which, for the message) and refuses a memory size
// the machine cannot hold.
func (p *parser) settingValue(what string, st setting.Setting, v string, line int) (string, bool) {
	norm, err := st.Parse(v)
	var notOne *setting.ValuesError
	switch {
	case errors.As(err, &notOne):
		p.unknown(line, fmt.Sprintf("%s %s %q is not one of its values", what, st.Name, v), v, st.Values, "values", "use one of them")
		return "", false
	case err != nil:
		p.addf(line, "%s", strings.TrimSpace(what+" "+err.Error()))
		return "", false
	}
	if st.Memory {
		if total := hostenv.MemoryBytes(); total > 0 {
			if n, err := strconv.ParseUint(norm, 10, 64); err == nil && n > total {
				p.addf(line, "%s %s %s is more than this machine's memory (%s), which the engine could not hold; use a smaller value",
					what, st.Name, v, humanize.IBytes(total))
				return "", false
			}
		}
	}
	return norm, true
}

// caches reads `cache:` as one state or a list of them; a list makes the
// cache state an axis. A cold cell measures from a cold start, which a
// warmup would undo: with a single cold state a warmup is refused; with
// both states, only the warm cells warm up.
func (p *parser) caches(s *Study) {
	e, ok := p.top["cache"]
	if !ok {
		return
	}
	states := p.valueList(e, "cache", CacheModes, "write cache: warm, cache: cold, or cache: [cold, warm] to sweep both")
	if len(states) == 0 {
		return
	}
	s.Caches = states
	if slices.Contains(states, CacheCold) && p.hasTarget {
		// A cold cell restarts the engine and drops this machine's page
		// cache; a server tierbench did not start is neither restarted
		// nor, on another machine, dropped.
		p.addf(e.k.Line, "cache: cold restarts the engine and drops this machine's page cache, which tierbench cannot do for a target server it did not start; use cache: warm, or restart and drop the server's caches yourself between studies")
		return
	}
	if len(states) == 1 && states[0] == CacheCold && s.Warmup > 0 {
		p.addf(e.k.Line, "cache: cold measures from a cold start, which a warmup would undo; set warmup: 0s or use cache: warm")
	}
}

// valueList reads a key that takes one of known or a list of them (a
// list sweeps them): each value checked against known, a repeat reported
// and dropped. Nothing when a value is wrong.
func (p *parser) valueList(e entry, what string, known []string, fix string) []string {
	items, ok := p.list(e, what, fix)
	if !ok {
		return nil
	}
	var values []string
	once := p.listedOnce(what)
	for _, n := range items {
		v, ok := p.item(n, what, fix)
		if !ok {
			return nil
		}
		if !slices.Contains(known, v) {
			p.unknown(n.Line, fmt.Sprintf("unknown %s %q", what, v), v, known, "known values", "use one of them")
			return nil
		}
		if once.again(v, strconv.Quote(v), n.Line) {
			continue
		}
		values = append(values, v)
	}
	return values
}

// WarmupIn is a cell's warmup: none in a cold cell, which measures from a
// cold start.
func (s *Study) WarmupIn(c Cell) time.Duration {
	if c.Variant.Cache == CacheCold {
		return 0
	}
	return s.Warmup
}

// listedOnce refuses a value listed twice in one list of a study (a sweep,
// the durability modes, the client counts, the drivers), naming the line
// of the first; values are told apart by their normal form (key), so
// 1GiB and 1024MiB are the same size.
type listedOnce struct {
	p     *parser
	what  string
	first map[string]listed
}

type listed struct {
	shown string
	line  int
}

func (p *parser) listedOnce(what string) listedOnce {
	return listedOnce{p: p, what: what, first: map[string]listed{}}
}

// again reports whether key was listed before, and says so (shown is the
// value as the message writes it); otherwise it remembers it.
func (l listedOnce) again(key, shown string, line int) bool {
	first, dup := l.first[key]
	if !dup {
		l.first[key] = listed{shown, line}
		return false
	}
	where := "" // a list on one line needs no line number
	if first.line != line {
		where = fmt.Sprintf(" (first at line %d)", first.line)
	}
	if first.shown == shown {
		l.p.addf(line, "%s %s is listed twice%s; remove one", l.what, shown, where)
	} else {
		l.p.addf(line, "%s %s is the same value as %s%s; remove one", l.what, shown, first.shown, where)
	}
	return true
}
