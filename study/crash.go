package study

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tier"
)

// Crash kinds: what a run does to its engine at a moment inside the
// measured window (crash:): none, or one of engine.CrashKinds.
const (
	// CrashNone measures without a crash (the default).
	CrashNone = "none"
	// CrashProcess and CrashPower are engine.CrashKinds' two rows, named
	// for the tests and messages that mean one of them.
	CrashProcess = engine.CrashProcess
	CrashPower   = engine.CrashPower
)

// CrashKinds lists the values of `crash:`.
var CrashKinds = crashNames()

func crashNames() []string {
	out := []string{CrashNone}
	for _, k := range engine.CrashKinds {
		out = append(out, k.Name)
	}
	return out
}

// anyCrash reports whether one of kinds is a crash kind with has.
func anyCrash(kinds []string, has func(engine.CrashKind) bool) bool {
	for _, name := range kinds {
		if k, ok := engine.FindCrash(name); ok && has(k) {
			return true
		}
	}
	return false
}

// MinCrashWindow is the shortest measured window a crash run takes. The
// crash comes between a fifth and four fifths of the window (runner's
// crashAt; the driver refuses a cut at 0, so under 5ns it cannot even
// start), and the run measures and checks what the engine acknowledged
// before it, failing with "no operation completed" when nothing was: on
// pebble a 1ms window failed every run and 50ms passed. A second puts the
// crash 200ms or more in, past the first synced writes of any engine here.
const MinCrashWindow = time.Second

// crashFix is how to write crash: right.
const crashFix = "write crash: process, crash: power, crash: [none, process] to sweep, or crash: {kind: process, nodes: 1} to crash part of a cluster"

// crashNodes is how many nodes a partial crash kills.
var crashNodes = setting.Setting{Name: "nodes", Kind: setting.Int, Min: "1", Default: "1"}

// crashMap reads crash: {kind: ..., nodes: n}: kind is what crash: alone
// would say (one kind or a list), nodes how many nodes a process crash
// kills. It returns kind's entry in the place of e.
func (p *parser) crashMap(e entry) (kind entry, nodes, nodesLine int, ok bool) {
	ents, ok := p.entries(e.v, "crash", crashFix)
	if !ok {
		return entry{}, 0, 0, false
	}
	ok = true
	for _, f := range ents {
		switch f.key {
		case "kind":
			kind = f
		case "nodes":
			v, good := p.scalar(f, "write nodes: <how many nodes to kill>")
			norm, good2 := "", false
			if good {
				norm, good2 = p.settingValue("crash", crashNodes, v, f.v.Line)
			}
			if !good || !good2 {
				ok = false
				continue
			}
			nodes, _ = strconv.Atoi(norm)
			nodesLine = f.v.Line
		default:
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in crash", f.key), f.key, []string{"kind", "nodes"}, "known keys", crashFix)
			ok = false
		}
	}
	if kind.k == nil && ok {
		p.addf(e.k.Line, "crash has no kind; %s", crashFix)
		ok = false
	}
	return kind, nodes, nodesLine, ok
}

// cannotCrashNodes says why a crash of nodes of the engine's nodes cannot
// be, "" when it can.
func (p *parser) cannotCrashNodes(s *Study, kinds []string, nodes int) string {
	if !anyCrash(kinds, func(k engine.CrashKind) bool { return k.Nodes }) {
		return "crash: nodes names how many nodes a process crash kills, and the kinds listed have no process crash (a power cut takes the whole machine); add process to kind or remove nodes"
	}
	if p.spec == nil {
		return ""
	}
	if p.spec.CrashNodes == nil {
		return fmt.Sprintf("crash: engine %s runs one server, which a process crash kills whole; remove nodes", p.spec.Name)
	}
	for _, set := range p.optionSets {
		if have := p.spec.CrashNodes(set.options); nodes >= have {
			return fmt.Sprintf("crash: nodes %d must leave at least one of engine %s's %d nodes running (a crash of every node is crash: process without nodes); lower nodes or raise the engine's nodes option", nodes, p.spec.Name, have)
		}
	}
	return ""
}

