package logtail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := Lines([]byte(c.in), c.n); got != c.want {
			t.Errorf("Lines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	// More than maxBytes: only the end is read.
	body := strings.Repeat("x\n", maxBytes) + "last one\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := File(path, 2); got != "x\nlast one" {
		t.Errorf("File = %q", got)
	}
	if got := File(filepath.Join(t.TempDir(), "none"), 2); !strings.HasPrefix(got, "(no log: ") {
		t.Errorf("a missing log: %q", got)
	}
}

func TestWriter(t *testing.T) {
	for _, c := range []struct {
		name   string
		max    int
		writes []string
		all    string
		last2  string
	}{
		{"fits", 64, []string{"a\n", "b\nc\n"}, "a\nb\nc\n", "b\nc"},
		{"keeps the end", 5, []string{"one\n", "two\n"}, "\ntwo\n", "\ntwo"},
		{"empty", 8, nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &Writer{Max: c.max}
			for _, s := range c.writes {
				w.Write([]byte(s))
			}
			if w.String() != c.all || w.Last(2) != c.last2 {
				t.Errorf("String %q Last(2) %q; want %q, %q", w.String(), w.Last(2), c.all, c.last2)
			}
		})
	}
}
