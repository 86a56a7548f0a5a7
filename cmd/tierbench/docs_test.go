package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier/profile"
)

// These tests keep what README.md and docs/*.md tell a user to type true
// to the code: every study snippet is checked as `tierbench validate`
// checks a file, and every tierbench command line is parsed by the
// command tree itself. A page added to docs/ is read without being named
// here. The conventions, for whoever writes the docs:
//
// Study snippets are the fenced ```yaml blocks; one with a top-level
// source: key is a device profile, read as a profile file is.
//   - A block with a name: key is a whole study, checked as it is.
//   - Any other block is a fragment: the keys a section is about (tiers:,
//     repeat: ...). It must be valid in some study, so it is completed and
//     then checked: the study `tierbench init --engine E` writes gives the
//     keys the fragment does not set, for the engine it names, else for
//     each engine in turn (pebble first) until one accepts it. Of the
//     starter's keys only name, engine, tiers, placements, baseline,
//     durability, workload, clients, warmup and duration are taken; the
//     others keep their defaults. When the fragment sets tiers,
//     placements or platform, the tiers, placements and baseline it leaves
//     out are made to fit it instead: its placements' tiers as folders
//     (storage classes on Kubernetes), one placement per tier with every
//     component on it, the first placement as baseline.
//   - A block that shows a mistake is marked by the line <!-- invalid -->
//     before it (blank lines aside), and must then be refused (a fragment
//     by every engine tried).
//   - A block with a top-level jobs: key is a CI workflow (GitHub Actions'
//     form), not a study: the lines of its steps' run: scripts are
//     command lines, checked as a shell block's are.
//
// Folder tiers are checked as validate checks them, on this machine, so
// snippets name folders every Linux has a parent of (/dev/shm/...,
// /var/tmp/...). Preflight (installed programs, root, free space) and the
// cluster check are left out: they judge the machine, not the text.
//
// Command lines are the lines of fenced sh, bash, shell, console and plain
// (no language) blocks, and the inline code spans, that start with
// tierbench, bin/tierbench or ./bin/tierbench (after an optional "$ "
// prompt and VAR=value settings; a trailing \ continues a line, # starts a
// comment), and the spans that start with one of its commands and have a
// --flag (`show --format json`). Each is found and parsed by the command
// tree newRoot builds, without running it: an unknown command or flag, or
// a flag value its type refuses (--clients x), fails. Usage notation is
// understood: [optional] parts are parsed as if given, a|b alternatives
// one at a time, ... is dropped, and an UPPER_CASE or <angled> word is a
// placeholder (a typed flag's placeholder is parsed as its default). A
// block's command must also have the right number of arguments and its
// required flags (and a drive line, drive's own check of its values, which
// contacts nothing: engine, target, workload, --set, --option); an inline
// span may leave arguments out (`tierbench cluster up` names the command,
// `drive --wait` a flag), but not give too many. In a table, \| in a span
// is |. A span that shows a mistake is followed by <!-- invalid --> and
// must fail.

// invalidMark marks a snippet or command line that shows a mistake.
const invalidMark = "<!-- invalid -->"

// TestDocsStudySnippets checks every study snippet in README.md and
// docs/*.md with the parser `tierbench validate` runs (study.Parse with
// the built-in catalog).
func TestDocsStudySnippets(t *testing.T) {
	cat := catalog.Default()
	n := 0
	for _, page := range docPages(t) {
		checked, probs := snippetProblems(cat, page)
		n += checked
		for _, p := range probs {
			t.Error(p)
		}
	}
	if n == 0 {
		t.Fatal("found no ```yaml block in README.md and docs/*.md: is the scanner broken?")
	}
	t.Logf("checked %d study snippets", n)
}

