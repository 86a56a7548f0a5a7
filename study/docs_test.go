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
