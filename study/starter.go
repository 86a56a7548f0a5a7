package study

// This file writes the studies `tierbench init` starts a user from: the
// default study for Pebble, a small one for any other engine, each with a
// comment on every key.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// Folders a starter study's tiers go in: tmpfs for the fast tier (every
// Linux has /dev/shm) and /var/tmp, which survives a reboot, for the disk.
const (
	StarterFastDir = "/dev/shm/tierbench"
	StarterDiskDir = "/var/tmp/tierbench"
)

// starterWorkloads are the workloads a starter study prefers, by the data
// model they need, each with the parameters that keep its load small
// enough for a first run.
var starterWorkloads = []struct {
	name   string
	params [][2]string
}{
	{"ycsb-a", [][2]string{{"records", "10000"}}},
	{"tpcb", nil},
	{"ingest", nil},
	{"object-70-30", nil},
	{"putget", [][2]string{{"keys", "100000"}}},
}

// Starter is a study to start from for engine name, commented key by key:
// for pebble the built-in default study this machine can run (DefaultFor), for another engine
// every component on a disk folder against its commit log (or its first
// component) on tmpfs, under up to two of its durability modes, with a
// workload the engine serves. It is what `tierbench init` writes and must
// validate as it is.
func Starter(cat Catalog, name string) (string, error) {
	spec, ok := cat.EngineSpec(name)
	if !ok {
		return "", fmt.Errorf("unknown engine %q: the engines are %s", name, strings.Join(sortedCopy(cat.EngineNames()), ", "))
	}
	head := "# A study to start from, written by `tierbench init --engine " + name + "`.\n"
	if name == "pebble" {
		// The default study this machine can run: without FUSE, the one
		// without the power-loss layer, which validates here.
		src, note := DefaultFor(StarterFastDir, StarterDiskDir)
		if note != "" {
			head += "# " + note + "\n"
		}
		return Commented(head+src, spec), nil
	}
	wl, params, ok := starterWorkload(cat, spec)
	if !ok {
		return "", fmt.Errorf("engine %s serves no workload tierbench's own driver runs: write its study by hand (see docs/study-file.md)", name)
	}
	var required []engine.Component
	for _, c := range spec.Components {
		if c.DefaultsTo == "" {
			required = append(required, c)
		}
	}
	fast := starterFastComponent(spec)
	allDisk, other := make([]string, 0, len(required)), make([]string, 0, len(required)+1)
	for _, c := range required {
		allDisk = append(allDisk, c.Name+": disk")
		if c.Name != fast.Name {
			other = append(other, c.Name+": disk")
		}
	}
	other = append(other, fast.Name+": fast")
	var modes []string
	for _, m := range spec.Modes {
		if len(modes) < 2 && m.Durability != engine.Memory {
			modes = append(modes, string(m.Durability))
		}
	}
	clients := []string{"1", "8"}
	if spec.MaxClients > 0 && spec.MaxClients < 8 {
		clients = []string{"1"}
	}
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, "name: %s-start\n", name)
	fmt.Fprintf(&b, "engine: %s\n", name)
	b.WriteString("tiers:\n")
	fmt.Fprintf(&b, "  fast: {path: %s-%s}\n", StarterFastDir, name)
	fmt.Fprintf(&b, "  disk: {path: %s-%s}\n", StarterDiskDir, name)
	b.WriteString("placements:\n")
	fmt.Fprintf(&b, "  all-disk: {%s}\n", strings.Join(allDisk, ", "))
	fmt.Fprintf(&b, "  %s-fast: {%s}\n", fast.Name, strings.Join(other, ", "))
	b.WriteString("baseline: all-disk\n")
	fmt.Fprintf(&b, "durability: [%s]\n", strings.Join(modes, ", "))
	b.WriteString("workload:\n")
	fmt.Fprintf(&b, "  name: %s\n", wl)
	for _, p := range params {
		fmt.Fprintf(&b, "  %s: %s\n", p[0], p[1])
	}
	fmt.Fprintf(&b, "clients: [%s]\n", strings.Join(clients, ", "))
	b.WriteString("warmup: 1s\nduration: 5s\nrepeat: 3\n")
	return Commented(b.String(), spec), nil
}

