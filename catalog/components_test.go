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

// TestEveryPairIsDeclared checks that every engine declares the data models
// it serves and every workload the one it needs, so that study validation
// can refuse a pair no run could carry out, and that every workload has an
// engine to run on.
func TestEveryPairIsDeclared(t *testing.T) {
	c := Default()
	for _, wn := range c.WorkloadNames() {
		w, _ := c.Workload(wn)
		if w.Model == "" {
			t.Errorf("workload %s declares no data model", wn)
		}
		served := false
		for _, en := range c.EngineNames() {
			e, _ := c.EngineSpec(en)
			served = served || e.Serves(w.Model)
		}
		if !served {
			t.Errorf("workload %s needs the %s model, which no engine serves", wn, w.Model)
		}
	}
	for _, en := range c.EngineNames() {
		if e, _ := c.EngineSpec(en); len(e.Models) == 0 {
			t.Errorf("engine %s declares no data model", en)
		}
	}
}
