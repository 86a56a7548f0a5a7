package kube

import (
	"encoding/json"
	"testing"
	"time"
)

// TestSummary reads a kubelet summary in the stats/v1alpha1 shape (as
// kubectl get --raw /api/v1/nodes/N/proxy/stats/summary prints it) and
// computes a pod's CPU between two readings.
func TestSummary(t *testing.T) {
	const text = `{"node": {"nodeName": "n1"}, "pods": [
	 {"podRef": {"name": "other", "namespace": "bench"}, "cpu": {"time": "2026-11-22T10:00:00Z", "usageCoreNanoSeconds": 1}},
	 {"podRef": {"name": "tb-1-engine", "namespace": "bench", "uid": "u"},
	  "cpu": {"time": "2026-11-22T10:00:10Z", "usageNanoCores": 1500000000, "usageCoreNanoSeconds": 25000000000},
	  "memory": {"time": "2026-11-22T10:00:10Z", "workingSetBytes": 536870912, "rssBytes": 400000000},
	  "volume": [{"name": "data", "usedBytes": 1048576, "capacityBytes": 2147483648, "pvcRef": {"name": "tb-1-data", "namespace": "bench"}},
	             {"name": "kube-api-access", "usedBytes": 12}]}]}`
	var s summary
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatal(err)
	}
	p := s.Pods[1]
	if p.CPU == nil || *p.CPU.UsageCoreNanoSeconds != 25e9 || *p.Memory.WorkingSetBytes != 512<<20 ||
		len(p.Volume) != 2 || p.Volume[0].PVCRef.Name != "tb-1-data" {
		t.Errorf("read %+v", p)
	}
	a := PodStats{CPUTime: time.Unix(100, 0), CPUCoreNanoSeconds: 10e9}
	for _, c := range []struct {
		b    PodStats
		pct  float64
		okay bool
	}{
		{PodStats{CPUTime: time.Unix(110, 0), CPUCoreNanoSeconds: 25e9}, 150, true},
		{PodStats{CPUTime: time.Unix(100, 0), CPUCoreNanoSeconds: 10e9}, 0, false}, // not refreshed
		{PodStats{CPUTime: time.Unix(110, 0), CPUCoreNanoSeconds: 5e9}, 0, false},  // restarted
	} {
		if pct, ok := CPUPct(a, c.b); pct != c.pct || ok != c.okay {
			t.Errorf("CPUPct(%v, %v) = %v, %v; want %v, %v", a, c.b, pct, ok, c.pct, c.okay)
		}
	}
}
