package study

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/userfile"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/workload"
)

// Problem is one thing wrong with a study file. It carries a line number so
// the user (or an editor reading compiler-style output) can jump straight to
// the mistake.
type Problem struct {
	File string
	// Line counts from 1; 0 means the problem is about the whole file.
	Line int
	// Msg says what is wrong and, after a semicolon, how to fix it.
	Msg string
}

// String renders the problem as FILE:LINE: MSG, the form compilers use, so
// editors and terminals can link it to the source.
func (p Problem) String() string {
	switch {
	case p.File == "":
		return p.Msg
	case p.Line <= 0:
		return p.File + ": " + p.Msg
	default:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
}

// Problems is every problem found in a study file. Parse returns them all at
// once, so a user fixes a study in one edit rather than one error per run;
// callers detect bad input with errors.As(err, &study.Problems{}).
type Problems []Problem

// Error lists the problems one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// ParseFile reads and parses a study file. A file that cannot be read is
// reported as Problems too: to the user it is bad input like any other.
func ParseFile(path string, cat Catalog) (*Study, error) {
	data, err := userfile.Read(path, "study file", MaxFileBytes)
	var notFile *userfile.NotUsableError
	switch {
	case errors.As(err, &notFile):
		return nil, Problems{{Msg: "study file " + err.Error()}}
	case err != nil:
		// os.PathError repeats the path; keep only the reason.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, Problems{{Msg: fmt.Sprintf("cannot read study file %s: %v; check the path and its permissions", path, err)}}
	}
	return Parse(path, data, cat)
}

// MaxFileBytes bounds a study file: the largest real one is a few KiB, and
// a bound means a wrong path (a device, a log) is refused at once rather
// than read until memory runs out. A pipe (validate <(make-study)) is read
// within the bound too.
const MaxFileBytes = 1 << 20

// Parse parses and validates a study file. filename is used only in
// problems. On any problem it returns a nil Study and a Problems error that
// lists them all, sorted by line.
//
// Parsing walks a yaml.Node tree rather than decoding into structs: only the
// node tree keeps the line of every key and value, and walking it by hand is
// what lets unknown keys be reported (never silently ignored) at their line.
func Parse(filename string, data []byte, cat Catalog) (*Study, error) {
	if filename == "" {
		filename = "<study>"
	}
	p := &parser{file: filename, cat: cat}
	s := p.parse(data)
	if len(p.probs) > 0 {
		return nil, p.sorted()
	}
	s.Source = string(data)
	s.File = filename
	return s, nil
}

// parser accumulates problems while walking one study file.
type parser struct {
	file  string
	cat   Catalog
	probs Problems
	// misspelt holds required keys that an unknown key was suggested as:
	// "duraton" is one mistake, so "duration" is not also reported missing.
	misspelt map[string]bool
	// hasTarget is true when the study has a target key, even one whose
	// URL is wrong: tiers, placements and durability are then optional, so
	// a bad URL is one problem, not one plus four missing keys (misspelt
	// then holds those keys too: their absence is explained).
	hasTarget bool
	// clusterRefs are the tiers rbd tiers place their clusters on, checked
	// once every tier is declared.
	clusterRefs []clusterRef

	// What the keys read so far resolved, for the keys that depend on them.
	// A key with a problem leaves its part unset (spec nil, tiersOK false),
	// so the keys after it skip the checks that would only repeat the
	// problem.
	top  map[string]entry // the study's top-level keys
	line int              // the study's first line, for missing keys
	// spec is the engine's Spec; nil when engine is missing or unknown.
	spec *engine.Spec
	// tierNames are the declared tiers; tiersOK is false when tiers had a
	// problem, so placements do not also report undeclared tiers.
	tierNames []string
	tiersOK   bool
	// built is the workload as the study configures it; nil when the
	// workload had a problem.
	built workload.Workload
	// optionSets are the engine's options of each combination of the
	// swept values, resolved once for the checks that read them; none
	// when the engine or its options had a problem.
	optionSets []optionSet
	// tierCosts are the tiers' costs (cost:), with the lines they are on,
	// and currency the symbol their prices carry; a capacity study reads
	// them (slo.go).
	tierCosts     map[string]results.Cost
	tierCostLines map[string]int
	currency      string
	// untilLine is the line of repeat's until, 0 when left out.
	untilLine int
}

// addf records a problem at line (at least 1, so output always has the
// FILE:LINE: form editors understand).
func (p *parser) addf(line int, format string, args ...any) {
	p.probs = append(p.probs, Problem{File: p.file, Line: max(line, 1), Msg: fmt.Sprintf(format, args...)})
}

// sorted orders problems by line for reading top to bottom and drops exact
// repeats (an anchor merged into several mappings is one mistake, not many).
func (p *parser) sorted() Problems {
	sort.SliceStable(p.probs, func(i, j int) bool { return p.probs[i].Line < p.probs[j].Line })
	out := Problems{}
	seen := map[Problem]bool{}
	for _, pr := range p.probs {
		if !seen[pr] {
			seen[pr] = true
			out = append(out, pr)
		}
	}
	return out
}

var yamlLineErr = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// parserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner) errors. yaml.v3 v3.0.1 reports their line counting from 0 (it
// adds 1 only for scanner errors), so Parse adds the 1 itself.
var parserProblems = map[string]bool{
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
}

// parse decodes the YAML and walks the single document it must hold.
func (p *parser) parse(data []byte) *Study {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.addf(1, "study file is empty; write at least name, engine, tiers, placements, baseline, durability, workload, clients and duration")
		} else {
			p.syntax(err, data)
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.addf(extra.Line, "a second YAML document starts here; keep one study per file and remove the --- separator")
	} else if !errors.Is(err, io.EOF) {
		p.syntax(err, data)
	}
	if len(doc.Content) == 0 {
		p.addf(1, "study file is empty; write at least name, engine, tiers, placements, baseline, durability, workload, clients and duration")
		return nil
	}
	if line, cyclic := aliasBomb(&doc); line > 0 {
		if cyclic {
			p.addf(line, "YAML alias names a mapping or list that holds the alias itself, which would repeat forever; alias a value defined outside it")
		} else {
			p.addf(line, "YAML aliases and merge keys (*, <<) expand the study past %d values by this line, an alias repeating values that repeat others; write the repeated parts out, or alias plain values only", maxAliasValues)
		}
		return nil
	}
	root := deref(doc.Content[0])
	if isNull(root) {
		p.addf(root.Line, "study file has no keys; write at least name, engine, tiers, placements, baseline, durability, workload, clients and duration")
		return nil
	}
	return p.study(root)
}

