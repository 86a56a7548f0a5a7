package setting

import (
	"errors"
	"testing"
	"time"
)

var decls = []Setting{
	{Name: "cache", Kind: Size, Default: "64MiB"},
	{Name: "limit", Kind: Size, Default: "0", Min: "0"},
	{Name: "heap", Kind: Size, Default: "1GiB", Min: "256MiB"},
	{Name: "threshold", Kind: Int, Default: "4"},
	{Name: "timeout", Kind: Int, Default: "300", Min: "30", Max: "86400", Unit: "seconds"},
	{Name: "binlog", Kind: Bool, Default: "false"},
	{Name: "mode", Kind: Enum, Default: "atomic", Values: []string{"atomic", "transactional"}},
	{Name: "label", Kind: String},
	{Name: "refresh", Kind: Duration, Default: "1s", Min: "1ms", Values: []string{"-1"}},
	{Name: "read", Kind: Percent, Default: "50"},
	{Name: "proportion", Kind: Ratio, Default: "0.95"},
	{Name: "theta", Kind: Float, Default: "0.99", Min: "0.01", Max: "0.999"},
	{Name: "seed", Kind: Int},
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, text, want, err string
	}{
		{"cache", "64MiB", "67108864", ""},
		{"cache", " 1GB ", "1000000000", ""},
		{"cache", "lots", "", `cache "lots" is not a size; write e.g. cache: 64MiB`},
		{"cache", "0MiB", "", `cache 0MiB is out of range: it must be at least 1B; write e.g. cache: 64MiB`},
		{"cache", "8EiB", "", `cache "8EiB" is too large; write less than 8EiB`},
		{"limit", "0", "0", ""},
		{"heap", "1MiB", "", `heap 1MiB is out of range: it must be at least 256MiB; write e.g. heap: 1GiB`},
		{"threshold", "+4", "4", ""},
		{"threshold", "4MiB", "", `threshold "4MiB" is not a whole number; write e.g. threshold: 4`},
		{"timeout", "10", "", `timeout 10 is out of range: it must be from 30 to 86400 seconds; write e.g. timeout: 300`},
		{"binlog", "TRUE", "true", ""},
		{"binlog", "maybe", "", `binlog "maybe" is not true or false; write binlog: true or binlog: false`},
		{"mode", "transactional", "transactional", ""},
		{"mode", "eventual", "", `mode "eventual" must be atomic or transactional`},
		{"label", "anything", "anything", ""},
		{"refresh", "500ms", "500ms", ""},
		{"refresh", "-1", "-1", ""},
		{"refresh", "soon", "", `refresh "soon" is not a duration; write e.g. refresh: 1s`},
		{"refresh", "0s", "", `refresh 0s is out of range: it must be at least 1ms, or -1; write e.g. refresh: 1s`},
		{"read", "95%", "95", ""},
		{"read", "9.5", "", `read "9.5" is not a whole percentage; write e.g. read: 50`},
		{"read", "101", "", `read 101 is out of range: it must be from 0 to 100%; write e.g. read: 50`},
		{"proportion", "1.5", "", `proportion 1.5 is out of range: it must be from 0 to 1; write e.g. proportion: 0.95`},
		{"proportion", "NaN", "", `proportion "NaN" is not a fraction from 0 to 1; write e.g. proportion: 0.95`},
		{"theta", "1", "", `theta 1 is out of range: it must be from 0.01 to 0.999; write e.g. theta: 0.99`},
	} {
		s, _ := Find(decls, c.name)
		got, err := s.Parse(c.text)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: Parse(%q) = %q, %v; want error %s", c.name, c.text, got, err, c.err)
			}
			continue
		}
		if got != c.want || err != nil {
			t.Errorf("%s: Parse(%q) = %q, %v; want %q", c.name, c.text, got, err, c.want)
		}
	}
	s, _ := Find(decls, "mode")
	var ve *ValuesError
	if _, err := s.Parse("lz4"); !errors.As(err, &ve) || ve.Value != "lz4" {
		t.Errorf("a value outside Values: %v, want a *ValuesError", err)
	}
}

