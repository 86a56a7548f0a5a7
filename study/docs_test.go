package study

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameEveryStudyKey checks that docs/study-file.md documents every
// top-level key the parser knows (topKeys): each appears in a heading or
// in a code span of the page, outside fenced code blocks. The page is
// written by hand; this only checks it.
func TestDocsNameEveryStudyKey(t *testing.T) {
	const doc = "docs/study-file.md"
	data, err := os.ReadFile("../" + doc)
	if err != nil {
		t.Fatalf("read %s: %v", doc, err)
	}
	headings, spans := map[string]bool{}, map[string]bool{}
	fence := ""
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if m := fenceRE.FindString(trimmed); m != "" {
			fence = m
			continue
		}
		for _, m := range spanRE.FindAllStringSubmatch(line, -1) {
			spans[strings.TrimSpace(m[1])] = true
		}
		if strings.HasPrefix(line, "#") {
			for _, w := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" #`:,", r) }) {
				headings[w] = true
			}
		}
	}
	for _, key := range topKeys {
		if !headings[key] && !spans[key] {
			t.Errorf("study key %s (topKeys in study/parse.go) is not in %s: add a heading ### `%s` saying what it takes, its default and what it does", key, doc, key)
		}
	}
}

var (
	fenceRE = regexp.MustCompile("^(```+|~~~+)")
	spanRE  = regexp.MustCompile("`([^`]+)`")
)

// TestDocsListEveryTierKind keeps docs/tiers.md's table of kinds the
// parser's (tierKinds), row for row and in its order, and
// docs/adding-a-tier.md's walk naming the table it adds a row to: a kind
// added without its row, or a row left for a kind removed, fails here.
func TestDocsListEveryTierKind(t *testing.T) {
	data, err := os.ReadFile("../docs/tiers.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "| key | what |\n| --- | --- |\n")
	if !ok {
		t.Fatal("docs/tiers.md has no table of kinds headed | key | what |")
	}
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		rows = append(rows, spanRE.FindStringSubmatch(line)[1])
	}
	if got, want := strings.Join(rows, " "), strings.Join(tierKindKeys(), " "); got != want {
		t.Errorf("docs/tiers.md's kinds of tier are %q; study/parse_tiers.go's tierKinds are %q", got, want)
	}
	guide, err := os.ReadFile("../docs/adding-a-tier.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"tierKinds", "study/parse_tiers.go", "docs/tiers.md"} {
		if !strings.Contains(string(guide), must) {
			t.Errorf("docs/adding-a-tier.md no longer names %s, where a new kind's row goes", must)
		}
	}
}
