package study

import (
	"regexp"
	"strings"
	"testing"
)

// TestKeyDocsCoverEveryKey keeps `tierbench init`'s comments complete: a
// key the parser knows without a word in keyDocs would reach a starter
// study unexplained.
func TestKeyDocsCoverEveryKey(t *testing.T) {
	for _, k := range topKeys {
		if d, ok := keyDocs[k]; !ok || d.Doc == "" {
			t.Errorf("study key %s has no entry in keyDocs (study/starter.go): add what it does in a sentence", k)
		}
	}
	for k := range keyDocs {
		if !strings.Contains(" "+strings.Join(topKeys, " ")+" ", " "+k+" ") {
			t.Errorf("keyDocs has %s, which is not a study key", k)
		}
	}
}

// TestCommented checks that every top-level key of a study gets its
// comment, the engine's components and modes are named, the optional keys
// left out are listed commented out, and the study still parses to the
// same thing.
func TestCommented(t *testing.T) {
	fill, _ := fixtureNames(t)
	src := fill(example)
	out := Commented(src, pebbleSpec)
	cases := []struct{ name, want string }{
		{"comment above name", "A short name for the study, shown by"},
		{"components named", "Components of pebble: data, wal."},
		{"modes named", "Modes of pebble: sync, nosync, nowal"},
		{"optional key left out", "crash: [none, process]\n#     Crash each run's engine"},
		{"key kept", "one).\nbaseline: all-disk\n"},
	}
	unwrapped := regexp.MustCompile(`\n# (\S)`).ReplaceAllString(out, " $1") // comments unwrapped
	for _, c := range cases {
		if !strings.Contains(unwrapped, c.want) {
			t.Errorf("%s: %q not in\n%s", c.name, c.want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "#") && len(line) > commentWidth+20 {
			t.Errorf("comment line of %d characters not wrapped: %s", len(line), line)
		}
	}
	a, err := Parse("study.yaml", []byte(src), testCatalog{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("study.yaml", []byte(out), testCatalog{})
	if err != nil {
		t.Fatalf("the commented study does not parse: %v\n%s", err, out)
	}
	if a.RoundSize() != b.RoundSize() || a.Baseline != b.Baseline || len(a.Placements) != len(b.Placements) {
		t.Errorf("comments changed the study: %d/%s/%d cells, want %d/%s/%d", b.RoundSize(), b.Baseline, len(b.Placements), a.RoundSize(), a.Baseline, len(a.Placements))
	}
}
