package engine

import "strings"

// CrashKind is one kind of crash a run can make inside its measured
// window (a study's crash:), and what tierbench does for it. The study's
// checks, the runner's steps and the reports' words all read this table
// (and the runner's steps, runner/crash.go), so a new kind is one row
// here, its steps there and the modes that promise to survive it
// (Mode.Survives).
type CrashKind struct {
	// Name is how a study and Mode.Survives write it.
	Name string
	// Phrase names it in a sentence: "a power loss".
	Phrase string
	// Doc says what it does, for docs and messages.
	Doc string
	// Machine marks a crash of the whole machine: every write a tier had
	// not made durable is lost, so the tiers a run uses go under the
	// power-loss layer, the tiers in RAM are emptied, and a mode's
	// promise to survive it holds only on tiers that honour fsync.
	Machine bool
	// Nodes marks a crash that may kill some of a cluster engine's nodes
	// (crash: {kind: ..., nodes: n}, engine.NodeCrasher).
	Nodes bool
}

// CrashKinds is every kind of crash, in the order a study lists them.
var CrashKinds = []CrashKind{
	{Name: CrashProcess, Phrase: "a process crash", Nodes: true,
		Doc: "kills the engine's processes (SIGKILL); the operating system keeps what they wrote"},
	{Name: CrashPower, Phrase: "a power loss", Machine: true,
		Doc: "loses every write the tiers had not made durable, then kills the engine: a power cut"},
}

// FindCrash returns the crash kind named name, or that a power model's
// axis value ("power:torn") names.
func FindCrash(name string) (CrashKind, bool) {
	name, _, _ = strings.Cut(name, ":")
	for _, k := range CrashKinds {
		if k.Name == name {
			return k, true
		}
	}
	return CrashKind{}, false
}
