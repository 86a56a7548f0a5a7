package study

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/profile"
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

// TestDocsTableOfAbilities keeps docs/adding-a-tier.md's table of
// abilities the code's: a row for every field of tier.Abilities, a
// column for every kind in tierKinds, each cell the kind's own value
// (abilitiesTable). An ability or a kind added without its row or
// column fails here; the failure prints the table to paste.
func TestDocsTableOfAbilities(t *testing.T) {
	data, err := os.ReadFile("../docs/adding-a-tier.md")
	if err != nil {
		t.Fatal(err)
	}
	want := abilitiesTable()
	head := strings.SplitN(want, "\n", 2)[0]
	_, rest, ok := strings.Cut(string(data), head+"\n")
	if !ok {
		t.Fatalf("docs/adding-a-tier.md has no table of abilities with this heading (a kind's column is missing); replace its table by this one:\n%s", want)
	}
	var got []string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		got = append(got, line)
	}
	if g := head + "\n" + strings.Join(got, "\n") + "\n"; g != want {
		t.Errorf("docs/adding-a-tier.md's table of abilities is not the code's; write this one:\n%s", want)
	}
}

// abilitiesTable is the table of abilities as docs/adding-a-tier.md
// shows it: a row per field of tier.Abilities, a column per kind (its
// zero value: a loop image on disk, a pmem_emulated folder).
func abilitiesTable() string {
	var b strings.Builder
	b.WriteString("| ability |")
	for _, k := range tierKinds {
		b.WriteString(" `" + k.kind.Key() + "` |")
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --- |", len(tierKinds)) + "\n")
	typ := reflect.TypeOf(tier.Abilities{})
	for i := 0; i < typ.NumField(); i++ {
		b.WriteString("| `" + typ.Field(i).Name + "` |")
		for _, k := range tierKinds {
			b.WriteString(" " + abilityCell(reflect.ValueOf(k.kind.Abilities()).Field(i)) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// abilityCell shows one ability's value: yes or no, a layer's name, a
// unit of bytes, or whether a text is set.
func abilityCell(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case bool:
		return map[bool]string{true: "yes", false: "no"}[x]
	case tier.Layer:
		return map[tier.Layer]string{tier.LayerNever: "never", tier.LayerOnPowerCut: "on a power cut",
			tier.LayerAlways: "always", tier.LayerUnmodelled: "unmodelled"}[x]
	case int64:
		return profile.AtomicWriteText(x)
	case string:
		if x == "" {
			return "-"
		}
		return "set"
	}
	return fmt.Sprint(v.Interface())
}
