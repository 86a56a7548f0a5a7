package study

import (
	"fmt"
	"slices"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/tool"
)

// Crash kinds: what a run does to its engine at a moment inside the
// measured window (crash:).
const (
	// CrashNone measures without a crash (the default).
	CrashNone = "none"
	// CrashProcess kills the engine's processes (SIGKILL); the operating
	// system keeps what they wrote.
	CrashProcess = engine.CrashProcess
	// CrashPower loses every write the tiers had not made durable, then
	// kills the engine: a power cut.
	CrashPower = engine.CrashPower
)

// CrashKinds lists the values of `crash:`.
var CrashKinds = []string{CrashNone, CrashProcess, CrashPower}

// crashFix is how to write crash: right.
const crashFix = "write crash: process, crash: power, or crash: [none, process] to sweep"

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
	kinds := p.valueList(e, "crash", CrashKinds, crashFix)
	if len(kinds) == 0 {
		return
	}
	if why := p.cannotCrash(s, kinds); why != "" {
		p.addf(e.k.Line, "%s", why)
		return
	}
	if slices.Contains(kinds, CrashPower) {
		if why := layerTiers(s); why != "" {
			p.addf(e.k.Line, "%s", why)
			return
		}
	}
	s.Crashes = kinds
}

// layerTiers puts every tier a placement uses under the crash-capable
// layer for crash: power, or says why one cannot be. A tier that keeps
// nothing through a power loss anyway (tmpfs, a RAM-backed loop device)
// needs no layer: the run empties its folders at the crash.
func layerTiers(s *Study) string {
	used := map[string]bool{}
	for _, pl := range s.Placements {
		for _, t := range pl.Components {
			used[t] = true
		}
	}
	for i := range s.Tiers {
		t := &s.Tiers[i]
		switch {
		case !used[t.Name]:
		case t.Pmem != nil:
			return fmt.Sprintf("crash: power puts every tier under a FUSE layer that loses unsynced writes, which would hide tier %s's DAX mapping of persistent memory, the reason for the tier; use crash: process, or place nothing on %s", t.Name, t.Name)
		case t.Rbd != nil:
			return fmt.Sprintf("crash: power cannot cover tier %s: a Ceph image's writes are made durable by its cluster, not by this machine's file system; use crash: process, or place nothing on %s", t.Name, t.Name)
		case t.Tmpfs != nil || t.Loop != nil && t.Loop.Backing == "ram":
		default:
			t.Crashable = true
		}
	}
	return ""
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
	case slices.ContainsFunc(s.Drivers, func(d string) bool { return d != tool.Builtin }):
		return "crash: only tierbench's own driver records which writes were acknowledged, which a crash run checks after recovery; run driver: builtin or remove crash"
	case p.top["max_ops"].k != nil:
		return "crash: a crash ends the measured window at a random moment, which max_ops would end first; remove max_ops or crash"
	case p.top["platform"].k != nil && s.Kubernetes != nil:
		return "crash: crash runs on a cluster are not built yet (they run on this machine only); use platform: local or remove crash"
	case p.spec == nil:
		return ""
	case !p.spec.Crashable:
		return fmt.Sprintf("crash: engine %s cannot be crashed by tierbench yet; crash pebble, postgres, mariadb, redis or ignite, or remove crash", p.spec.Name)
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