// crashes reads `crash:` as one kind or a list of them; a list makes the
// crash an axis. A crash run kills the engine tierbench started, counts
// the operations tierbench's own driver acknowledged, and restarts the
// engine on what survived: each of those is refused where it cannot be
// done, before anything runs.
func (p *parser) crashes(s *Study) {
	e, ok := p.top["crash"]
	if !ok {
		return
	}
	nodes, nodesLine := 0, 0
	if deref(e.v).Kind == yaml.MappingNode && !isPowerModel(e.v) {
		var ok bool
		if e, nodes, nodesLine, ok = p.crashMap(e); !ok {
			return
		}
	}
	kinds := p.crashList(e)
	if len(kinds) == 0 {
		return
	}
	if why := p.cannotCrash(s, kinds); why != "" {
		p.addf(e.k.Line, "%s", why)
		return
	}
	if s.Duration > 0 && s.Duration < MinCrashWindow && !slices.Equal(kinds, []string{CrashNone}) {
		p.addf(e.k.Line, "crash: a crash run crashes its engine between a fifth and four fifths of the measured window and checks the writes acknowledged before it, which duration %s leaves too little time for; make duration at least %s", s.Duration, MinCrashWindow)
		return
	}
	if nodes > 0 {
		if why := p.cannotCrashNodes(s, kinds, nodes); why != "" {
			p.addf(nodesLine, "%s", why)
			return
		}
		s.CrashNodes = nodes
	}
	s.Crashes = kinds
}

// layer decides every tier's stack (tier.Layering) under the study's
// crash kinds: a power cut (crash: power) covers each tier a placement
// uses, and is refused, at crash:, where one cannot be covered.
func (p *parser) layer(s *Study) {
	power := anyCrash(s.Crashes, func(k engine.CrashKind) bool { return k.Machine })
	reorder := slices.ContainsFunc(s.Crashes, func(v string) bool {
		_, model, _, err := engine.SplitCrash(v)
		return err == nil && model == engine.PowerReorder
	})
	used := map[string]bool{}
	for _, pl := range s.Placements {
		for _, t := range pl.Components {
			used[t] = true
		}
	}
	crashRefused := false
	for i := range s.Tiers {
		t := &s.Tiers[i]
		t.Crashes = tier.Crashes{PowerCut: power && used[t.Name], Reorder: reorder && used[t.Name]}
		st, err := tier.Layering(t.Spec, t.Crashes, tier.HostOf(t.Spec))
		switch {
		case err == nil:
			t.Stack = st
		case errors.Is(err, tier.ErrCrash):
			if !crashRefused { // one problem of crash:, the first tier's
				p.addf(p.top["crash"].k.Line, "%v", err)
			}
			crashRefused = true
		default:
			p.addf(t.Line, "%v", err)
		}
	}
}

// cannotCrash says why the study's runs cannot crash as kinds asks, "" when
// they can.
func (p *parser) cannotCrash(s *Study, kinds []string) string {
	if slices.Equal(kinds, []string{CrashNone}) {
		return ""
	}
	switch {
	case p.hasTarget:
		return "crash: a crash run kills the server and restarts it, which tierbench cannot do to a target server it did not start; remove crash or target"
	case !s.onlyBuiltin():
		return "crash: only tierbench's own driver records which writes were acknowledged, which a crash run checks after recovery; run driver: builtin or remove crash"
	case p.top["max_ops"].k != nil:
		return "crash: a crash ends the measured window at a random moment, which max_ops would end first; remove max_ops or crash"
	case p.top["platform"].k != nil && s.Kubernetes != nil:
		return "crash: crash runs on a cluster are not built yet (they run on this machine only); use platform: local or remove crash"
	case p.spec == nil:
		return ""
	case !p.spec.Crashable:
		return fmt.Sprintf("crash: engine %s cannot be crashed by tierbench yet; crash %s, or remove crash", p.spec.Name, p.crashableEngines())
	}
	return ""
}

// crashesOrNone returns the crash kinds the study runs: CrashNone alone
// without a crash axis.
func (s *Study) crashesOrNone() []string {
	if len(s.Crashes) == 0 {
		return []string{CrashNone}
	}
	return s.Crashes
}

// nodesText names a partial crash in labels and sentences: ":1node";
// "" for a crash of every node.
func nodesText(nodes int) string {
	switch {
	case nodes == 1:
		return ":1node"
	case nodes > 1:
		return ":" + strconv.Itoa(nodes) + "nodes"
	}
	return ""
}

// crashableEngines names the catalog's engines that a crash run can
// crash, for the message that refuses one that cannot be.
func (p *parser) crashableEngines() string {
	var names []string
	for _, name := range sortedCopy(p.cat.EngineNames()) {
		if spec, ok := p.cat.EngineSpec(name); ok && spec.Crashable {
			names = append(names, name)
		}
	}
	return orList(names)
}

// orList writes names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
