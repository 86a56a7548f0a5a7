package study

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file holds the yaml.Node walking helpers Parse is built from. Each
// helper reports what it finds wrong and returns ok=false, so callers just
// skip what they cannot use and go on collecting problems.

// entry is one key: value pair of a mapping, with both nodes for their lines.
type entry struct {
	key  string
	k, v *yaml.Node
}

// maxMergeDepth bounds YAML merge keys (<<) so an anchor that merges itself
// cannot recurse forever.
const maxMergeDepth = 8

// maxAliasValues bounds the values a study file's aliases bring in (an
// alias counts every value of what it names, its own aliases expanded):
// a study's anchors bring in tens, while 1.4 KB of merges nested eight
// deep would bring in 30^8, which walking the mappings would never finish.
const maxAliasValues = 10000

// aliasBomb returns the line of the alias by which the values aliases
// bring in pass maxAliasValues (cyclic: an alias inside what it names,
// which never ends), or 0 when they stay within it. It counts with one
// walk over the nodes as parsed, each anchor's expansion counted once.
func aliasBomb(doc *yaml.Node) (line int, cyclic bool) {
	const most = maxAliasValues + 1 // counts saturate here
	add := func(a, b int) int { return min(a+b, most) }
	size := map[*yaml.Node]int{} // values with aliases expanded; -1 while counting
	var expanded func(n *yaml.Node) int
	expanded = func(n *yaml.Node) int {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch v, seen := size[n]; {
		case seen && v < 0:
			return most // a cycle
		case seen:
			return v
		}
		size[n] = -1
		total := 1
		for _, c := range n.Content {
			total = add(total, expanded(c))
		}
		size[n] = total
		return total
	}
	// Walk the nodes as written: each alias brings in what it names.
	brought := 0
	var walk func(n *yaml.Node, open map[*yaml.Node]bool) int
	walk = func(n *yaml.Node, open map[*yaml.Node]bool) int {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if open[n.Alias] {
				cyclic = true
				return n.Line
			}
			if brought = add(brought, expanded(n.Alias)); brought >= most {
				return n.Line
			}
			return 0
		}
		open[n] = true
		defer delete(open, n)
		for _, c := range n.Content {
			if l := walk(c, open); l > 0 {
				return l
			}
		}
		return 0
	}
	return walk(doc, map[*yaml.Node]bool{}), cyclic
}

// entries returns the pairs of mapping n in declaration order. It reports
// duplicate keys (yaml.v3 does not when decoding into a Node) and applies
// merge keys, so `<<: *anchor` works as it does elsewhere in YAML. what names
// the mapping in messages; fix says how to write it correctly.
func (p *parser) entries(n *yaml.Node, what, fix string) ([]entry, bool) {
	n = deref(n)
	if isNull(n) {
		p.addf(n.Line, "%s has no value; %s", what, fix)
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		p.addf(n.Line, "%s must be a mapping of key: value pairs, not %s; %s", what, describe(n), fix)
		return nil, false
	}
	return p.mapping(n, what, 0), true
}

func (p *parser) mapping(n *yaml.Node, what string, depth int) []entry {
	// Pass 1: explicit keys, which win over merged ones wherever they appear.
	type item struct {
		e     entry
		merge *yaml.Node
	}
	var items []item
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.addf(k.Line, "keys in %s must be plain names, not %s; write name: value", what, describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			items = append(items, item{merge: v})
			continue
		}
		if line, dup := first[k.Value]; dup {
			p.addf(k.Line, "duplicate key %q in %s (first at line %d); remove or rename one", k.Value, what, line)
			continue
		}
		first[k.Value] = k.Line
		items = append(items, item{e: entry{key: k.Value, k: k, v: v}})
	}
	// Pass 2: expand merges in place, skipping keys given explicitly or by
	// an earlier merge.
	var out []entry
	added := map[string]bool{}
	for _, it := range items {
		if it.merge == nil {
			out = append(out, it.e)
			added[it.e.key] = true
			continue
		}
		for _, m := range p.merged(it.merge, what, depth) {
			if _, explicit := first[m.key]; !explicit && !added[m.key] {
				out = append(out, m)
				added[m.key] = true
			}
		}
	}
	return out
}

