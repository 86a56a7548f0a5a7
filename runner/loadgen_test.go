package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
)

// TestPebbleRunRecordsLoadGeneratorCPU: a run of the in-process engine
// stores tierbench as its load generator, marked as sharing the engine's
// process, with its CPU over the measured window and per operation, and
// `show --format json` carries it in runs[].telemetry.
func TestPebbleRunRecordsLoadGeneratorCPU(t *testing.T) {
	root := t.TempDir()
	st := tinyStudy(t, map[string]string{"t": filepath.Join(root, "t")},
		[]study.Placement{{Name: "p", Components: map[string]string{"data": "t", "wal": "t"}}})
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store})
	if err != nil || sum.OK != 1 {
		t.Fatalf("run: %+v %v", sum, err)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := report.JSON(&out, sum.Study, runs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Ops       int64 `json:"ops"`
			Telemetry struct {
				LoadGen map[string]any `json:"load_generator"`
			} `json:"telemetry"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs in the JSON, want 1", len(doc.Runs))
	}
	r := doc.Runs[0]
	lg := r.Telemetry.LoadGen
	if lg == nil {
		t.Fatalf("runs[0].telemetry has no load_generator:\n%s", out.String())
	}
	if lg["name"] != "tierbench" || lg["shares_engine"] != true {
		t.Errorf("load_generator %v: want tierbench, sharing the in-process engine's process", lg)
	}
	for _, k := range []string{"cpu_s", "cpu_pct"} {
		if _, ok := lg[k].(float64); !ok {
			t.Errorf("load_generator %v lacks %s", lg, k)
		}
	}
	if cpu, _ := lg["cpu_s"].(float64); r.Ops > 0 && cpu > 0 {
		if perOp, _ := lg["cpu_us_per_op"].(float64); perOp <= 0 {
			t.Errorf("load_generator %v: %d ops and CPU, but no CPU per op", lg, r.Ops)
		}
	}
}
