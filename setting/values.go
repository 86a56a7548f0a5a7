package setting

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Values are one run's settings, each the value the study gave or else the
// declared Default, held in normal form and read by kind. Make them with
// Resolve. A getter for a name that was not declared, or of another kind,
// panics: that is a mistake in the engine or workload, which its own tests
// catch on first use.
type Values struct {
	owner  string
	decl   map[string]Setting
	values map[string]string // normal form; absent when unset
}

// Resolve checks the given values against decls and fills in every
// Default. This is the one rule for defaults: a study run, an engine's or
// workload's own tests and `tierbench drive` get the same ones. owner names
// whose settings they are in errors: "engine postgres" (whose settings
// are options) or "workload ycsb" (parameters).
// The study parser has already refused bad values with line numbers; the
// errors here guard callers that did not go through it.
func Resolve(owner string, decls []Setting, given map[string]string) (Values, error) {
	v := Values{owner: owner, decl: make(map[string]Setting, len(decls)), values: make(map[string]string, len(decls))}
	for _, d := range decls {
		v.decl[d.Name] = d
		if d.Default == "" {
			continue
		}
		n, err := d.Parse(d.Default)
		if err != nil {
			return Values{}, fmt.Errorf("%s declares a bad default: %w", owner, err)
		}
		v.values[d.Name] = n
	}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		d, ok := v.decl[name]
		if !ok {
			return Values{}, fmt.Errorf("unknown %s %q for %s (known: %s)", noun(owner), name, owner, strings.Join(Names(decls), ", "))
		}
		if strings.TrimSpace(given[name]) == "" && d.Default == "" {
			delete(v.values, name)
			continue
		}
		n, err := d.Parse(given[name])
		if err != nil {
			return Values{}, fmt.Errorf("%s: %w", owner, err)
		}
		v.values[name] = n
	}
	return v, nil
}

// noun is what owner's settings are called: an engine's are options, a
// workload's parameters.
func noun(owner string) string {
	switch {
	case strings.HasPrefix(owner, "engine "):
		return "option"
	case strings.HasPrefix(owner, "workload "):
		return "parameter"
	}
	return "setting"
}

// MustResolve is Resolve for values a program writes itself (tests,
// built-in studies); it panics on a mistake.
func MustResolve(owner string, decls []Setting, given map[string]string) Values {
	v, err := Resolve(owner, decls, given)
	if err != nil {
		panic(err)
	}
	return v
}

// Map returns every set value in normal form, for the record.
func (v Values) Map() map[string]string {
	return maps.Clone(v.values)
}

// Has reports whether name has a value (given, or a non-empty Default).
func (v Values) Has(name string) bool {
	v.mustBeResolved(name)
	_, ok := v.values[name]
	return ok
}

// Text returns name's value in normal form, whatever its kind ("" when
// unset).
func (v Values) Text(name string) string {
	v.mustBeResolved(name)
	if _, ok := v.decl[name]; !ok {
		panic(fmt.Sprintf("%s reads setting %q, which it does not declare", v.owner, name))
	}
	return v.values[name]
}

// With returns a copy of v with name set to text, checked as Resolve
// checks a given value: for a value a program derives from the others
// (a device sized to hold what the rest put on it).
func (v Values) With(name, text string) (Values, error) {
	v.mustBeResolved(name)
	d, ok := v.decl[name]
	if !ok {
		return Values{}, fmt.Errorf("unknown %s %q for %s (known: %s)", noun(v.owner), name, v.owner, strings.Join(slices.Sorted(maps.Keys(v.decl)), ", "))
	}
	n, err := d.Parse(text)
	if err != nil {
		return Values{}, fmt.Errorf("%s: %w", v.owner, err)
	}
	out := v
	out.values = maps.Clone(v.values)
	out.values[name] = n
	return out, nil
}

// mustBeResolved panics on the zero Values, which no Resolve made: a
// caller built a config without its settings, a mistake its tests catch.
func (v Values) mustBeResolved(name string) {
	if v.decl == nil {
		panic(fmt.Sprintf("setting %q read from values no Resolve made: resolve them first (setting.Resolve, engine.Spec.ResolveOptions)", name))
	}
}

// value returns name's normal form, which is of one of kinds.
func (v Values) value(name string, kinds ...Kind) string {
	v.mustBeResolved(name)
	d, ok := v.decl[name]
	if !ok || !slices.Contains(kinds, d.Kind) {
		panic(fmt.Sprintf("%s reads setting %q as a %s, which it does not declare", v.owner, name, kinds[0]))
	}
	return v.values[name]
}

// Int returns an Int or Percent setting (a percent as written: 95 for
// 95%).
func (v Values) Int(name string) int {
	n, _ := strconv.Atoi(v.value(name, Int, Percent))
	return n
}

// Int64 returns an Int setting.
func (v Values) Int64(name string) int64 {
	n, _ := strconv.ParseInt(v.value(name, Int), 10, 64)
	return n
}

// Size returns a Size setting in bytes.
func (v Values) Size(name string) int64 {
	n, _ := strconv.ParseInt(v.value(name, Size), 10, 64)
	return n
}

// Duration returns a Duration setting; a word from Values (such as -1)
// reads as 0, so check Text first where such words mean something.
func (v Values) Duration(name string) time.Duration {
	d, _ := time.ParseDuration(v.value(name, Duration))
	return d
}

// Bool returns a Bool setting.
func (v Values) Bool(name string) bool {
	return v.value(name, Bool) == "true"
}

// String returns a String or Enum setting.
func (v Values) String(name string) string {
	return v.value(name, String, Enum)
}

// Float returns a Float or Ratio setting.
func (v Values) Float(name string) float64 {
	f, _ := strconv.ParseFloat(v.value(name, Float, Ratio), 64)
	return f
}
