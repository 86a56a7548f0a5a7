package runner

import (
	"testing"

	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/workload"
)

// TestStudyRecordMetric checks the workload's figure is stored with the
// units per op its parameters give (bulk_size docs per bulk).
func TestStudyRecordMetric(t *testing.T) {
	st := &study.Study{Workload: study.Workload{Name: "ingest",
		Metric: &workload.Metric{Name: "docs/s", Op: "bulk", PerOpParam: "bulk_size"}}}
	rec := newStudyRecord(st, map[string]string{"bulk_size": "500", "seed": ""})
	if m := rec.Metric; m == nil || m.Name != "docs/s" || m.Op != "bulk" || m.PerOp != 500 {
		t.Errorf("stored metric %+v, want docs/s of bulk, 500 per op", m)
	}
	st.Workload.Metric = &workload.Metric{Name: "tpmC", Op: "new_order", PerMinute: true}
	if m := newStudyRecord(st, nil).Metric; m == nil || m.PerOp != 0 || !m.PerMinute {
		t.Errorf("stored metric %+v, want tpmC per minute, no units per op", m)
	}
}