// starterWorkload picks the first of starterWorkloads whose data model the
// engine serves and that tierbench's own driver runs.
func starterWorkload(cat Catalog, spec engine.Spec) (string, [][2]string, bool) {
	for _, w := range starterWorkloads {
		ws, ok := cat.Workload(w.name)
		if ok && ws.Driver == "" && (ws.Model == "" || len(spec.Models) == 0 || spec.Serves(ws.Model)) {
			return w.name, w.params, true
		}
	}
	return "", nil, false
}

// starterFastComponent is the component a starter study moves to the fast
// tier: the commit log (what a commit waits for), else the first
// component that is not the engine's own logs.
func starterFastComponent(spec engine.Spec) engine.Component {
	for _, c := range spec.Components {
		if c.Role == engine.RoleCommitLog {
			return c
		}
	}
	for _, c := range spec.Components {
		if c.Role != engine.RoleLogs {
			return c
		}
	}
	return spec.Components[0]
}

// keyDoc is what a starter study's comment says of one top-level key:
// Doc above the key when the study has it, Example as a commented-out
// line when it does not.
type keyDoc struct {
	Doc, Example string
}

// keyDocs says what each top-level key does, in a few words; the whole
// story is docs/study-file.md. Every key of topKeys has one (a test
// checks), so a new key cannot reach `tierbench init` unexplained.
var keyDocs = map[string]keyDoc{
	"name":   {Doc: "A short name for the study, shown by `tierbench list` and `show` beside its id."},
	"engine": {Doc: "The engine whose components are placed on tiers (`tierbench engines` lists them)."},
	"tiers": {Doc: "The storages to place components on, by name: folders, created when missing (their parent " +
		"folder must exist), or storage tierbench provisions (tmpfs, loop, pmem; docs/tiers.md). A folder on " +
		"tmpfs (/dev/shm) is RAM: fast, but NOT durable, since fsync does nothing there."},
	"placements": {Doc: "Which tier each component lives on, one placement a line; every placement is one " +
		"more series of the answer."},
	"baseline": {Doc: "The placement every other is compared with (not needed when there is only one)."},
	"durability": {Doc: "The durability modes to run, each a row of the answer: what an acknowledged write " +
		"has reached when the client hears back."},
	"workload": {Doc: "The load: a workload's name and any of its parameters (`tierbench workloads NAME` lists them)."},
	"clients":  {Doc: "The client counts to run, each a column of the answer."},
	"warmup":   {Doc: "Run before each measured window: measured, stored, excluded from the figures."},
	"duration": {Doc: "Each run's measured window."},
	"repeat": {Doc: "Rounds, each a run of every cell in a shuffled order: a number, or {min, max, until, " +
		"budget} to run rounds until every comparison is decided or its 95% CI within ±until, or the budget would pass (docs/statistics.md).",
		Example: "repeat: {min: 5, max: 30, until: 5%, budget: 1h}"},
	"order":       {Doc: "The order of each round's runs: shuffled (default, seed stored), fixed, or {seed: N}.", Example: "order: shuffled"},
	"margin":      {Doc: "Two series are \"equivalent\" when the 90% CI of their ratio is within ±margin.", Example: "margin: 5%"},
	"target_rate": {Doc: "Total operations per second over all clients: open loop (latency from the intended start).", Example: "target_rate: 20000"},
	"arrival":     {Doc: "How open-loop operations are spaced: constant or poisson.", Example: "arrival: poisson"},
	"max_ops":     {Doc: "Ends each measured window after that many operations, or its duration.", Example: "max_ops: 100000"},
	"options": {Doc: "Engine options by name (`tierbench engines ENGINE` lists them); a list of values sweeps one.",
		Example: "options: {...}"},
	"probe":  {Doc: "fio figures of each tier: cached (default), quick, full or off.", Example: "probe: quick"},
	"cache":  {Doc: "warm (default), cold (page cache dropped, engine restarted before measuring) or [cold, warm].", Example: "cache: [cold, warm]"},
	"crash":  {Doc: "Crash each run's engine inside its window and count lost acknowledged writes: none, process, power, or a list (docs/crash-runs.md).", Example: "crash: [none, process]"},
	"driver": {Doc: "What generates the load: builtin (default), builtin:lanes=N, or a standard tool; a list compares them.", Example: "driver: builtin"},
	"target": {Doc: "Measure a server you run instead of starting one (postgres://, mysql://, redis://, http://).", Example: "target: postgres://user:password@host:5432/db"},
	"slo": {Doc: "Makes this a capacity study: each round searches every placement's highest open-loop rate whose latency " +
		"at the percentile (from each operation's intended start) meets the bound (docs/capacity.md).", Example: "slo: {p99: 20ms}"},
	"need":     {Doc: "The rate (ops/s) the decision asks for: the cheapest placement whose capacity meets it under slo.", Example: "need: 20000"},
	"search":   {Doc: "How each capacity is searched: the rate to start from, the resolution the bracket closes to, the most tried.", Example: "search: {from: 1000, resolution: 5%}"},
	"size":     {Doc: "Production sizes of components, which price them on their tiers instead of the footprint measured.", Example: "size: {wal: 16GiB}"},
	"host":     {Doc: "The host's own cost a month, added to every placement's.", Example: "host: {cost: {per_month: 300}}"},
	"platform": {Doc: "Where the study runs: local (default) or a Kubernetes cluster (docs/kubernetes.md).", Example: "platform: {kubernetes: {namespace: bench, image: ...}}"},
}

