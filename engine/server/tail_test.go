package server

import "testing"

func TestTailWriter(t *testing.T) {
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
			w := &TailWriter{Max: c.max}
			for _, s := range c.writes {
				w.Write([]byte(s))
			}
			if w.String() != c.all || w.Last(2) != c.last2 {
				t.Errorf("String %q Last(2) %q; want %q, %q", w.String(), w.Last(2), c.all, c.last2)
			}
		})
	}
}
