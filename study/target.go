package study

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/tool"
)

// TargetPlacement names the single placement of a target study that
// declares none.
const TargetPlacement = "target"

// AsConfigured is the durability recorded for a target study that does not
// say how its server is configured.
const AsConfigured engine.Durability = "as-configured"

// target reads `target: <url>`: a server tierbench does not start.
func (p *parser) target(s *Study) {
	e, ok := p.top["target"]
	if !ok {
		return
	}
	fix := "write target: postgres://user:password@host:5432/db, mysql://user:password@host:3306/db or redis://host:6379"
	v, ok := p.scalar(e, fix)
	if !ok {
		return
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme == "" || u.Host == "" {
		p.addf(e.v.Line, "target %q is not a server URL; %s", engine.RedactTarget(v), fix)
		return
	}
	if p.spec != nil {
		schemes := p.spec.TargetSchemes
		switch {
		case p.spec.InProcess:
			p.addf(e.v.Line, "engine %s runs inside tierbench and cannot be a target; remove target or use a server engine (see tierbench engines)", p.spec.Name)
			return
		case len(schemes) == 0:
			p.addf(e.v.Line, "engine %s cannot measure a server tierbench did not start; remove target, or use an engine with an external server line in tierbench engines", p.spec.Name)
			return
		case !slices.Contains(schemes, u.Scheme):
			p.addf(e.v.Line, "engine %s needs a %s:// target, not %s://; fix the URL or the engine", p.spec.Name, schemes[0], u.Scheme)
			return
		}
	}
	s.Target = v
}

// targetTiers reads optional tiers of a target study: plain folders only,
// which tierbench inspects (and probes) but never writes to.
func (p *parser) targetTiers(s *Study) ([]string, bool) {
	if _, ok := p.top["tiers"]; !ok {
		return nil, true
	}
	names, ok := p.tiers(s)
	for _, t := range s.Tiers {
		if t.Provisioned() {
			p.addf(p.top["tiers"].k.Line, "tier %q is provisioned, but with target tierbench places nothing; give it as {path: <folder where your server keeps it>} or remove target", t.Name)
		}
	}
	return names, ok
}

// targetPlacements reads optional placements of a target study, which
// record where the user put each component; without any, the study has one
// placement named "target".
func (p *parser) targetPlacements(s *Study) ([]string, bool) {
	if _, ok := p.top["placements"]; !ok {
		s.Placements = []Placement{{Name: TargetPlacement, Components: map[string]string{}}}
		s.Baseline = TargetPlacement
		if _, ok := p.top["baseline"]; ok {
			p.addf(p.top["baseline"].k.Line, "baseline needs placements; remove it or declare the placements your server uses")
		}
		return []string{TargetPlacement}, true
	}
	names, ok := p.placements(s)
	if len(names) > 1 {
		p.addf(p.top["placements"].k.Line, "a target study measures one server as it is; declare one placement (where your server keeps each component), not %d", len(names))
	}
	if _, has := p.top["baseline"]; has {
		p.baseline(s, names, ok)
	} else if len(names) > 0 {
		s.Baseline = names[0]
	}
	return names, ok
}

// targetDurability reads the optional durability of a target study: one
// mode, recorded as the user says the server is configured, never applied.
func (p *parser) targetDurability(s *Study) {
	if _, ok := p.top["durability"]; !ok {
		s.Durability = []engine.Durability{AsConfigured}
		return
	}
	p.durability(s)
	if len(s.Durability) > 1 {
		p.addf(p.top["durability"].k.Line, "with target, durability records how your server is configured (tierbench changes nothing); give one mode, not %d", len(s.Durability))
	}
}

// drivers reads `driver: builtin | pgbench | sysbench` or a list of them,
// which makes the driver one more axis of the matrix; builtin:lanes=N is
// tierbench's own on N lanes, so lane counts can be compared too. A
// workload only one driver runs (rados: rados-bench) takes that driver and
// no other.
func (p *parser) drivers(s *Study) {
	s.Drivers = []string{tool.Builtin}
	only := p.onlyDriver(s)
	e, ok := p.top["driver"]
	if !ok {
		if only != "" {
			p.addf(p.top["workload"].k.Line, "workload %s runs only with driver %s (tierbench's own driver cannot run it); set driver: %s", s.Workload.Name, only, only)
		}
		return
	}
	known := append([]string{tool.Builtin}, p.cat.ToolNames()...)
	fix := "write driver: <name> or driver: [builtin, <tool>], with: " + joinNames(known) + " (or " + tool.LanesSyntax + ")"
	items, ok := p.list(e, "driver", fix)
	if !ok {
		return
	}
	s.Drivers = nil
	once := p.listedOnce("driver")
	for _, n := range items {
		v, ok := p.item(n, "driver", fix)
		if !ok || once.again(v, strconv.Quote(v), n.Line) {
			continue
		}
		if only != "" && v != only {
			not := ", not " + v
			if tool.IsBuiltin(v) {
				not = " (tierbench's own driver cannot run it)"
			}
			p.addf(n.Line, "workload %s runs only with driver %s%s; set driver: %s", s.Workload.Name, only, not, only)
			continue
		}
		if tool.IsBuiltin(v) {
			_, set, err := tool.BuiltinLanes(v)
			if err != nil {
				p.addf(n.Line, "%v", err)
				continue
			}
			if why := p.noLanes(s); set && why != "" {
				p.addf(n.Line, "driver %s: %s", v, why)
				continue
			}
			s.Drivers = append(s.Drivers, v)
			continue
		}
		t, found := p.cat.Tool(v)
		if !found {
			p.unknown(n.Line, fmt.Sprintf("unknown driver %q", v), v, known, "known drivers", "use a known driver")
			continue
		}
		if p.spec != nil && s.Workload.Name != "" {
			if err := t.Check(s.Engine, s.Workload.Name); err != nil {
				p.addf(n.Line, "%v; remove %s from driver or change the study", err, v)
				continue
			}
		}
		if _, open := p.top["target_rate"]; open {
			p.addf(n.Line, "driver %s runs closed loop only; remove target_rate or use driver: builtin", v)
			continue
		}
		s.Drivers = append(s.Drivers, v)
	}
}

// noLanes says why the study's clients never run on lanes, whatever
// builtin:lanes=N says, and what to write instead: the engine's sessions
// or the workload's clients cannot (engine.Spec.Lanes,
// workload.Spec.Lanes), or the target's connections are not plain. ""
// when they run on lanes, or when the engine or workload is unknown
// (reported already).
func (p *parser) noLanes(s *Study) string {
	w, ok := p.cat.Workload(s.Workload.Name)
	if p.spec == nil || !ok {
		return ""
	}
	switch {
	case !p.spec.Lanes:
		var can []string
		for _, name := range sortedCopy(p.cat.EngineNames()) {
			if e, ok := p.cat.EngineSpec(name); ok && e.Lanes {
				can = append(can, name)
			}
		}
		return fmt.Sprintf("engine %s's clients never run on lanes (only those of %s do), so it would be driver builtin under another name; use driver: builtin", p.spec.Name, andList(can))
	case !w.Lanes:
		var can []string
		for _, name := range sortedCopy(p.cat.WorkloadNames()) {
			if w, ok := p.cat.Workload(name); ok && w.Lanes {
				can = append(can, name)
			}
		}
		return fmt.Sprintf("workload %s's clients never run on lanes (only those of %s do), so it would be driver builtin under another name; use driver: builtin", w.Name, andList(can))
	case s.Target != "" && p.spec.LaneTarget != nil:
		if u, err := url.Parse(s.Target); err == nil {
			if why := p.spec.LaneTarget(u); why != "" {
				return "clients run on lanes over plain connections only, and " + why + ", or use driver: builtin"
			}
		}
	}
	return ""
}

// andList joins names as a sentence does: "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// onlyBuiltin reports whether every driver of s is tierbench's own (on
// any lanes): what counts operations itself (max_ops) and records
// acknowledged writes (crash).
func (s *Study) onlyBuiltin() bool {
	return !slices.ContainsFunc(s.Drivers, func(d string) bool { return !tool.IsBuiltin(d) })
}

// onlyDriver returns the one driver the study's workload runs with, or ""
// when any may drive it.
func (p *parser) onlyDriver(s *Study) string {
	w, ok := p.cat.Workload(s.Workload.Name)
	if !ok {
		return ""
	}
	return w.Driver
}
