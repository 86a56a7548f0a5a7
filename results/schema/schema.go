// Package schema holds the JSON Schema (draft 2020-12) that tierbench's
// results JSON follows (`show --format json`, `export --format json`;
// docs/results-schema.md), and checks a document against it. Tests use it
// to keep the schema and the output in step; readers of the JSON may use
// the file itself.
package schema

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// V1 is the schema of version 1, results.SchemaVersion today.
//
//go:embed tierbench-results.v1.json
var V1 []byte

// location names V1 for the compiler and in its messages.
const location = "tierbench-results.v1.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(V1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", location, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // date-time fields are checked, not only typed
	if err := c.AddResource(location, doc); err != nil {
		return nil, fmt.Errorf("load %s: %w", location, err)
	}
	s, err := c.Compile(location)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", location, err)
	}
	return s, nil
})

// Validate checks a JSON document against V1; the error names every
// place it departs from the schema.
func Validate(doc []byte) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("against %s: %w", location, err)
	}
	return nil
}