// snippetProblems checks a page's study snippets: how many there are,
// and what is wrong with them, each message naming its page and line.
func snippetProblems(cat *catalog.Catalog, page docPage) (n int, out []string) {
	for _, b := range page.blocks {
		if _, workflow := isWorkflow(b); workflow || (b.lang != "yaml" && b.lang != "yml") {
			continue
		}
		n++
		at := fmt.Sprintf("%s:%d", page.name, b.line)
		probs, how := checkSnippet(cat, page.name, b)
		if isProfile(b) {
			probs, how = checkProfile(page.name, b), "the profile reader (profile.Parse)"
		}
		switch {
		case b.invalid && len(probs) == 0:
			out = append(out, fmt.Sprintf("%s: the snippet is marked %s, but %s accepts it: fix it to show the mistake, or remove the mark", at, invalidMark, how))
		case !b.invalid && len(probs) > 0:
			out = append(out, fmt.Sprintf("%s: %s refuses the snippet; fix it to what the code takes (or, if it shows a mistake, put %s on the line before it):\n\t%s",
				at, how, invalidMark, strings.Join(probs, "\n\t")))
		}
	}
	return n, out
}

// checkSnippet parses a yaml block as validate would: a whole study as it
// is, a fragment completed by each engine in turn. It returns the
// problems, each as page:line: message (none when some completion is
// accepted), and what checked it, for messages.
func checkSnippet(cat *catalog.Catalog, page string, b fencedBlock) (probs []string, how string) {
	text := strings.Join(b.body, "\n") + "\n"
	var root yaml.Node
	err := yaml.Unmarshal([]byte(text), &root)
	isMapping := err == nil && len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode
	if !isMapping || slices.Contains(mappingKeys(root.Content[0]), "name") {
		// A whole study, or not a mapping at all: Parse says what is wrong.
		return problemsAt(page, b, parseErr(page, text, cat), nil), "validate"
	}
	frag := root.Content[0]
	engines := snippetEngines(cat, frag)
	var best []string
	bestEngine := ""
	for _, e := range engines {
		completion, ok := complete(cat, e, frag)
		if !ok {
			continue
		}
		full := text + completion
		p := problemsAt(page, b, parseErr(page, full, cat), strings.Split(full, "\n"))
		if len(p) == 0 {
			return nil, fmt.Sprintf("validate (the fragment completed from `tierbench init --engine %s`)", e)
		}
		if best == nil || len(p) < len(best) {
			best, bestEngine = p, e
		}
	}
	how = fmt.Sprintf("validate (the fragment completed from `tierbench init --engine %s`)", bestEngine)
	if len(engines) > 1 {
		how = fmt.Sprintf("validate (the fragment completed from `tierbench init --engine %s`, and from every other engine's)", bestEngine)
	}
	return best, how
}

// isProfile reports whether a yaml block is a device profile rather than
// a study: a profile file says its source: at the top.
func isProfile(b fencedBlock) bool {
	var root yaml.Node
	if yaml.Unmarshal([]byte(strings.Join(b.body, "\n")), &root) != nil || len(root.Content) != 1 {
		return false
	}
	return slices.Contains(mappingKeys(root.Content[0]), "source")
}

// checkProfile reads a profile snippet as `profile: FILE` would.
func checkProfile(page string, b fencedBlock) []string {
	if _, err := profile.Parse([]byte(strings.Join(b.body, "\n")+"\n"), "snippet"); err != nil {
		return []string{fmt.Sprintf("%s:%d: %v", page, b.line, err)}
	}
	return nil
}

// problemsAt renders Parse's problems at their lines in the page: a line
// past the snippet is in the completion, quoted from full.
func problemsAt(page string, b fencedBlock, err error, full []string) []string {
	if err == nil {
		return nil
	}
	var ps study.Problems
	if !errors.As(err, &ps) {
		return []string{fmt.Sprintf("%s:%d: %v", page, b.line, err)}
	}
	var out []string
	for _, p := range ps {
		switch {
		case p.Line == 0:
			out = append(out, fmt.Sprintf("%s:%d: %s", page, b.line, p.Msg))
		case p.Line <= len(b.body):
			out = append(out, fmt.Sprintf("%s:%d: %s", page, b.line+p.Line, p.Msg))
		default:
			quoted := ""
			if p.Line <= len(full) {
				quoted = strings.TrimSpace(full[p.Line-1])
			}
			out = append(out, fmt.Sprintf("%s:%d: (in the completion, at %q) %s", page, b.line, quoted, p.Msg))
		}
	}
	return out
}

// parseErr is study.Parse's error alone: what validate reports.
func parseErr(page, text string, cat *catalog.Catalog) error {
	_, err := study.Parse(page, []byte(text), cat)
	return err
}

