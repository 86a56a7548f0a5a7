package results

import "testing"

// TestThroughputInMetric checks a study's figure: ops/s without a metric,
// else the metric's op per second or minute, times the units per op.
func TestThroughputInMetric(t *testing.T) {
	r := Run{DurationS: 10, ThroughputOpsS: 500, ByOp: map[string]OpSummary{"bulk": {Ops: 20}, "term": {Ops: 4980}}}
	for _, tc := range []struct {
		name   string
		metric *Metric
		want   float64
	}{
		{"ops/s", nil, 500},
		{"tpmC: per minute", &Metric{Name: "tpmC", Op: "bulk", PerMinute: true}, 120},
		{"docs/s: 1000 docs per bulk", &Metric{Name: "docs/s", Op: "bulk", PerOp: 1000}, 2000},
		{"per op 0 counts one", &Metric{Name: "bulks/s", Op: "bulk"}, 2},
	} {
		s := &Study{Metric: tc.metric}
		if got := s.Throughput(r); got != tc.want {
			t.Errorf("%s: Throughput = %v, want %v", tc.name, got, tc.want)
		}
	}
}
