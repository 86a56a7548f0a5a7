// Package setting is the one typed setting of tierbench: an engine option a
// study sets under `options:` and a workload parameter it sets under
// `workload:` are both a Setting. Its kind, range, default and doc are
// written once, in the engine's or workload's Spec; the study parser checks
// a value with Parse (one wording per mistake), listings print Range, and
// the engine or workload reads the checked values by kind through Values.
//
// The range is the doc: a limit a setting's doc would state ("at least
// 256MiB") is its Min instead, so the check and the words cannot disagree.
// Rules that tie two settings together (replicas at most osds) stay with
// the engine or workload that owns both.
package setting

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// Kind says how a setting's value is written and read.
type Kind string

// Kinds of setting.
const (
	Int      Kind = "int"      // a whole number: 4
	Size     Kind = "size"     // bytes: 64MiB, 512KiB, 1GB
	Duration Kind = "duration" // a Go duration: 500ms, 30s, 5m
	Bool     Kind = "bool"     // true or false (also on/off, yes/no, 1/0)
	String   Kind = "string"   // free text
	Enum     Kind = "enum"     // one of Values
	Percent  Kind = "percent"  // a whole number from 0 to 100, with or without %: 95 or 95%
	Ratio    Kind = "ratio"    // a fraction from 0 to 1: 0.95
	Float    Kind = "number"   // a decimal number: 0.99
)

// Setting is one value a study may set. Min and Max are written as a study
// would write the value ("256MiB", "30", "1s"); empty means unbounded
// (Percent and Ratio have their own bounds, and a Size given in a study is
// at least 1 byte unless Min says otherwise). For Enum, Values are the
// accepted values; for other kinds they are words accepted besides the
// kind's own form ("-1" for a refresh interval that means never).
//
// A Default of "" means unset: Values.Has reports it and the getters return
// the zero value, for settings whose absence means "choose for me" (a seed).
type Setting struct {
	Name    string
	Kind    Kind
	Default string
	Doc     string
	Min     string
	Max     string
	Values  []string
	// Unit names what a number counts ("seconds", "rows"), for listings
	// and errors.
	Unit string
	// Memory marks a size held in RAM (a cache, a heap): a study asking for
	// more than the machine has is refused.
	Memory bool
	// Why, when set, says why the range is what it is; an error for a value
	// outside it says it too ("one round gives no interval to judge").
	Why string
}

// Parse reads a value as a study writes it and returns its normal form,
// the text Values holds: sizes in decimal bytes, whole numbers in decimal,
// durations as Go prints them, booleans as true or false, percents without
// the sign. The error names the setting, the value and what to write; a
// value outside an Enum's Values is a *ValuesError, so a caller can suggest
// the nearest.
func (s Setting) Parse(text string) (string, error) {
	text = strings.TrimSpace(text)
	if slices.Contains(s.Values, text) && s.Kind != Enum {
		return text, nil
	}
	v, num, err := s.normal(text)
	if err != nil {
		return "", err
	}
	if err := s.inRange(text, num); err != nil {
		return "", err
	}
	return v, nil
}

// normal parses text by kind; num is its value as a number for the range
// check (bytes, nanoseconds, the number itself).
func (s Setting) normal(text string) (v string, num float64, err error) {
	bad := func(what string) error {
		return fmt.Errorf("%s %q is not %s; write e.g. %s: %s", s.Name, text, what, s.Name, s.Example())
	}
	switch s.Kind {
	case Int:
		n, err := strconv.ParseInt(text, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return "", 0, s.outOfRange(text) // past 2^63: more than any bound
		}
		if err != nil {
			return "", 0, bad("a whole number")
		}
		return strconv.FormatInt(n, 10), float64(n), nil
	case Size:
		n, err := humanize.ParseBytes(text)
		if err != nil {
			return "", 0, bad("a size")
		}
		if n > math.MaxInt64 {
			return "", 0, fmt.Errorf("%s %q is too large; write less than 8EiB", s.Name, text)
		}
		return strconv.FormatUint(n, 10), float64(n), nil
	case Duration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return "", 0, bad("a duration")
		}
		return d.String(), float64(d), nil
	case Bool:
		b, err := strconv.ParseBool(text)
		switch strings.ToLower(text) {
		case "on", "yes":
			b, err = true, nil
		case "off", "no":
			b, err = false, nil
		}
		if err != nil {
			return "", 0, fmt.Errorf("%s %q is not true or false; write %s: true or %s: false", s.Name, text, s.Name, s.Name)
		}
		return strconv.FormatBool(b), 0, nil
	case String:
		return text, 0, nil
	case Enum:
		if !slices.Contains(s.Values, text) {
			return "", 0, &ValuesError{Name: s.Name, Value: text, Values: s.Values}
		}
		return text, 0, nil
	case Percent:
		n, err := strconv.ParseInt(strings.TrimSuffix(text, "%"), 10, 64)
		if err != nil {
			return "", 0, bad("a whole percentage")
		}
		return strconv.FormatInt(n, 10), float64(n), nil
	case Ratio, Float:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			what := "a decimal number"
			if s.Kind == Ratio {
				what = "a fraction from 0 to 1"
			}
			return "", 0, bad(what)
		}
		return strconv.FormatFloat(f, 'f', -1, 64), f, nil
	}
	return "", 0, fmt.Errorf("%s has no kind %q", s.Name, s.Kind)
}

