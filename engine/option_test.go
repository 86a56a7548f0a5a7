package engine

import (
	"errors"
	"testing"
)

var optionSpec = Spec{Name: "x", Options: []Option{
	{Name: "cache", Kind: KindSize, Default: "64MiB"},
	{Name: "limit", Kind: KindSize, Default: "0"},
	{Name: "threshold", Kind: KindInt, Default: "4"},
	{Name: "binlog", Kind: KindBool, Default: "false"},
	{Name: "mode", Kind: KindString, Default: "atomic", Values: []string{"atomic", "transactional"}},
	{Name: "label", Kind: KindString, Default: ""},
}}

func TestOptionParse(t *testing.T) {
	for _, c := range []struct {
		name, text, want, err string
	}{
		{"cache", "64MiB", "67108864", ""},
		{"cache", "1GB", "1000000000", ""},
		{"cache", "1024", "1024", ""},
		{"cache", "lots", "", `option cache "lots" is not a size; write a byte count such as 64MiB, 512KiB or 1GB`},
		{"cache", "0MiB", "", `option cache must be more than 0 bytes, got "0MiB"; write e.g. cache: 64MiB`},
		{"cache", "8EiB", "", `option cache "8EiB" is too large; write less than 8EiB`},
		{"threshold", "+4", "4", ""},
		{"threshold", "4MiB", "", `option threshold "4MiB" is not a whole number; write e.g. threshold: 4`},
		{"binlog", "TRUE", "true", ""},
		{"binlog", "maybe", "", `option binlog "maybe" is not true or false; write binlog: true or binlog: false`},
		{"mode", "transactional", "transactional", ""},
		{"mode", "eventual", "", `option mode "eventual" must be atomic or transactional`},
		{"label", "anything", "anything", ""},
	} {
		o, _ := optionSpec.Option(c.name)
		got, err := o.Parse(c.text)
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
	o, _ := optionSpec.Option("mode")
	var ve *ValuesError
	if _, err := o.Parse("lz4"); !errors.As(err, &ve) || ve.Value != "lz4" {
		t.Errorf("a value outside Values: %v, want a *ValuesError", err)
	}
}

func TestResolveOptions(t *testing.T) {
	o, err := optionSpec.ResolveOptions(map[string]string{"cache": "1024", "binlog": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Size("cache") != 1024 || !o.Bool("binlog") {
		t.Errorf("given: cache %d, binlog %v", o.Size("cache"), o.Bool("binlog"))
	}
	if o.Size("limit") != 0 || o.Int("threshold") != 4 || o.String("mode") != "atomic" || o.String("label") != "" {
		t.Errorf("defaults: limit %d, threshold %d, mode %q", o.Size("limit"), o.Int("threshold"), o.String("mode"))
	}
	if d, _ := optionSpec.ResolveOptions(nil); d.Size("cache") != 64<<20 {
		t.Errorf("default cache = %d, want 64MiB", d.Size("cache"))
	}

	for _, c := range []struct {
		given map[string]string
		want  string
	}{
		{map[string]string{"cache": "0"}, `option cache must be more than 0 bytes, got "0"; write e.g. cache: 64MiB`},
		{map[string]string{"cache": "64MiB"}, `option cache="64MiB" is not in normal form: the study parser passes it as 67108864`},
		{map[string]string{"threshold": "lots"}, `option threshold "lots" is not a whole number; write e.g. threshold: 4`},
		{map[string]string{"mode": "eventual"}, `option mode "eventual" must be atomic or transactional`},
		{map[string]string{"cahce": "1"}, `unknown option "cahce" for engine x (known options: binlog, cache, label, limit, mode, threshold)`},
	} {
		if _, err := optionSpec.ResolveOptions(c.given); err == nil || err.Error() != c.want {
			t.Errorf("ResolveOptions(%v) = %v, want %s", c.given, err, c.want)
		}
	}

	bad := Spec{Name: "y", Options: []Option{{Name: "cache", Kind: KindSize, Default: "lots"}}}
	if _, err := bad.ResolveOptions(nil); err == nil {
		t.Error("a bad declared default was accepted")
	}
}

// TestOptionsGetterMisuse checks that reading an undeclared option, or one
// of another kind, is refused loudly rather than read as zero.
func TestOptionsGetterMisuse(t *testing.T) {
	o, err := optionSpec.ResolveOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func(){
		"undeclared":   func() { o.Size("memtable") },
		"another kind": func() { o.Int("cache") },
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