// commentWidth is where Commented wraps its comments.
const commentWidth = 78

// Commented returns study text with a comment above each top-level key
// that says what the key does (for placements and durability, with the
// engine's components and modes), and, at the end, the optional keys the
// study leaves out, commented out. A line that is already a comment is
// kept as it is.
func Commented(text string, spec engine.Spec) string {
	var b strings.Builder
	present := map[string]bool{}
	for _, line := range strings.SplitAfter(text, "\n") {
		key, ok := topKey(line)
		if d, known := keyDocs[key]; ok && known {
			present[key] = true
			b.WriteString("\n")
			writeComment(&b, "#", d.Doc+engineNote(key, spec))
		}
		b.WriteString(line)
	}
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	first := true
	for _, key := range topKeys {
		d := keyDocs[key]
		if present[key] || d.Example == "" {
			continue
		}
		if first {
			b.WriteString("\n# Optional keys, left out here (every key: docs/study-file.md):\n")
			first = false
		}
		b.WriteString("# " + d.Example + "\n")
		writeComment(&b, "#    ", d.Doc)
	}
	return b.String()
}

// engineNote adds the engine's own words to the comment of key: what its
// components hold, and its durability modes.
func engineNote(key string, spec engine.Spec) string {
	switch key {
	case "placements":
		var parts []string
		for _, c := range spec.Components {
			s := c.Name
			if c.DefaultsTo != "" {
				s += " (optional: with " + c.DefaultsTo + " when left out)"
			}
			parts = append(parts, s)
		}
		return fmt.Sprintf(" Components of %s: %s.", spec.Name, strings.Join(parts, ", "))
	case "durability":
		return fmt.Sprintf(" Modes of %s: %s (`tierbench engines %s` says what each promises through a crash).",
			spec.Name, strings.Join(spec.ModeNames(), ", "), spec.Name)
	}
	return ""
}

// topKey is the top-level key a study line starts, if it starts one.
func topKey(line string) (string, bool) {
	i := strings.IndexByte(line, ':')
	if i <= 0 || line[0] == ' ' || line[0] == '#' {
		return "", false
	}
	key := line[:i]
	return key, slices.Contains(topKeys, key)
}

// writeComment writes text as comment lines starting with lead, wrapped
// at commentWidth.
func writeComment(b *strings.Builder, lead, text string) {
	line := lead
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > commentWidth && line != lead {
			b.WriteString(line + "\n")
			line = lead
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}
