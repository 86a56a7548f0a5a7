package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// These tests keep the docs true against the code: every engine, workload,
// option and parameter the catalog has is in its doc page, and every
// relative link in README.md and docs/ leads somewhere. The docs are
// written by hand; the tests only check them.

// docsDir is docs/ from this package's folder, where go test runs.
const docsDir = "../docs"

// TestDocsNameEveryEngineOption checks that docs/engines.md has a section
// for every engine (a heading naming it in a code span, such as
// "## `pebble`") and that the section names each of its components,
// durability modes and options in code spans.
func TestDocsNameEveryEngineOption(t *testing.T) {
	const doc = "docs/engines.md"
	md := readMarkdown(t, filepath.Join(docsDir, "engines.md"))
	c := Default()
	for _, name := range c.EngineNames() {
		spec, _ := c.EngineSpec(name)
		sec, ok := md.section(name)
		if !ok {
			t.Errorf("engine %s has no section in %s: add a heading naming it, such as ## `%s`, with its components, durability modes and options", name, doc, name)
			continue
		}
		var missing []string
		for _, comp := range spec.Components {
			if !sec.spans[comp.Name] {
				missing = append(missing, "component "+comp.Name)
			}
		}
		for _, m := range spec.Modes {
			if !sec.spans[string(m.Durability)] {
				missing = append(missing, "durability mode "+string(m.Durability))
			}
		}
		for _, o := range spec.Options {
			if !sec.spans[o.Name] {
				missing = append(missing, "option "+o.Name)
			}
		}
		for _, m := range missing {
			t.Errorf("engine %s: %s is not in its section of %s (under %q): add it there, written `%s`", name, m, doc, sec.heading, lastWord(m))
		}
	}
}

// TestDocsNameEveryWorkloadParam checks that docs/workloads.md has a
// section for every workload (a heading naming it in a code span; one
// heading may name several that share their parameters) and that the
// section names each of its parameters in a code span.
func TestDocsNameEveryWorkloadParam(t *testing.T) {
	const doc = "docs/workloads.md"
	md := readMarkdown(t, filepath.Join(docsDir, "workloads.md"))
	c := Default()
	for _, name := range c.WorkloadNames() {
		w, _ := c.Workload(name)
		sec, ok := md.section(name)
		if !ok {
			t.Errorf("workload %s has no section in %s: add a heading naming it, such as ## `%s`, with its parameters", name, doc, name)
			continue
		}
		for _, p := range w.Params {
			if !sec.spans[p.Name] {
				t.Errorf("workload %s: parameter %s is not in its section of %s (under %q): add it to the parameters there, written `%s`", name, p.Name, doc, sec.heading, p.Name)
			}
		}
	}
}

// TestDocsLinksResolve checks every relative link in README.md and
// docs/*.md: the file it names exists, and an anchor (#...) into a
// Markdown file is one of that file's headings as GitHub names them.
func TestDocsLinksResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../README.md"}, files...)
	if len(files) < 2 {
		t.Fatalf("no docs/*.md found from %s", docsDir)
	}
	anchors := map[string]map[string]bool{} // by cleaned path
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := readMarkdown(t, path).anchors
		anchors[path] = a
		return a
	}
	for _, f := range files {
		md := readMarkdown(t, f)
		rel := strings.TrimPrefix(filepath.ToSlash(f), "../")
		for _, l := range md.links {
			target, frag, _ := strings.Cut(l.target, "#")
			path := filepath.Clean(f) // a bare #anchor is into the file itself
			if target != "" {
				path = filepath.Join(filepath.Dir(f), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q leads to no file (%s); fix the path or add the file", rel, l.line, l.target, strings.TrimPrefix(filepath.ToSlash(path), "../"))
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if !anchorsOf(filepath.Clean(path))[frag] {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s; fix the anchor or the heading", rel, l.line, l.target, strings.TrimPrefix(filepath.ToSlash(path), "../"), frag)
			}
		}
	}
}

// lastWord returns the last word of s: the name in "option cache".
func lastWord(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] }

// markdown is what the tests read of a Markdown file: its headings with
// the code spans of each one's section, the anchors GitHub gives the
// headings, and the links, all outside fenced code blocks.
type markdown struct {
	sections []mdSection
	anchors  map[string]bool
	links    []mdLink
}

