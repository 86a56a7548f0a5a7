package study

import (
	"fmt"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/engine"
)

// powerModelFix is how to write a power-loss model in crash:.
const powerModelFix = "write {power: torn}, {power: survive}, {power: reorder}, or {power: {survive: 0.3}} with the probability each unit is kept (above 0 and below 1; 0.5 when not given)"

// isPowerModel reports whether n is a power-loss model: a mapping of one
// key, power ({power: torn}).
func isPowerModel(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == CrashPower
}

// crashList reads crash: as valueList does, where an entry may also be a
// power-loss model ({power: torn}), which it returns as its axis value
// ("power:torn", engine.CrashValue).
func (p *parser) crashList(e entry) []string {
	n := deref(e.v)
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	if !slices.ContainsFunc(items, isPowerModel) {
		return p.valueList(e, "crash", CrashKinds, crashFix)
	}
	var values []string
	once := p.listedOnce("crash")
	for _, it := range items {
		var v string
		var ok bool
		if isPowerModel(it) {
			v, ok = p.powerModel(deref(it))
		} else if v, ok = p.item(it, "crash", crashFix); ok && !slices.Contains(CrashKinds, v) {
			p.unknown(it.Line, fmt.Sprintf("unknown crash %q", v), v, CrashKinds, "known values", crashFix)
			ok = false
		}
		if !ok {
			return nil
		}
		if once.again(v, strconv.Quote(v), it.Line) {
			continue
		}
		values = append(values, v)
	}
	return values
}

// powerModel reads {power: NAME} or {power: {NAME: probability}}.
func (p *parser) powerModel(n *yaml.Node) (string, bool) {
	v := deref(n.Content[1])
	name, keep := v.Value, engine.DefaultKeep
	switch {
	case v.Kind == yaml.MappingNode && len(v.Content) == 2:
		name = v.Content[0].Value
		f, err := strconv.ParseFloat(deref(v.Content[1]).Value, 64)
		if err != nil || !(f > 0 && f < 1) {
			p.addf(v.Line, "crash: power model %s keeps each unit with probability %q, which must be a number above 0 and below 1; %s", name, deref(v.Content[1]).Value, powerModelFix)
			return "", false
		}
		keep = f
	case v.Kind != yaml.ScalarNode:
		p.addf(v.Line, "crash: power must name one model, not %s; %s", describe(v), powerModelFix)
		return "", false
	}
	if !slices.Contains(engine.PowerModelNames(), name) {
		p.unknown(v.Line, fmt.Sprintf("unknown power-loss model %q", name), name, engine.PowerModelNames(), "known models", powerModelFix)
		return "", false
	}
	return engine.CrashValue(name, keep), true
}