// syntax reports a YAML error at the line yaml.v3 names. yaml.v3 leaves the
// line out for some errors; for those we look for the byte it rejects.
func (p *parser) syntax(err error, data []byte) {
	msg := err.Error()
	line := 0
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if parserProblems[msg] {
			line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
		line = badByteLine(data)
	}
	fix := "check indentation, colons and quoting on this line and the one before"
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		p.addf(line, "study file is not text (it holds a NUL byte or invalid UTF-8); give the path of a YAML study file")
		return
	}
	// yaml.v3 names neither an undefined alias's line nor, for a key
	// longer than it reads (a 5,000-character tier name), the key: it
	// sees a value without its key.
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		p.addf(aliasLine(data, m[1]), "YAML alias *%s names no anchor defined before it; put &%s on the value to repeat, above this line, or fix the name", m[1], m[1])
		return
	}
	if at, n := longKey(data); at > 0 {
		p.addf(at, "a key of %d characters is too long: YAML reads keys of at most %d, and a name in a study is at most %d; use a shorter name (letters, digits, - and _)", n, maxYAMLKey, tier.MaxNameLen)
		return
	}
	switch {
	case line > 0 && strings.Contains(lineText(data, line), "\t"):
		fix = "indent with spaces, not tabs"
	case strings.Contains(msg, "exceeded max depth"):
		fix = "a study nests a few levels deep; remove the brackets or indentation nested past them"
	case strings.Contains(msg, "unexpected end of stream"):
		fix = "a quote or bracket opened earlier in the file is never closed; close it"
	}
	p.addf(line, "YAML syntax error: %s; %s", msg, fix)
}

// unknownAnchor is yaml.v3's error for an alias whose anchor is not
// defined before it.
var unknownAnchor = regexp.MustCompile(`unknown anchor '(.*)' referenced`)