// mdSection is a heading and everything under it up to the next heading
// of the same or a higher level (its subsections included).
type mdSection struct {
	level   int
	heading string
	// names are the code spans in the heading.
	names []string
	// spans are the code spans in the heading and the section's text.
	spans map[string]bool
}

type mdLink struct {
	line   int
	target string
}

var (
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	linkRE    = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	schemeRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// section returns the first section whose heading names name in a code span.
func (md markdown) section(name string) (mdSection, bool) {
	for _, s := range md.sections {
		if slices.Contains(s.names, name) {
			return s, true
		}
	}
	return mdSection{}, false
}

func readMarkdown(t *testing.T, path string) markdown {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return parseMarkdown(string(data))
}

func parseMarkdown(text string) markdown {
	md := markdown{anchors: map[string]bool{}}
	type heading struct {
		line, level int
		text        string
	}
	var (
		heads []heading
		lines = strings.Split(text, "\n")
		prose = make([]string, len(lines)) // lines outside fences, "" inside
		fence string
	)
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			fence = f
			continue
		}
		prose[i] = line
		if m := headingRE.FindStringSubmatch(line); m != nil {
			heads = append(heads, heading{i, len(m[1]), m[2]})
		}
		for _, m := range linkRE.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			if !schemeRE.MatchString(m[1]) {
				md.links = append(md.links, mdLink{i + 1, m[1]})
			}
		}
	}
	seen := map[string]int{}
	for i, h := range heads {
		end := len(lines)
		for _, next := range heads[i+1:] {
			if next.level <= h.level {
				end = next.line
				break
			}
		}
		sec := mdSection{level: h.level, heading: h.text, names: codeSpans(h.text), spans: map[string]bool{}}
		for _, line := range prose[h.line:end] {
			for _, s := range codeSpans(line) {
				sec.spans[s] = true
			}
		}
		md.sections = append(md.sections, sec)
		slug := githubSlug(h.text)
		if n := seen[slug]; n > 0 {
			md.anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			md.anchors[slug] = true
		}
		seen[slug]++
	}
	return md
}

// fenceOpening returns the fence a line opens (``` or ~~~, or longer), or "".
func fenceOpening(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// codeSpans returns the contents of a line's code spans.
func codeSpans(line string) []string {
	var out []string
	for _, r := range codeSpanRanges(line) {
		s := line[r[0]:r[1]]
		if len(s) > 2 && s[0] == ' ' && s[len(s)-1] == ' ' {
			s = s[1 : len(s)-1]
		}
		out = append(out, s)
	}
	return out
}

// codeSpanRanges returns where a line's code spans are, backticks
// included: a run of backticks up to the next run of as many.
func codeSpanRanges(line string) [][2]int {
	var out [][2]int
	for off := 0; ; {
		i := strings.IndexByte(line[off:], '`')
		if i < 0 {
			return out
		}
		i += off
		n := len(line[i:]) - len(strings.TrimLeft(line[i:], "`"))
		j := closingTicks(line[i+n:], line[i:i+n])
		if j < 0 {
			return out
		}
		out = append(out, [2]int{i + n, i + n + j})
		off = i + n + j + n
	}
}

// closingTicks finds ticks in s as a run of exactly that many backticks.
func closingTicks(s, ticks string) int {
	for off := 0; ; {
		j := strings.Index(s[off:], ticks)
		if j < 0 {
			return -1
		}
		j += off
		after := j + len(ticks)
		if (j == 0 || s[j-1] != '`') && (after == len(s) || s[after] != '`') {
			return j
		}
		off = after
		for off < len(s) && s[off] == '`' {
			off++
		}
	}
}

// stripCodeSpans blanks a line's code spans, whose text is not a link.
func stripCodeSpans(line string) string {
	b := []byte(line)
	for _, r := range codeSpanRanges(line) {
		for k := r[0]; k < r[1]; k++ {
			b[k] = ' '
		}
	}
	return string(b)
}

// githubSlug is the anchor GitHub gives a heading: lower case, letters,
// digits, spaces, hyphens and underscores kept, spaces made hyphens.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
