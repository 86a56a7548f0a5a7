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
