package main

import (
	"maps"
	"slices"
	"testing"

	"github.com/tierbench/tierbench/catalog"
)

// TestEngineImages checks the engines' images cluster up gives its node:
// named after the engine, with the references a study's pods run
// (labImages in package study looks them up by the engine's name);
// Ignite's and OpenSearch's only where this machine has their Java
// builds, elasticsearch's never.
func TestEngineImages(t *testing.T) {
	got, err := engineImages(catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"postgres": "tierbench.local/postgres:15",
		"mariadb":  "tierbench.local/mariadb:10.11",
		"redis":    "tierbench.local/redis:7",
		// Where this machine has the Java builds (make setup).
		"ignite":     "tierbench.local/ignite:2.16.0",
		"opensearch": "tierbench.local/opensearch:2.19.1",
	}
	for name, r := range got {
		if want[name] != r.Name {
			t.Errorf("engine %s: image %q, want %q", name, r.Name, want[name])
		}
	}
	for _, name := range []string{"postgres", "mariadb", "redis"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no image for engine %s", name)
		}
	}
	t.Logf("images: %v", slices.Sorted(maps.Keys(got)))
}
