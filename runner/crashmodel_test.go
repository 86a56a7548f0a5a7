package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
)

// TestPowerModelSeed checks that a power cut's model comes from the run's
// crash value, with a seed drawn from the study's seed and the run's
// number: the same for a resumed run, another for another run.
func TestPowerModelSeed(t *testing.T) {
	model := func(seed uint64, seq int, crash string) (emulate.Model, *results.Crash) {
		st := &study.Study{}
		st.Order.Seed = seed
		r := &run{studyRun: &studyRun{st: st}, cell: study.Cell{Seq: seq}, rec: &results.Run{Crash: &results.Crash{}}}
		r.cell.Variant.Crash = crash
		_, m, err := r.powerModel()
		if err != nil {
			t.Fatalf("%s: %v", crash, err)
		}
		return m, r.rec.Crash
	}
	a, rec := model(7, 3, "power:survive=0.3")
	if a.Kind != emulate.ModelSurvive || a.Keep != 0.3 || rec.Model != "survive" || rec.Keep != 0.3 || rec.Seed != a.Seed {
		t.Errorf("power:survive=0.3 gave %+v, recorded %+v", a, rec)
	}
	if b, _ := model(7, 3, "power:survive=0.3"); b != a {
		t.Errorf("the same run drew %+v, then %+v", a, b)
	}
	if b, _ := model(7, 4, "power:survive=0.3"); b.Seed == a.Seed {
		t.Errorf("runs 3 and 4 drew the same seed %d", a.Seed)
	}
	if b, _ := model(8, 3, "power:survive=0.3"); b.Seed == a.Seed {
		t.Errorf("study seeds 7 and 8 drew the same seed %d", a.Seed)
	}
	if m, rec := model(7, 3, "power"); m != (emulate.Model{}) || rec.Model != "" || rec.Seed != 0 {
		t.Errorf("plain power gave %+v, recorded %+v", m, rec)
	}
	if m, _ := model(7, 3, "power:torn"); m.Kind != emulate.ModelTorn || m.Keep != engine.DefaultKeep {
		t.Errorf("power:torn gave %+v", m)
	}
	// Every model a study can name is one the layer can cut with.
	for _, name := range engine.PowerModelNames() {
		if err := (emulate.Model{Kind: name, Keep: 0.5}).Check(); err != nil {
			t.Errorf("engine.PowerModels names %s, which the layer refuses: %v", name, err)
		}
	}
	// The reorder label states the layer's write-log cap.
	if m, _ := engine.FindPowerModel(engine.PowerReorder); !strings.Contains(m.DoesNot, fmt.Sprintf("%d MiB", emulate.DefaultWriteLogCap>>20)) {
		t.Errorf("the reorder label does not state the %d MiB write-log cap: %s", emulate.DefaultWriteLogCap>>20, m.DoesNot)
	}
}

// TestPowerModelsSynced runs synced Pebble and PostgreSQL (default
// settings) under every power-loss model: no acknowledged write is lost,
// the engine's own check finds nothing, and each run records its model
// and seed.
func TestPowerModelsSynced(t *testing.T) {
	root, tiers := serverTiers(t, "disk")
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tiers["disk"], 0o755); err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, name := range engine.PowerModelNames() {
		models = append(models, engine.CrashValue(name, engine.DefaultKeep))
	}
	for _, eng := range []string{"pebble", "postgres"} {
		t.Run(eng, func(t *testing.T) {
			spec, _ := catalog.Default().EngineSpec(eng)
			all := map[string]string{}
			for _, comp := range spec.ComponentNames() {
				all[comp] = "disk"
			}
			st := tinyStudy(t, tiers, []study.Placement{{Name: "p", Components: all}})
			// Reorder: the study's parse sets it for a {power: reorder} cut.
			st.Tiers = []study.Tier{{Spec: tier.Spec{Name: "disk", Path: tiers["disk"], Crashes: tier.Crashes{PowerCut: true, Reorder: true}}}}
			st.Engine, st.Durability, st.Crashes = eng, []engine.Durability{engine.Sync}, models
			st.Clients = []int{4}
			st.Warmup, st.Duration = 200*time.Millisecond, 2*time.Second

			for _, r := range runStoredIn(t, filepath.Join(root, "results"), st, ledger) {
				cr := r.Crash
				if r.Status != results.RunOK || cr == nil {
					t.Fatalf("status %s (%s), crash %+v", r.Status, r.Error, cr)
				}
				t.Logf("%s under %s (seed %d): %s; corrupt %v (checked %v); the layer: %s", eng, cr.Kind, cr.Seed, cr.Detail, cr.Corrupt, cr.CorruptChecked, orNothing(cr.Lost))
				if !cr.Checked || !cr.Consistent || cr.LostAcked != 0 || cr.Corrupt {
					t.Errorf("synced %s under %s: %+v", eng, cr.Kind, cr)
				}
				if cr.Model == "" || cr.Seed == 0 || cr.Keep != engine.DefaultKeep {
					t.Errorf("%s: the run does not record its model and seed: %+v", cr.Kind, cr)
				}
				if !cr.CorruptChecked {
					t.Errorf("%s's own check did not run: %s", eng, cr.Detail)
				}
			}
			noProcessesUnder(t, root)
		})
	}
}