// aliasLine returns the line (from 1) of the first alias *name in data, or
// 1 when it is not found.
func aliasLine(data []byte, name string) int {
	for i, l := range strings.Split(string(data), "\n") {
		for rest := l; ; {
			at := strings.Index(rest, "*"+name)
			if at < 0 {
				break
			}
			rest = rest[at+1+len(name):]
			if rest == "" || strings.ContainsAny(rest[:1], " \t,]}#") {
				return i + 1
			}
		}
	}
	return 1
}

// maxYAMLKey is the longest key yaml.v3 reads (a simple key's limit in
// the YAML spec); a longer one reads as a value missing its key.
const maxYAMLKey = 1024

// longKey returns the line (from 1) of the first key longer than
// maxYAMLKey characters and that key's length, or 0 when there is none.
func longKey(data []byte) (line, chars int) {
	for i, l := range strings.Split(string(data), "\n") {
		l += " "
		for from := 0; ; {
			colon := strings.Index(l[from:], ": ")
			if colon < 0 {
				break
			}
			key := l[from : from+colon]
			from += colon + 2
			// A key begins after a list's dash, a flow mapping's { or ,
			// or the key: before it.
			if at := strings.LastIndexAny(key, "{,[:"); at >= 0 {
				key = key[at+1:]
			}
			key = strings.TrimLeft(strings.TrimSpace(key), "- ")
			if n := utf8.RuneCountInString(key); n > maxYAMLKey {
				return i + 1, n
			}
		}
	}
	return 0, 0
}

// badByteLine returns the line of the first byte YAML forbids (a control
// character or invalid UTF-8), or 1 when there is none.
func badByteLine(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return line
		}
		if r == '\n' {
			line++
		} else if r < 0x20 && r != '\t' && r != '\r' || r == 0x7f {
			return line
		}
		i += size
	}
	return 1
}

