package catalog

import (
	"fmt"
	"testing"

	"github.com/tierbench/tierbench/study"
)

// TestOptionalComponentGoesWithItsDefault parses an Ignite study whose
// placement leaves wal_archive out: it lands on wal's tier, as the engine's
// description says, and a placement that names it keeps its own choice.
func TestOptionalComponentGoesWithItsDefault(t *testing.T) {
	fast, slow := t.TempDir(), t.TempDir()
	src := fmt.Sprintf(`name: ignite-defaults
engine: ignite
tiers:
  fast: {path: %q}
  slow: {path: %q}
placements:
  implicit: {persistence: slow, wal: fast}
  explicit: {persistence: slow, wal: fast, wal_archive: slow}
baseline: implicit
durability: [sync]
workload: {name: puts}
clients: [1]
duration: 1s
`, fast, slow)
	st, err := study.Parse("ignite.yaml", []byte(src), Default())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"implicit": "fast", "explicit": "slow"}
	for _, p := range st.Placements {
		if got := p.Components["wal_archive"]; got != want[p.Name] {
			t.Errorf("placement %s: wal_archive on %q, want %q", p.Name, got, want[p.Name])
		}
	}
}