func TestDeclarationsCheck(t *testing.T) {
	for _, d := range decls {
		if err := d.Check(); err != nil {
			t.Error(err)
		}
	}
	for _, bad := range []Setting{
		{Name: "a", Kind: Size, Default: "lots"},
		{Name: "b", Kind: Size, Default: "0"}, // below a size's implicit 1B
		{Name: "c", Kind: Int, Min: "x"},
		{Name: "d", Kind: Enum},
		{Name: "e", Kind: Int, Default: "5", Max: "4"},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestResolve(t *testing.T) {
	v, err := Resolve("engine x", decls, map[string]string{"cache": "1024", "binlog": "true", "refresh": "2m", "seed": "7"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Size("cache") != 1024 || !v.Bool("binlog") || v.Duration("refresh") != 2*time.Minute || v.Int64("seed") != 7 {
		t.Errorf("given: %v", v.Map())
	}
	if v.Size("limit") != 0 || v.Int("threshold") != 4 || v.String("mode") != "atomic" || v.Int("read") != 50 {
		t.Errorf("defaults: %v", v.Map())
	}
	if v.Has("label") || !v.Has("seed") {
		t.Errorf("Has: label %v, seed %v", v.Has("label"), v.Has("seed"))
	}
	if d := MustResolve("engine x", decls, map[string]string{"seed": " "}); d.Has("seed") {
		t.Error("a blank seed counts as set")
	}
	for _, c := range []struct {
		given map[string]string
		want  string
	}{
		{map[string]string{"cache": "0"}, `engine x: cache 0 is out of range: it must be at least 1B; write e.g. cache: 64MiB`},
		{map[string]string{"threshold": "lots"}, `engine x: threshold "lots" is not a whole number; write e.g. threshold: 4`},
		{map[string]string{"cahce": "1"}, `unknown option "cahce" for engine x (known: binlog, cache, heap, label, limit, mode, proportion, read, refresh, seed, theta, threshold, timeout)`},
	} {
		if _, err := Resolve("engine x", decls, c.given); err == nil || err.Error() != c.want {
			t.Errorf("Resolve(%v) = %v, want %s", c.given, err, c.want)
		}
	}
	if _, err := Resolve("engine y", []Setting{{Name: "cache", Kind: Size, Default: "lots"}}, nil); err == nil {
		t.Error("a bad declared default was accepted")
	}
}

// TestGetterMisuse checks that reading an undeclared setting, or one of
// another kind, is refused loudly rather than read as zero.
func TestGetterMisuse(t *testing.T) {
	v := MustResolve("engine x", decls, nil)
	var unresolved Values // a config built without its settings
	for name, read := range map[string]func(){
		"undeclared":      func() { v.Size("memtable") },
		"another kind":    func() { v.Int("cache") },
		"unresolved size": func() { unresolved.Size("cache") },
		"unresolved has":  func() { unresolved.Has("seed") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			read()
		}()
	}
}

// TestWith checks a value set after resolving: parsed as a given value,
// the original left as it was, and a bad name or value refused.
func TestWith(t *testing.T) {
	v := MustResolve("engine x", decls, map[string]string{"cache": "1MiB"})
	w, err := v.With("cache", "2GiB")
	if err != nil || w.Size("cache") != 2<<30 || v.Size("cache") != 1<<20 || w.Int("threshold") != 4 {
		t.Errorf("With: %v (%v), original %v", w.Map(), err, v.Map())
	}
	for _, c := range []struct{ name, text, want string }{
		{"cache", "0", `engine x: cache 0 is out of range: it must be at least 1B; write e.g. cache: 64MiB`},
		{"cahce", "1", `unknown option "cahce" for engine x (known: binlog, cache, heap, label, limit, mode, proportion, read, refresh, seed, theta, threshold, timeout)`},
	} {
		if _, err := v.With(c.name, c.text); err == nil || err.Error() != c.want {
			t.Errorf("With(%s, %s) = %v, want %s", c.name, c.text, err, c.want)
		}
	}
}

func TestRange(t *testing.T) {
	for name, want := range map[string]string{
		"timeout": "from 30 to 86400 seconds", "heap": "at least 256MiB", "cache": "at least 1B",
		"mode": "one of atomic, transactional", "refresh": "at least 1ms, or -1", "read": "from 0 to 100%",
		"label": "", "binlog": "",
	} {
		s, _ := Find(decls, name)
		if got := s.Range(); got != want {
			t.Errorf("%s: Range() = %q, want %q", name, got, want)
		}
	}
}
