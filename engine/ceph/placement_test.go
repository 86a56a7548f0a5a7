package ceph_test

import (
	"fmt"
	"testing"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/study"
)

// TestPlacementDefaults parses placements that leave db or wal out: db
// goes with block, wal with db (after db has been placed), as the
// engine's components say.
func TestPlacementDefaults(t *testing.T) {
	ssd, pmem := t.TempDir(), t.TempDir()
	src := fmt.Sprintf(`name: ceph-defaults
engine: ceph
tiers:
  ssd:  {path: %q}
  pmem: {path: %q}
placements:
  baseline:    {block: ssd}
  reference-1: {block: ssd, db: pmem}
  wal-only:    {block: ssd, wal: pmem}
baseline: baseline
durability: [sync]
workload: {name: object-70-30}
clients: [1]
duration: 1s
`, ssd, pmem)
	st, err := study.Parse("ceph.yaml", []byte(src), catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"baseline": "ssd ssd ssd", "reference-1": "ssd pmem pmem", "wal-only": "ssd ssd pmem"}
	for _, p := range st.Placements {
		got := fmt.Sprintf("%s %s %s", p.Components["block"], p.Components["db"], p.Components["wal"])
		if got != want[p.Name] {
			t.Errorf("placement %s: block, db, wal on %s, want %s", p.Name, got, want[p.Name])
		}
	}
}
