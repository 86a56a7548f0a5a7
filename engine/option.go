package engine

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// OptionKind says how an option's value is parsed.
type OptionKind string

// Option kinds.
const (
	KindSize OptionKind = "size" // bytes, e.g. 64MiB
	KindInt  OptionKind = "int"
	KindBool OptionKind = "bool"
	// KindString is text; with Values, one of them.
	KindString OptionKind = "string"
)

// Option is one engine option a study may set under `options:`. It is the
// one place the option's kind and default are written: the study parser
// checks a given value with Parse, and an engine reads the value, or else
// Default, through ResolveOptions.
type Option struct {
	Name    string
	Kind    OptionKind
	Default string
	Doc     string
	// Values, for KindString, are the accepted values, checked when the
	// study is read.
	Values []string
	// Memory marks a size the engine holds in RAM (a cache, a heap): a
	// study asking for more than the machine has is refused.
	Memory bool
}

// Parse reads a value of the option as a study writes it ("64MiB", "TRUE")
// and returns its normal form, the text an engine receives: sizes in
// decimal bytes, whole numbers in decimal, booleans as true or false. A
// size a study gives must be more than 0 bytes. The error says what to
// write instead; a value outside Values is a *ValuesError.
func (o Option) Parse(text string) (string, error) {
	v, err := o.normal(text)
	if err == nil && o.Kind == KindSize && v == "0" {
		return "", fmt.Errorf("option %s must be more than 0 bytes, got %q; write e.g. %s: 64MiB", o.Name, text, o.Name)
	}
	return v, err
}

// normal is Parse without the rule on given sizes: a declared Default may
// be 0 where the engine gives 0 a meaning (redis: no memory limit).
func (o Option) normal(text string) (string, error) {
	switch o.Kind {
	case KindSize:
		n, err := humanize.ParseBytes(text)
		if err != nil {
			return "", fmt.Errorf("option %s %q is not a size; write a byte count such as 64MiB, 512KiB or 1GB", o.Name, text)
		}
		if n > math.MaxInt64 {
			return "", fmt.Errorf("option %s %q is too large; write less than 8EiB", o.Name, text)
		}
		return strconv.FormatUint(n, 10), nil
	case KindInt:
		n, err := strconv.ParseInt(text, 10, strconv.IntSize)
		if err != nil {
			return "", fmt.Errorf("option %s %q is not a whole number; write e.g. %s: 4", o.Name, text, o.Name)
		}
		return strconv.FormatInt(n, 10), nil
	case KindBool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return "", fmt.Errorf("option %s %q is not true or false; write %s: true or %s: false", o.Name, text, o.Name, o.Name)
		}
		return strconv.FormatBool(b), nil
	case KindString:
		if len(o.Values) > 0 && !slices.Contains(o.Values, text) {
			return "", &ValuesError{Option: o.Name, Value: text, Values: o.Values}
		}
		return text, nil
	}
	return "", fmt.Errorf("option %s has no kind %q", o.Name, o.Kind)
}

// ValuesError is a value outside an option's declared Values, so the study
// parser can suggest the nearest one.
type ValuesError struct {
	Option, Value string
	Values        []string
}

func (e *ValuesError) Error() string {
	vs := e.Values
	want := vs[len(vs)-1]
	if len(vs) > 1 {
		want = strings.Join(vs[:len(vs)-1], ", ") + " or " + want
	}
	return fmt.Sprintf("option %s %q must be %s", e.Option, e.Value, want)
}

// Option finds a declared option by name.
func (s Spec) Option(name string) (Option, bool) {
	for _, o := range s.Options {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// OptionNames lists the declared options, sorted.
func (s Spec) OptionNames() []string {
	out := make([]string, len(s.Options))
	for i, o := range s.Options {
		out[i] = o.Name
	}
	sort.Strings(out)
	return out
}

// Options are one run's engine options, each the value the study gave or
// else the Spec's Default, read by kind. Make them with
// Spec.ResolveOptions. A getter for a name the Spec does not declare, or of
// another kind, panics: that is a mistake in the engine, which its own
// tests catch on the first Open.
type Options struct {
	engine string
	decl   map[string]Option
	values map[string]string // normal form
}

// ResolveOptions checks the options given to an engine (Config.Options:
// what the study gave, in Parse's normal form) against the Spec and fills
// in every declared Default.
//
// This is the one rule for defaults: they are applied here, from the
// Spec, whoever made the Config. A study run, an engine's own tests and a
// target all get the same defaults, and no engine writes one twice. The
// study parser has already refused bad values with line numbers; the
// errors here guard engines opened without it.
func (s Spec) ResolveOptions(given map[string]string) (Options, error) {
	o := Options{engine: s.Name, decl: make(map[string]Option, len(s.Options)), values: make(map[string]string, len(s.Options))}
	for _, d := range s.Options {
		v, err := d.normal(d.Default)
		if err != nil {
			return Options{}, fmt.Errorf("engine %s declares a bad default: %w", s.Name, err)
		}
		o.decl[d.Name], o.values[d.Name] = d, v
	}
	for name, text := range given {
		d, ok := o.decl[name]
		if !ok {
			return Options{}, fmt.Errorf("unknown option %q for engine %s (known options: %s)", name, s.Name, strings.Join(s.OptionNames(), ", "))
		}
		v, err := d.Parse(text)
		if err != nil {
			return Options{}, err
		}
		if v != text {
			return Options{}, fmt.Errorf("option %s=%q is not in normal form: the study parser passes it as %s", name, text, v)
		}
		o.values[name] = v
	}
	return o, nil
}

// value returns option name's normal form, which is of kind k.
func (o Options) value(name string, k OptionKind) string {
	d, ok := o.decl[name]
	if !ok || d.Kind != k {
		panic(fmt.Sprintf("engine %s reads option %q as a %s, which its Spec does not declare", o.engine, name, k))
	}
	return o.values[name]
}

// Size returns a KindSize option in bytes.
func (o Options) Size(name string) int64 {
	n, _ := strconv.ParseInt(o.value(name, KindSize), 10, 64)
	return n
}

// Int returns a KindInt option.
func (o Options) Int(name string) int {
	n, _ := strconv.Atoi(o.value(name, KindInt))
	return n
}

// Bool returns a KindBool option.
func (o Options) Bool(name string) bool {
	return o.value(name, KindBool) == "true"
}

// String returns a KindString option.
func (o Options) String(name string) string {
	return o.value(name, KindString)
}