// lineText returns line n (from 1) of data.
func lineText(data []byte, n int) string {
	lines := strings.Split(string(data), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}

// topKeys are the keys a study may have, in the order the docs present them.
var topKeys = []string{"name", "engine", "tiers", "placements", "baseline", "durability",
	"workload", "clients", "warmup", "duration", "repeat", "order", "margin", "target_rate", "arrival", "max_ops", "options", "probe", "cache", "crash", "driver", "target", "platform",
	"slo", "need", "search", "size", "host"}

// study checks the top-level mapping. The engine is resolved first because
// placements, durability and options are only meaningful relative to it;
// when it is unknown those checks are skipped rather than flooding the user
// with consequences of one typo.
func (p *parser) study(root *yaml.Node) *Study {
	s := &Study{Repeat: defaultRounds, Arrival: "constant", Options: map[string]string{}, Probe: ProbeCached, Caches: []string{CacheWarm}}
	ents, ok := p.entries(root, "the study", "write the study as key: value lines such as name: my-study")
	if !ok {
		return nil
	}
	p.top = map[string]entry{}
	p.misspelt = map[string]bool{}
	for _, e := range ents {
		if !slices.Contains(topKeys, e.key) {
			p.misspelt[suggest(e.key, topKeys)] = true
			p.unknown(e.k.Line, fmt.Sprintf("unknown key %q", e.key), e.key, topKeys, "known keys", "remove it")
			continue
		}
		p.top[e.key] = e
	}
	p.line = root.Line

	if e, ok := p.need(p.top, "name", p.line, "add name: <a short name for this study>"); ok {
		if v, ok := p.scalar(e, "write name: <a short name for this study>"); ok {
			if strings.TrimSpace(v) == "" {
				p.addf(e.v.Line, "name is empty; write name: <a short name for this study>")
			} else if err := tier.CheckIdentifier("study", v, "wal-placement", "list, show and report name the study by it"); err != nil {
				p.addf(e.v.Line, "%v", err)
			}
			s.Name = v
		}
	}
	p.engine(s)
	p.target(s)
	if _, p.hasTarget = p.top["target"]; p.hasTarget && s.Target == "" {
		// The target's URL is wrong (reported above): the keys a target
		// makes optional are not reported missing as well.
		for _, k := range []string{"tiers", "placements", "baseline", "durability"} {
			p.misspelt[k] = true
		}
	}
	placementsOK := true
	if s.Target != "" {
		// An external server: tierbench places nothing, so tiers and
		// placements are optional labels of where the user keeps things.
		p.tierNames, p.tiersOK = p.targetTiers(s)
		_, placementsOK = p.targetPlacements(s)
		p.targetDurability(s)
	} else {
		p.tierNames, p.tiersOK = p.tiers(s)
		var placements []string
		placements, placementsOK = p.placements(s)
		p.baseline(s, placements, placementsOK)
		p.durability(s)
	}
	p.workload(s)
	p.model(s)
	p.drivers(s)
	p.clients(s)
	if p.spec != nil && p.tiersOK && placementsOK && !p.hasTarget {
		p.tierSizes(s)
	}
	p.timing(s)
	p.repeat(s)
	p.order(s)
	p.margin(s)
	p.rate(s)
	p.maxOps(s)
	p.options(s)
	p.boundAxes(s)
	p.resolveOptions(s)
	if p.tiersOK && placementsOK && !p.hasTarget {
		p.engineFiles(s)
	}
	p.memoryFits(s)
	if e, ok := p.top["options"]; ok && s.Target != "" {
		p.addf(e.k.Line, "with target, tierbench configures nothing on your server; remove options and set them on the server yourself")
	}
	p.choice(p.top, "probe", ProbeModes, &s.Probe)
	p.caches(s)
	p.platform(s)
	p.crashes(s)
	p.layer(s)
	p.capacityStudy(s)
	p.steadyFits(s)
	p.boundMatrix(s)
	return s
}

// engine resolves the engine; p.spec stays nil when it is missing or
// unknown.
func (p *parser) engine(s *Study) {
	known := sortedCopy(p.cat.EngineNames())
	fix := "write engine: <name>, one of: " + joinNames(known)
	e, ok := p.need(p.top, "engine", p.line, "add engine: <name>, one of: "+joinNames(known))
	if !ok {
		return
	}
	name, ok := p.scalar(e, fix)
	if !ok {
		return
	}
	spec, found := p.cat.EngineSpec(name)
	if !found {
		p.unknown(e.v.Line, fmt.Sprintf("unknown engine %q", name), name, known, "known engines", "use a known engine")
		return
	}
	s.Engine = name
	if len(spec.Components) > 0 {
		s.DataComponent = spec.Components[0].Name
	}
	p.spec = &spec
}

// timing checks warmup and duration.
func (p *parser) timing(s *Study) {
	p.warmup(s)
	if e, ok := p.need(p.top, "duration", p.line, "add duration: <Go duration such as 30s>, how long each run measures"); ok {
		if d, ok := p.duration(e); ok {
			switch {
			case d <= 0:
				p.addf(e.v.Line, "duration must be more than 0, got %s; write e.g. duration: 30s", e.v.Value)
			case d > MaxWindow:
				p.addf(e.v.Line, "duration %s is more than %s, the longest a run may measure; write e.g. duration: 30s", e.v.Value, MaxWindow)
			default:
				s.Duration = d
			}
		}
	}
}

// duration parses a Go duration, with a dedicated hint for the common
// mistake of leaving out the unit.
func (p *parser) duration(e entry) (time.Duration, bool) {
	v, ok := p.scalar(e, fmt.Sprintf("write %s: <Go duration such as 30s> or remove it", e.key))
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		if _, nerr := strconv.ParseFloat(v, 64); nerr == nil && v != "0" {
			p.addf(e.v.Line, "%s %q has no unit; write %ss for seconds", e.key, v, v)
		} else {
			p.addf(e.v.Line, "%s %q is not a duration; write a Go duration such as 30s, 500ms or 2m", e.key, v)
		}
		return 0, false
	}
	return d, true
}

// rate checks the open-loop settings; arrival without target_rate is an
// error because it would silently do nothing in closed loop.
// choice reads an optional key whose value is one of a fixed set.
func (p *parser) choice(top map[string]entry, key string, allowed []string, into *string) {
	e, ok := top[key]
	if !ok {
		return
	}
	v, ok := p.scalar(e, fmt.Sprintf("write %s: %s", key, strings.Join(allowed, " | ")))
	if !ok {
		return
	}
	if !slices.Contains(allowed, v) {
		p.unknown(e.v.Line, fmt.Sprintf("unknown %s %q", key, v), v, allowed, "known values", "use one of them")
		return
	}
	*into = v
}

