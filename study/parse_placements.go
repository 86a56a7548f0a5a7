package study

// This file reads placements, the baseline and durability modes: which
// component goes on which tier, and what each run is compared with.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/tier"
)

// placements returns the declared placement names, including ones with
// problems, so the baseline is judged against what the user wrote.
func (p *parser) placements(s *Study) ([]string, bool) {
	example := "all-disk: {data: disk, wal: disk}"
	if p.spec != nil && len(p.spec.Components) > 0 {
		tierName := "<tier>"
		if len(p.tierNames) > 0 {
			tierName = p.tierNames[0]
		}
		parts := make([]string, len(p.spec.Components))
		for i, c := range p.spec.Components {
			parts[i] = c.Name + ": " + tierName
		}
		example = "all-" + tierName + ": {" + strings.Join(parts, ", ") + "}"
	}
	e, ok := p.need(p.top, "placements", p.line, "add placements: {"+example+"}")
	if !ok {
		return nil, false
	}
	ents, ok := p.entries(e.v, "placements", "write placements: {"+example+"}")
	if !ok {
		return nil, false
	}
	if len(ents) == 0 {
		p.addf(e.k.Line, "placements is empty; declare at least one placement, e.g. %s", example)
		return nil, false
	}
	var names []string
	tierHint := "declare it under tiers"
	if len(p.tierNames) > 0 {
		tierHint = "declared tiers: " + joinNames(p.tierNames)
	}
	for _, pe := range ents {
		name := pe.key
		names = append(names, name)
		if strings.TrimSpace(name) == "" {
			p.addf(pe.k.Line, "placement name is empty; give the placement a name such as all-disk")
			continue
		}
		if err := tier.CheckIdentifier("placement", name, "wal-ram", "show, report and compare --placements name it"); err != nil {
			p.addf(pe.k.Line, "%v", err)
			continue
		}
		comps, ok := p.entries(pe.v, fmt.Sprintf("placement %q", name), fmt.Sprintf("write %s: {<component>: <tier>, ...}", name))
		if !ok {
			continue
		}
		pl := Placement{Name: name, Components: map[string]string{}}
		// A misspelt component is one mistake: when its suggestion is a
		// missing component, don't also report that component as missing.
		suggested := map[string]bool{}
		for _, ce := range comps {
			if ce.key == "durability" && (p.spec == nil || !p.spec.HasComponent(ce.key)) {
				p.placementDurability(&pl, ce)
				continue
			}
			if p.spec != nil && !p.spec.HasComponent(ce.key) {
				suggested[suggest(ce.key, p.spec.ComponentNames())] = true
				p.unknown(ce.k.Line, fmt.Sprintf("unknown component %q in placement %q", ce.key, name), ce.key,
					p.spec.ComponentNames(), "components of engine "+p.spec.Name, "remove it")
				continue
			}
			t, ok := p.scalar(ce, fmt.Sprintf("write %s: <tier> (%s)", ce.key, tierHint))
			if !ok {
				continue
			}
			if p.tiersOK && !slices.Contains(p.tierNames, t) {
				p.unknown(ce.v.Line, fmt.Sprintf("placement %q puts %s on unknown tier %q", name, ce.key, t), t,
					p.tierNames, "declared tiers", "declare it under tiers or use a declared tier")
				continue
			}
			pl.Components[ce.key] = t
		}
		// A target's placement is a label, and an in-memory one places
		// nothing: partial is fine.
		if p.spec != nil && !p.hasTarget && pl.Durability != engine.Memory && !(hasKey(comps, "durability") && pl.Durability == "") {
			for _, c := range p.spec.Components {
				if hasKey(comps, c.Name) || suggested[c.Name] {
					continue
				}
				if t, ok := pl.Components[c.DefaultsTo]; ok && c.DefaultsTo != "" {
					pl.Components[c.Name] = t // e.g. wal_archive goes with wal
					continue
				}
				if c.DefaultsTo == "" { // else the missing DefaultsTo is the one mistake
					p.addf(pe.k.Line, "placement %q does not place component %q; add %s: <tier> (%s)", name, c.Name, c.Name, tierHint)
				}
			}
		}
		s.Placements = append(s.Placements, pl)
	}
	return names, true
}

// placementDurability reads a placement's own durability, which it keeps in
// every durability row of the matrix: `inmem: {durability: memory}` is the
// in-memory reference each row is compared with.
func (p *parser) placementDurability(pl *Placement, e entry) {
	v, ok := p.scalar(e, "write durability: <mode> inside the placement, e.g. inmem: {durability: memory}")
	if !ok {
		return
	}
	d := engine.Durability(v)
	if p.spec != nil && !p.spec.Supports(d) {
		p.unknown(e.v.Line, fmt.Sprintf("durability %q of placement %q is not supported by engine %s", v, pl.Name, p.spec.Name), v,
			p.spec.ModeNames(), "supported", "use a supported mode")
		return
	}
	pl.Durability = d
}

// baseline checks the baseline against the declared placements; when the
// placements section itself is unusable that check is skipped, since the
// baseline may well be right. A study of one placement compares it with
// nothing, so its baseline may be left out: it is that placement.
func (p *parser) baseline(s *Study, names []string, placementsOK bool) {
	if _, has := p.top["baseline"]; !has && len(names) == 1 {
		s.Baseline = names[0]
		return
	}
	fix := "add baseline: <placement>, the placement the others are compared with"
	if len(names) > 0 {
		fix += ", one of: " + joinNames(names)
	}
	e, ok := p.need(p.top, "baseline", p.line, fix)
	if !ok {
		return
	}
	v, ok := p.scalar(e, fix)
	if !ok {
		return
	}
	s.Baseline = v
	if placementsOK && !slices.Contains(names, v) {
		p.unknown(e.v.Line, fmt.Sprintf("baseline %q is not a placement", v), v, names, "declared placements", "name one of the placements")
	}
}

func (p *parser) durability(s *Study) {
	modes := "modes the engine supports"
	if p.spec != nil {
		modes = "modes of " + p.spec.Name + ": " + joinNames(p.spec.ModeNames())
	}
	fix := "write durability: [<mode>, ...] with " + modes
	e, ok := p.need(p.top, "durability", p.line, "add durability: [<mode>, ...] with "+modes)
	if !ok {
		return
	}
	items, ok := p.list(e, "durability", fix)
	if !ok {
		return
	}
	once := p.listedOnce("durability")
	for _, n := range items {
		v, ok := p.item(n, "durability", fix)
		if !ok || once.again(v, strconv.Quote(v), n.Line) {
			continue
		}
		d := engine.Durability(v)
		if p.spec != nil && !p.spec.Supports(d) {
			p.unknown(n.Line, fmt.Sprintf("durability %q is not supported by engine %s", v, p.spec.Name), v,
				p.spec.ModeNames(), "supported", "use a supported mode")
			continue
		}
		s.Durability = append(s.Durability, d)
	}
}