// bounds returns the range in numbers, with the kind's own bounds.
func (s Setting) bounds() (lo, hi float64, hasLo, hasHi bool) {
	switch s.Kind {
	case Percent:
		lo, hi, hasLo, hasHi = 0, 100, true, true
	case Ratio:
		lo, hi, hasLo, hasHi = 0, 1, true, true
	case Size:
		lo, hasLo = 1, true
	}
	if s.Min != "" {
		if _, n, err := s.normal(s.Min); err == nil {
			lo, hasLo = n, true
		}
	}
	if s.Max != "" {
		if _, n, err := s.normal(s.Max); err == nil {
			hi, hasHi = n, true
		}
	}
	return lo, hi, hasLo, hasHi
}

// inRange checks num against the range; text is the value as given.
func (s Setting) inRange(text string, num float64) error {
	switch s.Kind {
	case Bool, String, Enum:
		return nil
	}
	lo, hi, hasLo, hasHi := s.bounds()
	if (hasLo && num < lo) || (hasHi && num > hi) {
		return s.outOfRange(text)
	}
	return nil
}

// outOfRange says that text is outside the setting's range, and what to write.
func (s Setting) outOfRange(text string) error {
	must := s.Range()
	if must == "" {
		must = "a whole number below 2^63"
	}
	why := ""
	if s.Why != "" {
		why = " (" + s.Why + ")"
	}
	return fmt.Errorf("%s %s is out of range: it must be %s%s; write e.g. %s: %s", s.Name, text, must, why, s.Name, s.Example())
}

// Range says in words what values the setting takes: "from 30 to 86400
// seconds", "at least 256MiB", "one of atomic, transactional"; "" for
// free text and booleans.
func (s Setting) Range() string {
	unit := ""
	if s.Unit != "" {
		unit = " " + s.Unit
	}
	extra := ""
	if len(s.Values) > 0 && s.Kind != Enum {
		extra = ", or " + strings.Join(s.Values, " or ")
	}
	switch s.Kind {
	case Bool, String:
		if extra != "" {
			return extra[2:]
		}
		return ""
	case Enum:
		return "one of " + strings.Join(s.Values, ", ")
	}
	lo, hi := s.Min, s.Max
	switch {
	case s.Kind == Percent && lo == "":
		lo = "0"
	case s.Kind == Ratio && lo == "":
		lo = "0"
	case s.Kind == Size && lo == "":
		lo = "1B"
	}
	switch {
	case s.Kind == Percent && hi == "":
		hi = "100"
	case s.Kind == Ratio && hi == "":
		hi = "1"
	}
	if s.Kind == Percent {
		unit = "%"
	}
	switch {
	case lo != "" && hi != "":
		return "from " + lo + " to " + hi + unit + extra
	case lo != "":
		return "at least " + lo + unit + extra
	case hi != "":
		return "at most " + hi + unit + extra
	}
	return strings.TrimPrefix(extra, ", ")
}

// Example is a value to suggest in an error: the default, else the least
// allowed value, else a value of the kind.
func (s Setting) Example() string {
	switch {
	case s.Default != "":
		return s.Default
	case s.Min != "":
		return s.Min
	case s.Kind == Enum && len(s.Values) > 0:
		return s.Values[0]
	}
	return map[Kind]string{Int: "4", Size: "64MiB", Duration: "1s", Bool: "true", String: "text",
		Percent: "50", Ratio: "0.5", Float: "1.5"}[s.Kind]
}

// Check reports a declaration that cannot work: an unknown kind, bounds or
// a default that do not parse or lie outside the range. Engines' and
// workloads' tests run it over their Specs.
func (s Setting) Check() error {
	var errs []error
	for _, b := range []string{s.Min, s.Max} {
		if b == "" {
			continue
		}
		if _, _, err := s.normal(b); err != nil {
			errs = append(errs, fmt.Errorf("bound %q: %w", b, err))
		}
	}
	if s.Kind == Enum && len(s.Values) == 0 {
		errs = append(errs, fmt.Errorf("%s is an enum without values", s.Name))
	}
	if s.Default != "" {
		if _, err := s.Parse(s.Default); err != nil {
			errs = append(errs, fmt.Errorf("default: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("setting %s: %w", s.Name, err)
	}
	return nil
}

// ValuesError is a value outside an Enum's Values.
type ValuesError struct {
	Name, Value string
	Values      []string
}

func (e *ValuesError) Error() string {
	vs := e.Values
	want := vs[len(vs)-1]
	if len(vs) > 1 {
		want = strings.Join(vs[:len(vs)-1], ", ") + " or " + want
	}
	return fmt.Sprintf("%s %q must be %s", e.Name, e.Value, want)
}

// Find returns the setting called name.
func Find(decls []Setting, name string) (Setting, bool) {
	for _, d := range decls {
		if d.Name == name {
			return d, true
		}
	}
	return Setting{}, false
}

// Names lists the settings' names, sorted.
func Names(decls []Setting) []string {
	out := make([]string, len(decls))
	for i, d := range decls {
		out[i] = d.Name
	}
	slices.Sort(out)
	return out
}