func (p *parser) rate(s *Study) {
	rateEnt, hasRate := p.top["target_rate"]
	if hasRate {
		const fix = "write target_rate: <total ops/s>, or a list of rates (an axis: target_rate: [1000, 2000, 4000]), or remove it for closed loop"
		var vals []string
		if deref(rateEnt.v).Kind == yaml.SequenceNode {
			items, ok := p.list(rateEnt, "target_rate", fix)
			if !ok {
				return
			}
			for _, it := range items {
				v, ok := p.item(it, "target_rate", fix)
				if !ok {
					return
				}
				vals = append(vals, v)
			}
		} else if v, ok := p.scalar(rateEnt, fix); ok {
			vals = []string{v}
		}
		var rates []float64
		for _, v := range vals {
			f, err := strconv.ParseFloat(v, 64)
			switch {
			case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
				p.addf(rateEnt.v.Line, "target_rate %q is not a number; write the total ops/s, e.g. target_rate: 20000", v)
			case f <= 0:
				p.addf(rateEnt.v.Line, "target_rate must be more than 0, got %s; remove it for closed loop or give the total ops/s", v)
			case f > MaxRate:
				p.addf(rateEnt.v.Line, "target_rate %s is more than %g ops/s, more than any engine serves on one host; give the total ops/s, e.g. target_rate: 20000", v, float64(MaxRate))
			case s.Duration > 0 && f*s.Duration.Seconds() < 1:
				p.addf(rateEnt.v.Line, "target_rate %s starts less than one operation in duration %s; give at least %.3g ops/s, or a longer duration", v, s.Duration, 1/s.Duration.Seconds())
			case slices.Contains(rates, f):
				p.addf(rateEnt.v.Line, "target_rate %s is listed twice; remove one", v)
			default:
				rates = append(rates, f)
			}
		}
		if len(rates) > 0 && len(rates) == len(vals) {
			s.TargetRate = rates[0]
			if len(rates) > 1 {
				s.TargetRates = rates
			}
		}
	}
	e, ok := p.top["arrival"]
	if !ok {
		return
	}
	arrivals := driver.ArrivalNames()
	fix := make([]string, len(arrivals))
	for i, a := range arrivals {
		fix[i] = "arrival: " + a
	}
	if v, ok := p.scalar(e, "write "+strings.Join(fix, " or ")); ok {
		if !slices.Contains(arrivals, v) {
			p.unknown(e.v.Line, fmt.Sprintf("unknown arrival %q", v), v, arrivals, "known arrivals", "use one of them")
		} else {
			s.Arrival = v
		}
	}
	if !hasRate {
		p.addf(e.k.Line, "arrival only applies in open loop, with target_rate; add target_rate: <total ops/s> or remove arrival")
	}
}

// maxOps reads max_ops, which ends each run's measured window after that
// many operations (or its duration, whichever comes first): one pass of a
// query set from a cold start. Only tierbench's own closed-loop driver
// counts operations as it issues them.
func (p *parser) maxOps(s *Study) {
	e, ok := p.top["max_ops"]
	if !ok {
		return
	}
	v, ok := p.scalar(e, "write max_ops: <operations per run>, e.g. max_ops: 22 for one pass of the 22 TPC-H queries")
	if !ok {
		return
	}
	norm, ok := p.settingValue("", maxOpsSetting, v, e.v.Line)
	n, _ := strconv.ParseInt(norm, 10, 64)
	switch {
	case !ok:
	case s.TargetRate > 0:
		p.addf(e.k.Line, "max_ops bounds a closed-loop run; remove it or target_rate")
	case !s.onlyBuiltin():
		p.addf(e.k.Line, "max_ops is counted by tierbench's own driver only; remove it or run driver: builtin")
	default:
		s.MaxOps = n
	}
}

// maxOpsSetting is max_ops: operations per run.
var maxOpsSetting = setting.Setting{Name: "max_ops", Kind: setting.Int, Min: "1", Default: "22"}
