package main

// This file reads Markdown pages for docs_test.go: their fenced blocks,
// and the tierbench command lines in shell blocks and in code spans.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// docPage is what the tests read of one Markdown page.
type docPage struct {
	name     string // README.md or docs/NAME.md
	blocks   []fencedBlock
	commands []commandLine
}

// fencedBlock is a fenced code block: its language, the line of its
// opening fence (from 1), its lines, and whether it is marked invalid.
type fencedBlock struct {
	lang    string
	line    int
	body    []string
	invalid bool
}

// commandLine is a tierbench command line found in a page: strict for a
// block's line, which must be whole.
type commandLine struct {
	line    int
	text    string
	strict  bool
	invalid bool
}

// docPages reads README.md and every docs/*.md.
func docPages(t *testing.T) []docPage {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md found: %v", err)
	}
	var pages []docPage
	for _, f := range append([]string{"../../README.md"}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, scanPage(strings.TrimPrefix(filepath.ToSlash(f), "../../"), string(data)))
	}
	return pages
}

// shellLangs are the fenced blocks whose lines may be command lines.
var shellLangs = []string{"sh", "bash", "shell", "console", ""}

// scanPage finds a page's fenced blocks and its command lines: in shell
// blocks, and in the code spans of the text outside blocks.
func scanPage(name, text string) docPage {
	page := docPage{name: name}
	lines := strings.Split(text, "\n")
	var para []int // the lines of the text block being read
	endPara := func() {
		page.commands = append(page.commands, spanCommands(lines, para)...)
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		fence := fenceOpening(trimmed)
		if fence == "" {
			if trimmed == "" || isBlockStart(trimmed) {
				endPara()
			}
			if trimmed != "" {
				para = append(para, i)
			}
			continue
		}
		endPara()
		indent := len(lines[i]) - len(trimmed)
		info := strings.Fields(strings.TrimPrefix(trimmed, fence))
		b := fencedBlock{line: i + 1, invalid: markedBefore(lines, i)}
		if len(info) > 0 {
			b.lang = strings.ToLower(info[0])
		}
		for i++; i < len(lines); i++ {
			t := strings.TrimLeft(lines[i], " ")
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				break
			}
			l := lines[i]
			l = l[min(indent, len(l)-len(strings.TrimLeft(l, " "))):]
			b.body = append(b.body, l)
		}
		page.blocks = append(page.blocks, b)
		if slices.Contains(shellLangs, b.lang) {
			page.commands = append(page.commands, blockCommands(b)...)
		}
		if steps, ok := workflowCommands(b); ok {
			page.commands = append(page.commands, steps...)
		}
	}
	endPara()
	return page
}

// markedBefore reports whether the last line with text before line i is
// the invalid mark.
func markedBefore(lines []string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if t := strings.TrimSpace(lines[j]); t != "" {
			return t == invalidMark
		}
	}
	return false
}