// merged returns the entries a merge key's value brings in: a mapping or a
// list of mappings.
func (p *parser) merged(v *yaml.Node, what string, depth int) []entry {
	if depth >= maxMergeDepth {
		p.addf(v.Line, "merge (<<) in %s nests too deeply or merges itself; merge a plain mapping instead", what)
		return nil
	}
	switch v.Kind {
	case yaml.MappingNode:
		return p.mapping(v, what, depth+1)
	case yaml.SequenceNode:
		var out []entry
		added := map[string]bool{}
		for _, m := range v.Content {
			m = deref(m)
			if m.Kind != yaml.MappingNode {
				p.addf(m.Line, "merge (<<) in %s must name mappings, not %s; use <<: *anchor of a mapping", what, describe(m))
				continue
			}
			for _, e := range p.mapping(m, what, depth+1) {
				if !added[e.key] {
					out = append(out, e)
					added[e.key] = true
				}
			}
		}
		return out
	default:
		p.addf(v.Line, "merge (<<) in %s must name a mapping, not %s; use <<: *anchor of a mapping", what, describe(v))
		return nil
	}
}

// need returns the entry for a required key. A missing key has no line of
// its own, so it is reported at the parent mapping's line.
func (p *parser) need(m map[string]entry, key string, line int, fix string) (entry, bool) {
	e, ok := m[key]
	if !ok {
		if !p.misspelt[key] {
			p.addf(line, "missing required key %q; %s", key, fix)
		}
		return entry{}, false
	}
	if isNull(e.v) {
		p.addf(e.k.Line, "%s has no value; %s", key, fix)
		return entry{}, false
	}
	return e, true
}

// scalar returns the value of a key that must hold a single value.
func (p *parser) scalar(e entry, fix string) (string, bool) {
	v := deref(e.v)
	if isNull(v) {
		p.addf(e.k.Line, "%s has no value; %s", e.key, fix)
		return "", false
	}
	if v.Kind != yaml.ScalarNode {
		p.addf(v.Line, "%s must be a single value, not %s; %s", e.key, describe(v), fix)
		return "", false
	}
	return v.Value, true
}

// list returns the items of a key that takes a list; a single value is
// accepted as a list of one, since `clients: 8` is clearly meant that way.
func (p *parser) list(e entry, what, fix string) ([]*yaml.Node, bool) {
	v := deref(e.v)
	switch v.Kind {
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			p.addf(v.Line, "%s is empty; %s", what, fix)
			return nil, false
		}
		items := make([]*yaml.Node, len(v.Content))
		for i, n := range v.Content {
			items[i] = deref(n)
		}
		return items, true
	case yaml.ScalarNode:
		return []*yaml.Node{v}, true
	default:
		p.addf(v.Line, "%s must be a single value or a list, not %s; %s", what, describe(v), fix)
		return nil, false
	}
}

// item returns one list item, which must be a single value.
func (p *parser) item(n *yaml.Node, what, fix string) (string, bool) {
	if isNull(n) {
		p.addf(n.Line, "%s has an empty entry; %s", what, fix)
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		p.addf(n.Line, "each %s entry must be a single value, not %s; %s", what, describe(n), fix)
		return "", false
	}
	return n.Value, true
}

// unknown reports a name that is not among known. Most such mistakes are
// typos, so the closest known name is offered as the fix; otherwise is the
// fix when nothing is close. The known names are always listed.
func (p *parser) unknown(line int, subject, name string, known []string, label, otherwise string) {
	names := "none"
	if len(known) > 0 {
		names = joinNames(known)
	}
	if s := suggest(name, known); s != "" {
		p.addf(line, "%s; did you mean %q? (%s: %s)", subject, s, label, names)
		return
	}
	p.addf(line, "%s; %s (%s: %s)", subject, otherwise, label, names)
}

// suggest returns the known name closest to name within edit distance 2, or
// "" when none is. Case is ignored, and the distance must be smaller than
// name itself so that very short names do not match unrelated words.
func suggest(name string, known []string) string {
	best, bestD := "", 3
	lname := strings.ToLower(name)
	for _, k := range known {
		d := editDistance(lname, strings.ToLower(k))
		if d < bestD && d < len([]rune(name)) {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours each cost 1, so the
// common "recrods" typo is one edit from "records".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// deref follows aliases (*anchor) to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < maxMergeDepth; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports an absent value: `key:` with nothing after it, ~ or null.
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names a node's kind for messages about the wrong kind of value.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	default:
		return "a document"
	}
}

// hasKey reports whether entries include key.
func hasKey(ents []entry, key string) bool {
	return slices.ContainsFunc(ents, func(e entry) bool { return e.key == key })
}

// joinNames joins names for messages.
func joinNames(names []string) string {
	return strings.Join(names, ", ")
}

// sortedCopy sorts names without touching the catalog's slice.
func sortedCopy(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}