// snippetEngines are the engines a fragment is completed with: the one
// it names, else pebble, the default, then the others by name.
func snippetEngines(cat *catalog.Catalog, frag *yaml.Node) []string {
	for i := 0; i+1 < len(frag.Content); i += 2 {
		if frag.Content[i].Value == "engine" {
			if _, ok := cat.EngineSpec(frag.Content[i+1].Value); ok {
				return []string{frag.Content[i+1].Value}
			}
			return []string{"pebble"} // to say the name is wrong
		}
	}
	names := slices.DeleteFunc(slices.Clone(cat.EngineNames()), func(n string) bool { return n == "pebble" })
	return append([]string{"pebble"}, names...)
}

// baseKeys are the keys a fragment's completion takes from the starter
// study; the others (crash, repeat, ...) are left at their defaults.
var baseKeys = []string{"name", "engine", "tiers", "placements", "baseline", "durability", "workload", "clients", "warmup", "duration"}

// complete returns the top-level keys the fragment frag (a mapping)
// leaves out, as YAML text, for engine name; false if the engine has no
// starter study.
func complete(cat *catalog.Catalog, name string, frag *yaml.Node) (string, bool) {
	starter, err := study.Starter(cat, name)
	if err != nil {
		return "", false
	}
	var sdoc yaml.Node
	if err := yaml.Unmarshal([]byte(starter), &sdoc); err != nil {
		panic(fmt.Sprintf("the starter study of %s is not YAML: %v", name, err))
	}
	spec, _ := cat.EngineSpec(name)
	given := map[string]*yaml.Node{}
	for i := 0; i+1 < len(frag.Content); i += 2 {
		given[frag.Content[i].Value] = frag.Content[i+1]
	}
	out := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) {
		out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	// The starter's tiers and placements do not fit a fragment that sets
	// any of them, or a platform; with a target they are optional.
	_, hasTarget := given["target"]
	_, hasTiers := given["tiers"]
	_, hasPlacements := given["placements"]
	onCluster := given["platform"] != nil && given["platform"].Kind == yaml.MappingNode
	derive := hasTiers || hasPlacements || onCluster
	sm := sdoc.Content[0]
	for i := 0; i+1 < len(sm.Content); i += 2 {
		key, v := sm.Content[i].Value, sm.Content[i+1]
		switch {
		case !slices.Contains(baseKeys, key) || given[key] != nil:
		case hasTarget && slices.Contains([]string{"tiers", "placements", "baseline", "durability"}, key):
		case derive && slices.Contains([]string{"tiers", "placements", "baseline"}, key):
		default:
			add(key, v)
		}
	}
	if derive && !hasTarget {
		tiers := mappingKeys(given["tiers"])
		if !hasTiers {
			tiers = placementTiers(given["placements"])
			if len(tiers) == 0 {
				tiers = []string{"fast", "disk"}
			}
			m := &yaml.Node{Kind: yaml.MappingNode}
			for _, t := range tiers {
				kind := fmt.Sprintf("{path: /var/tmp/tierbench-docs-%s}", t)
				if onCluster {
					kind = fmt.Sprintf("{storage_class: %s}", t)
				}
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: t}, flowNode(kind))
			}
			add("tiers", m)
		}
		placements := mappingKeys(given["placements"])
		if !hasPlacements {
			m := &yaml.Node{Kind: yaml.MappingNode}
			placements = nil
			for _, t := range tiers {
				var comps []string
				for _, c := range spec.Components {
					if c.DefaultsTo == "" {
						comps = append(comps, c.Name+": "+t)
					}
				}
				placements = append(placements, "on-"+t)
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "on-" + t}, flowNode("{"+strings.Join(comps, ", ")+"}"))
			}
			add("placements", m)
		}
		if given["baseline"] == nil && len(placements) > 0 {
			add("baseline", &yaml.Node{Kind: yaml.ScalarNode, Value: placements[0]})
		}
	}
	text, err := yaml.Marshal(out)
	if err != nil {
		panic(fmt.Sprintf("marshal a completion: %v", err))
	}
	return string(text), true
}

// flowNode parses a small YAML value written in flow style.
func flowNode(text string) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		panic(fmt.Sprintf("%q: %v", text, err))
	}
	return doc.Content[0]
}

