package setting

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// wireValues is Values as JSON, for a process that must hold exactly what
// another resolved (Pebble's child of a crash run): the owner, every
// declaration and the values in normal form. The receiver reads them as
// they are and resolves nothing again, so both sides cannot disagree on a
// default or a parse.
type wireValues struct {
	Owner  string            `json:"owner"`
	Decls  []Setting         `json:"decls"`
	Values map[string]string `json:"values"`
}

// MarshalJSON encodes resolved values with their declarations.
func (v Values) MarshalJSON() ([]byte, error) {
	if v.decl == nil {
		return []byte("null"), nil // no Resolve made them: nothing to send
	}
	w := wireValues{Owner: v.owner, Values: v.values}
	for _, name := range slices.Sorted(maps.Keys(v.decl)) {
		w.Decls = append(w.Decls, v.decl[name])
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON wrote. A value for a setting the
// declarations lack is refused: the two sides are one program, so that is
// a mistake, not a value to guess at.
func (v *Values) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = Values{}
		return nil
	}
	var w wireValues
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("decode settings: %w", err)
	}
	out := Values{owner: w.Owner, decl: make(map[string]Setting, len(w.Decls)), values: maps.Clone(w.Values)}
	if out.values == nil {
		out.values = map[string]string{}
	}
	for _, d := range w.Decls {
		out.decl[d.Name] = d
	}
	for name := range out.values {
		if _, ok := out.decl[name]; !ok {
			return fmt.Errorf("decode settings of %s: value for %q, which is not declared", w.Owner, name)
		}
	}
	*v = out
	return nil
}
