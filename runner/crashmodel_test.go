package runner

import (
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
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
}