// mappingKeys returns a mapping's keys in order; none if m is not one.
func mappingKeys(m *yaml.Node) []string {
	var keys []string
	if m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			keys = append(keys, m.Content[i].Value)
		}
	}
	return keys
}

// placementTiers returns the tiers a placements mapping names, in order
// of first use.
func placementTiers(m *yaml.Node) []string {
	var tiers []string
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 1; i < len(m.Content); i += 2 {
		p := m.Content[i]
		if p.Kind != yaml.MappingNode {
			continue
		}
		for j := 1; j < len(p.Content); j += 2 {
			if v := p.Content[j]; v.Kind == yaml.ScalarNode && !slices.Contains(tiers, v.Value) {
				tiers = append(tiers, v.Value)
			}
		}
	}
	return tiers
}

// TestDocsCommandLines parses every tierbench command line in README.md
// and docs/*.md with the command tree, without running anything.
func TestDocsCommandLines(t *testing.T) {
	n := 0
	for _, page := range docPages(t) {
		checked, probs := commandProblems(page)
		n += checked
		for _, p := range probs {
			t.Error(p)
		}
	}
	if n == 0 {
		t.Fatal("found no tierbench command line in README.md and docs/*.md: is the scanner broken?")
	}
	t.Logf("checked %d command lines", n)
}

// commandProblems checks a page's command lines: how many there are, and
// what is wrong with them, each message naming its page and line.
func commandProblems(page docPage) (n int, out []string) {
	for _, c := range page.commands {
		n++
		err := checkCommandLine(c.text, c.strict)
		at := fmt.Sprintf("%s:%d", page.name, c.line)
		switch {
		case c.invalid && err == nil:
			out = append(out, fmt.Sprintf("%s: `%s` is marked %s, but the command tree takes it: fix it to show the mistake, or remove the mark", at, c.text, invalidMark))
		case !c.invalid && err != nil:
			out = append(out, fmt.Sprintf("%s: `%s`: %v; fix the line to what `tierbench --help` and its commands' --help say (or, if it shows a mistake, follow it with %s)", at, c.text, err, invalidMark))
		}
	}
	return n, out
}

// checkCommandLine parses one command line, every variant its usage
// notation allows; strict (a block's line) also checks the arguments'
// count and the required flags.
func checkCommandLine(line string, strict bool) error {
	words, ok := commandWords(line)
	if !ok {
		return fmt.Errorf("not a tierbench command line")
	}
	variants := usageVariants(words)
	for _, args := range variants {
		if err := parseCommand(args, strict); err != nil {
			if len(variants) > 1 {
				return fmt.Errorf("as `tierbench %s`: %w", strings.Join(args, " "), err)
			}
			return err
		}
	}
	return nil
}

// parseCommand finds and parses args as `tierbench ARGS` would be,
// stopping before any command runs.
func parseCommand(args []string, strict bool) error {
	root := newRoot()
	root.InitDefaultHelpCmd() // as Execute does
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	cmd.InheritedFlags() // merges the parents' persistent flags into Flags
	if !strict && len(rest) > 0 {
		// Inline, a flag may be named without its value (`drive --wait`).
		last := rest[len(rest)-1]
		if f := cmd.Flags().Lookup(strings.TrimPrefix(last, "--")); strings.HasPrefix(last, "--") && f != nil && f.NoOptDefVal == "" {
			rest = append(slices.Clone(rest), "VALUE")
		}
	}
	rest = placeholderValues(cmd.Flags(), rest)
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	pos := cmd.Flags().Args()
	switch {
	case cmd.HasSubCommands():
		// A group refuses an unknown command through its Args.
		return cmd.ValidateArgs(pos)
	case strict:
		if err := cmd.ValidateArgs(pos); err != nil {
			return err
		}
		if err := cmd.ValidateRequiredFlags(); err != nil {
			return err
		}
		if err := cmd.ValidateFlagGroups(); err != nil {
			return err
		}
		if check := valueChecks[cmd.CommandPath()]; check != nil && !slices.ContainsFunc(args, placeholder) {
			return check(cmd.Flags())
		}
		return nil
	}
	// Inline, arguments may be left out, but not too many given.
	err = cmd.ValidateArgs(pos)
	for k := 1; err != nil && k <= 3; k++ {
		if cmd.ValidateArgs(append(slices.Clone(pos), slices.Repeat([]string{"ARG"}, k)...)) == nil {
			err = nil
		}
	}
	return err
}

