package pebble

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

// docs/adding-an-engine.md walks Pebble as the example engine. These tests
// keep it true: its abilities table against engine/abilities.go, the
// abilities Pebble has against its types, its file table against its
// files, its size against theirs. Adding an ability, an engine file or an
// ability to Pebble without its row fails here.

const guide = "../../docs/adding-an-engine.md"

// abilities maps each optional interface of engine/abilities.go to its
// type. TestGuideAbilities fails when abilities.go declares one this map
// lacks, so the list cannot fall behind.
var abilities = map[string]reflect.Type{
	"Preflighter":         reflect.TypeFor[engine.Preflighter](),
	"OptionsPreflighter":  reflect.TypeFor[engine.OptionsPreflighter](),
	"ServerUser":          reflect.TypeFor[engine.ServerUser](),
	"PIDer":               reflect.TypeFor[engine.PIDer](),
	"ProcessGroup":        reflect.TypeFor[engine.ProcessGroup](),
	"Checker":             reflect.TypeFor[engine.Checker](),
	"Served":              reflect.TypeFor[engine.Served](),
	"BufferCounter":       reflect.TypeFor[engine.BufferCounter](),
	"Caveater":            reflect.TypeFor[engine.Caveater](),
	"Eventer":             reflect.TypeFor[engine.Eventer](),
	"RecordsSetup":        reflect.TypeFor[engine.RecordsSetup](),
	"Explainer":           reflect.TypeFor[engine.Explainer](),
	"Containerizer":       reflect.TypeFor[engine.Containerizer](),
	"ClientContainerizer": reflect.TypeFor[engine.ClientContainerizer](),
	"CacheWorkload":       reflect.TypeFor[engine.CacheWorkload](),
	"Crasher":             reflect.TypeFor[engine.Crasher](),
	"NodeCrasher":         reflect.TypeFor[engine.NodeCrasher](),
	"FieldsReader":        reflect.TypeFor[engine.FieldsReader](),
	"RecoveryReporter":    reflect.TypeFor[engine.RecoveryReporter](),
	"StepKeeper":          reflect.TypeFor[engine.StepKeeper](),
	"CorruptionChecker":   reflect.TypeFor[engine.CorruptionChecker](),
}

func TestGuideAbilities(t *testing.T) {
	declared := interfacesIn(t, "../abilities.go")
	for _, name := range declared {
		if _, ok := abilities[name]; !ok {
			t.Errorf("engine/abilities.go declares %s, which this test's abilities map lacks: add it", name)
		}
	}
	rows := tableRows(t, readGuide(t), "| ability | on | asked by, when |")
	for _, name := range declared {
		if !slices.Contains(rows, name) {
			t.Errorf("docs/adding-an-engine.md's abilities table has no row for %s (engine/abilities.go)", name)
		}
	}
	for _, row := range rows {
		if !slices.Contains(declared, row) && !strings.Contains(row, ".") {
			t.Errorf("docs/adding-an-engine.md's abilities table names %s, which engine/abilities.go does not declare", row)
		}
	}
}

// TestGuidePebblesAbilities: the guide's sentence "Pebble's abilities:"
// names exactly the abilities Pebble's types implement.
func TestGuidePebblesAbilities(t *testing.T) {
	types := []reflect.Type{
		reflect.TypeFor[Engine](), reflect.TypeFor[*DB](), reflect.TypeFor[*Session](),
		reflect.TypeFor[*childDB](), reflect.TypeFor[*childSession](),
	}
	var has []string
	for name, iface := range abilities {
		for _, ty := range types {
			if ty.Implements(iface) {
				has = append(has, name)
				break
			}
		}
	}
	slices.Sort(has)
	line := lineWith(t, readGuide(t), "Pebble's abilities:")
	said := backticked(line)
	slices.Sort(said)
	if !slices.Equal(said, has) {
		t.Errorf("docs/adding-an-engine.md says Pebble's abilities are %v; its types implement %v", said, has)
	}
}

// TestGuidePebblesFiles: the guide's table of Pebble's files lists every
// non-test file of the package, and only those; its "about N lines" is
// within a tenth of their count.
func TestGuidePebblesFiles(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		code = append(code, f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	text := readGuide(t)
	rows := tableRows(t, text, "| file | what |")
	slices.Sort(code)
	slices.Sort(rows)
	if !slices.Equal(rows, code) {
		t.Errorf("docs/adding-an-engine.md's table of Pebble's files lists %v; engine/pebble has %v", rows, code)
	}
	m := regexp.MustCompile(`about ([0-9,]+) lines`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal(`docs/adding-an-engine.md no longer says Pebble is "about N lines"`)
	}
	said, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	if d := float64(said-lines) / float64(lines); d > 0.1 || d < -0.1 {
		t.Errorf("docs/adding-an-engine.md says Pebble is about %d lines; its non-test files have %d", said, lines)
	}
}

func readGuide(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// interfacesIn lists the interface types a Go file declares.
func interfacesIn(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok {
			if _, ok := ts.Type.(*ast.InterfaceType); ok {
				out = append(out, ts.Name.Name)
			}
		}
		return true
	})
	return out
}

// tableRows is the first backticked word of each row of the Markdown
// table whose header line is header.
func tableRows(t *testing.T, text, header string) []string {
	t.Helper()
	_, after, ok := strings.Cut(text, header+"\n")
	if !ok {
		t.Fatalf("docs/adding-an-engine.md has no table headed %q", header)
	}
	var out []string
	for _, l := range strings.Split(after, "\n")[1:] { // past the | --- | line
		if !strings.HasPrefix(l, "|") {
			break
		}
		if w := backticked(l); len(w) > 0 {
			out = append(out, w[0])
		}
	}
	return out
}

func lineWith(t *testing.T, text, marker string) string {
	t.Helper()
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatalf("docs/adding-an-engine.md has no %q", marker)
	}
	end := strings.Index(text[i:], ".\n")
	if end < 0 {
		end = len(text) - i
	}
	return text[i : i+end]
}

func backticked(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