// blockCommands returns a shell block's tierbench command lines, a line
// ending in \ joined with the next.
func blockCommands(b fencedBlock) []commandLine {
	var out []commandLine
	for i := 0; i < len(b.body); i++ {
		start, text := i, b.body[i]
		for strings.HasSuffix(text, `\`) && i+1 < len(b.body) {
			i++
			text = strings.TrimSuffix(text, `\`) + " " + strings.TrimSpace(b.body[i])
		}
		if _, ok := commandWords(text); ok {
			out = append(out, commandLine{line: b.line + 1 + start, text: strings.TrimSpace(text), strict: true, invalid: b.invalid})
		}
	}
	return out
}

// isWorkflow reports whether a block is a CI workflow (GitHub Actions'
// form: YAML with a top-level jobs: key) rather than a study, and returns
// its document.
func isWorkflow(b fencedBlock) (*yaml.Node, bool) {
	if b.lang != "yaml" && b.lang != "yml" {
		return nil, false
	}
	var root yaml.Node
	if yaml.Unmarshal([]byte(strings.Join(b.body, "\n")), &root) != nil || len(root.Content) != 1 {
		return nil, false
	}
	return root.Content[0], slices.Contains(mappingKeys(root.Content[0]), "jobs")
}

// workflowCommands returns the tierbench command lines of a CI workflow's
// steps: the lines of each run: script, read as a shell block's, at their
// lines in the page. ok is false for a block that is not a workflow.
func workflowCommands(b fencedBlock) (out []commandLine, ok bool) {
	doc, ok := isWorkflow(b)
	if !ok {
		return nil, false
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 1 && n.Content[i-1].Value == "run" && c.Kind == yaml.ScalarNode {
				first := c.Line // a plain or quoted script starts on its key's line
				if c.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
					first++ // a block script, on the lines after run: |
				}
				script := fencedBlock{line: b.line + first - 1, body: strings.Split(strings.TrimRight(c.Value, "\n"), "\n"), invalid: b.invalid}
				out = append(out, blockCommands(script)...)
				continue
			}
			walk(c)
		}
	}
	walk(doc)
	return out, true
}

// spanCommands returns the tierbench command lines in the code spans of
// a text block (lines para of lines): a span may run over lines.
func spanCommands(lines []string, para []int) []commandLine {
	if len(para) == 0 {
		return nil
	}
	var text strings.Builder
	var lineAt []int // the page line of each byte of text
	for _, i := range para {
		l := lines[i] + "\n"
		text.WriteString(l)
		lineAt = append(lineAt, slices.Repeat([]int{i + 1}, len(l))...)
	}
	s := text.String()
	var out []commandLine
	for _, r := range codeSpanRanges(s) {
		span := strings.ReplaceAll(s[r[0]:r[1]], "\n", " ")
		if strings.HasPrefix(strings.TrimSpace(lines[lineAt[r[0]]-1]), "|") {
			span = strings.ReplaceAll(span, `\|`, "|") // a table cell's escaped pipe
		}
		span = strings.TrimSpace(span)
		if words, ok := commandWords(span); !ok || len(words) == 0 {
			if !shortCommand(span) {
				continue // not a command, or tierbench named alone
			}
			span = "tierbench " + span
		}
		after := strings.TrimLeft(s[r[1]:], "`")
		out = append(out, commandLine{
			line:    lineAt[r[0]],
			text:    span,
			invalid: strings.HasPrefix(strings.TrimLeft(after, " "), invalidMark),
		})
	}
	return out
}

// shortCommand reports whether a span is a tierbench command written
// without the program, as the docs refer to one beside its flags (`show
// --format json`): it starts with one of tierbench's commands and has a
// --flag, which go-ycsb's `run basic` has not.
func shortCommand(span string) bool {
	words := shellWords(span)
	if len(words) < 2 || words[0].quoted {
		return false
	}
	known := false
	for _, c := range newRoot().Commands() {
		known = known || c.Name() == words[0].text
	}
	return known && slices.ContainsFunc(words[1:], func(w word) bool { return !w.quoted && strings.HasPrefix(w.text, "--") })
}

// isBlockStart reports whether a line starts a text block of its own: a
// heading, a table row or a list item.
func isBlockStart(trimmed string) bool {
	return strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "|") || listItemRE.MatchString(trimmed)
}

var listItemRE = regexp.MustCompile(`^([-*+]|\d+[.)])\s`)

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

// codeSpanRanges returns where the code spans of s are, backticks
// excluded: a run of backticks up to the next run of as many.
func codeSpanRanges(s string) [][2]int {
	var out [][2]int
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '`')
		if i < 0 {
			return out
		}
		i += off
		n := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
		j := closingTicks(s[i+n:], n)
		if j < 0 {
			off = i + n // no closing run: the backticks are text
			continue
		}
		out = append(out, [2]int{i + n, i + n + j})
		off = i + n + j + n
	}
}

// closingTicks finds, in s, a run of exactly n backticks.
func closingTicks(s string, n int) int {
	for off := 0; off < len(s); {
		j := strings.IndexByte(s[off:], '`')
		if j < 0 {
			return -1
		}
		j += off
		run := len(s[j:]) - len(strings.TrimLeft(s[j:], "`"))
		if run == n {
			return j
		}
		off = j + run
	}
	return -1
}