// valueChecks are commands' own checks of their flag values, by command
// path, where a command has one that contacts nothing: a whole command
// line of the docs is put through it too.
var valueChecks = map[string]func(*pflag.FlagSet) error{
	"tierbench drive": func(fs *pflag.FlagSet) error {
		var o driveOptions
		var errs []error
		get := func(v any, err error) any { errs = append(errs, err); return v }
		o.engine = get(fs.GetString("engine")).(string)
		o.target = get(fs.GetString("target")).(string)
		o.workload = get(fs.GetString("workload")).(string)
		o.params = get(fs.GetStringArray("set")).([]string)
		o.durability = get(fs.GetString("durability")).(string)
		o.options = get(fs.GetStringArray("option")).([]string)
		o.clients = get(fs.GetInt("clients")).(int)
		o.loaders = get(fs.GetInt("loaders")).(int)
		o.warmup = get(fs.GetDuration("warmup")).(time.Duration)
		o.duration = get(fs.GetDuration("duration")).(time.Duration)
		o.load = get(fs.GetBool("load")).(bool)
		o.wait = get(fs.GetDuration("wait")).(time.Duration)
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("the test reads drive's flags into driveOptions, and %w: keep valueChecks in step with newDriveCmd", err)
		}
		_, err := o.check(catalog.Default())
		return err
	},
}

// placeholderValues replaces the placeholder value of a typed flag
// (--clients N) with the flag's default, which its type parses.
func placeholderValues(fs *pflag.FlagSet, args []string) []string {
	out := slices.Clone(args)
	typed := func(f *pflag.Flag) bool {
		return f != nil && !slices.Contains([]string{"string", "stringArray", "stringSlice"}, f.Value.Type())
	}
	for i := 0; i < len(out); i++ {
		a := out[i]
		var f *pflag.Flag
		switch {
		case strings.HasPrefix(a, "--"):
			name, val, eq := strings.Cut(a[2:], "=")
			f = fs.Lookup(name)
			if eq {
				if typed(f) && placeholder(val) {
					out[i] = "--" + name + "=" + f.DefValue
				}
				continue
			}
		case strings.HasPrefix(a, "-") && len(a) == 2:
			f = fs.ShorthandLookup(a[1:])
		}
		if typed(f) && f.NoOptDefVal == "" && i+1 < len(out) && placeholder(out[i+1]) {
			out[i+1] = f.DefValue
			i++
		}
	}
	return out
}

var placeholderRE = regexp.MustCompile(`^([A-Z][A-Z0-9_]*|<[^>]*>)$`)

// placeholder reports whether a word of a command line stands for a value
// (FILE, STUDY_ID, <printed>) rather than being one.
func placeholder(w string) bool { return placeholderRE.MatchString(w) }

// usageVariants expands a command line's usage notation into the
// argument lists it stands for: brackets dropped (optional parts given),
// "..." dropped, and each a|b word taking its first alternative in the
// first list, its second in the second, and so on.
func usageVariants(words []word) [][]string {
	var alts [][]string
	n := 1
	for _, w := range words {
		s := w.text
		if !w.quoted {
			s = strings.NewReplacer("[", "", "]", "").Replace(s)
			s = strings.TrimSuffix(s, "...")
			if s == "" {
				continue
			}
		}
		a := []string{s}
		if !w.quoted && strings.Contains(s, "|") {
			a = strings.Split(s, "|")
		}
		alts = append(alts, a)
		n = max(n, len(a))
	}
	variants := make([][]string, n)
	for i := range variants {
		for _, a := range alts {
			variants[i] = append(variants[i], a[min(i, len(a)-1)])
		}
	}
	return variants
}

// word is one word of a command line, and whether any of it was quoted
// (then it is taken as it is, not as usage notation).
type word struct {
	text   string
	quoted bool
}

// tierbenchProgram matches the ways the docs run tierbench.
var tierbenchProgram = []string{"tierbench", "bin/tierbench", "./bin/tierbench"}

// commandWords splits a shell command line into the words after the
// tierbench program: a "$ " prompt, sudo and VAR=value settings before it
// are skipped, a # comment and anything after a pipe, redirection or
// command separator are dropped. ok is false when the line does not run
// tierbench.
func commandWords(line string) (args []word, ok bool) {
	words := shellWords(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
	for len(words) > 0 && !words[0].quoted && (words[0].text == "sudo" || envAssignRE.MatchString(words[0].text)) {
		words = words[1:]
	}
	if len(words) == 0 || words[0].quoted || !slices.Contains(tierbenchProgram, words[0].text) {
		return nil, false
	}
	return words[1:], true
}

var envAssignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellWords splits a line as a POSIX shell would, for the cases the docs
// have: quotes, backslashes, comments, and an unquoted |, ;, &, < or >
// word (or a word starting with >, as 2>&1 does after its digit) ending
// the command.
func shellWords(line string) []word {
	var (
		words []word
		cur   strings.Builder
		in    bool // inside a word
		quote bool // the word has a quoted part
	)
	flush := func() {
		if in {
			words = append(words, word{cur.String(), quote})
		}
		cur.Reset()
		in, quote = false, false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !in:
			flush()
			return words
		case strings.IndexByte(";&<>", c) >= 0 || (c == '|' && !in):
			// An operator (a | inside a word is usage notation: a|b).
			if in && strings.IndexByte("<>", c) >= 0 && isDigits(cur.String()) {
				in = false // 2>: the digits were the descriptor
			}
			flush()
			return words
		case c == '\'':
			in, quote = true, true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			in, quote = true, true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			in, quote = true, true
			i++
			cur.WriteByte(line[i])
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	flush()
	return words
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// TestDocsCheckersCatchDrift runs the two checks above on small pages, so
// that a drifted doc is known to fail them, at its line, and the
// conventions (fragments, usage notation, the invalid mark) hold.
func TestDocsCheckersCatchDrift(t *testing.T) {
	cat := catalog.Default()
	const study = "```yaml\nname: s\nengine: pebble\ntiers:\n  disk: {path: /var/tmp/tierbench-docs}\nplacements:\n  all-disk: {data: disk, wal: disk}\n" +
		"durability: [sync]\nworkload: {name: ycsb-a, records: 1000}\nclients: [1]\nwarmup: 1s\nduration: 2s\n"
	for _, c := range []struct {
		name, page string
		want       []string // in the problems, in order; none: no problem
	}{
		{"a whole study", study + "```\n", nil},
		{"a key renamed in a whole study", study + "repeats: 3\n```\n", []string{`x.md:13: unknown key "repeats"`}},
		{"a whole study missing a key", "text\n\n```yaml\nname: s\nengine: pebble\n```\n", []string{"x.md:3: ", "tiers"}},
		{"a fragment of tiers", "```yaml\ntiers:\n  t: {tmpfs: {size: 64MiB}}\n  u: {loop: {backing: ram, size: 1GiB}}\n```\n", nil},
		{"a fragment of placements", "```yaml\nplacements:\n  a: {data: disk, wal: disk}\n  b: {data: disk, wal: ram}\n```\n", nil},
		{"a fragment on a cluster", "```yaml\nplatform: {kubernetes: {image: x/tierbench:1}}\n```\n", nil},
		{"a fragment naming its engine", "```yaml\nengine: redis\nplacements:\n  a: {data: disk}\n  b: {data: ram}\n```\n", nil},
		{"a fragment naming a wrong engine", "```yaml\nengine: redis\ntiers:\n  disk: {path: /var/tmp/tierbench-docs}\nplacements:\n  a: {data: disk, wal: disk}\n```\n", []string{"--engine redis`)", "x.md:6: ", "wal"}},
		{"a fragment with a wrong value", "```yaml\nrepeat: {min: 5, max: 3}\n```\n", []string{"every other engine", "x.md:2: repeat min 5 is more than max 3"}},
		{"a fragment's unknown tier kind", "```yaml\ntiers:\n  t: {nvme: /dev/nvme0}\n```\n", []string{"x.md:3: "}},
		{"a fragment marked invalid", "<!-- invalid -->\n```yaml\nclients: [0]\n```\n", nil},
		{"a valid fragment marked invalid", "<!-- invalid -->\n\n```yaml\nclients: [2]\n```\n", []string{"x.md:3: the snippet is marked"}},
		{"YAML that does not parse", "```yaml\ntiers: {a: [\n```\n", []string{"x.md:"}},

		{"a CI workflow", "```yaml\non: [pull_request]\njobs:\n  gate:\n    steps:\n      - run: make\n      - run: |\n          bin/tierbench run a.yaml --results r\n          bin/tierbench compare A B --results r --fail-on worse\n```\n", nil},
		{"a CI workflow's wrong flag", "```yaml\njobs:\n  gate:\n    steps:\n      - run: tierbench show --json\n      - run: |\n          echo\n          tierbench compare A B --fail-at worse\n```\n",
			[]string{"x.md:5: `tierbench show --json`", "x.md:8: `tierbench compare A B --fail-at worse`: unknown flag: --fail-at"}},
		{"a command line", "```sh\nbin/tierbench show latest --format json  # the answer\n```\n", nil},
		{"an unknown flag", "```sh\nbin/tierbench show --formt json\n```\n", []string{"x.md:2: ", "unknown flag: --formt"}},
		{"a flag value of the wrong type", "```bash\ntierbench report --clients many\n```\n", []string{`invalid argument "many" for "--clients"`}},
		{"an unknown command", "```console\n$ ./bin/tierbench frobnicate\n```\n", []string{`unknown command "frobnicate"`}},
		{"too many arguments", "```sh\ntierbench validate a.yaml b.yaml\n```\n", []string{"accepts 1 arg(s), received 2"}},
		{"an argument left out in a block", "```sh\ntierbench validate\n```\n", []string{"accepts 1 arg(s), received 0"}},
		{"an argument left out inline", "The command `tierbench validate` checks.\n", nil},
		{"too many arguments inline", "Run `tierbench validate\na.yaml b.yaml` now.\n", []string{"x.md:1: ", "received 2"}},
		{"usage notation", "```sh\ntierbench report [STUDY_ID|latest] [-o FILE] [--format html|markdown] [--clients N]\ntierbench compare A B [...] [--force]\n```\n", nil},
		{"usage notation with a wrong alternative", "```sh\ntierbench probe [--quick|--slow]\n```\n", []string{"as `tierbench probe --slow`", "unknown flag: --slow"}},
		{"a table cell", "| `tierbench show [STUDY_ID\\|latest] [--wide]` | what |\n", nil},
		{"a continued line, a pipe, a setting", "```sh\nX=1 tierbench probe --quick \\\n  --format json /dev/shm | jq .\n```\n", nil},
		{"drive's own check", "```sh\ntierbench drive --engine postgres --target postgres://u@h/db --workload tpcb --set scal=10\n```\n", []string{"--set \"scal=10\""}},
		{"an unknown command marked invalid", "An unknown one (`tierbench cluster start`<!-- invalid -->) exits 2.\n", nil},
		{"a valid command marked invalid", "`tierbench cluster down` <!-- invalid -->\n", []string{"is marked <!-- invalid -->"}},
		{"tierbench named, not run", "The `tierbench` user, and `go test ./cmd/tierbench`.\n", nil},
		{"a command without the program", "In `show --format json` and go-ycsb's `run basic`.\n", nil},
		{"a wrong flag without the program", "In `show --json`.\n", []string{"unknown flag: --json"}},
		{"a flag named without its value", "See `drive --wait` and `tierbench report --clients`.\n", nil},
		{"a flag's value left out in a block", "```sh\ntierbench report --clients\n```\n", []string{"flag needs an argument: --clients"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			page := scanPage("x.md", c.page)
			_, snippets := snippetProblems(cat, page)
			_, commands := commandProblems(page)
			got := strings.Join(append(snippets, commands...), "\n")
			if len(c.want) == 0 && got != "" {
				t.Fatalf("want no problem, got:\n%s", got)
			}
			if len(c.want) > 0 && got == "" {
				t.Fatalf("want problems with %q, got none", c.want)
			}
			rest := got
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("want %q in the problems (in order), got:\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
