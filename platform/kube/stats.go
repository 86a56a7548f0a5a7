package kube

import (
	"context"
	"fmt"
	"time"
)

// PodStats is what a node's kubelet says of one pod in its summary API
// (stats/summary, from cAdvisor, which refreshes it about every 10
// seconds): cumulative CPU time, memory, and its volumes' usage.
type PodStats struct {
	// CPUTime is when the CPU figure was taken, CPUCoreNanoSeconds the
	// CPU time the pod's containers used since they started.
	CPUTime            time.Time
	CPUCoreNanoSeconds uint64
	// WorkingSetBytes is the memory the pod uses that cannot be reclaimed.
	WorkingSetBytes uint64
	// VolumeUsedBytes is, by claim name, the bytes used on its volume.
	VolumeUsedBytes map[string]uint64
}

// summary is the part of the kubelet's stats/v1alpha1 Summary read here.
type summary struct {
	Pods []struct {
		PodRef struct{ Name, Namespace string }
		CPU    *struct {
			Time                 time.Time
			UsageCoreNanoSeconds *uint64
		}
		Memory *struct {
			WorkingSetBytes *uint64
		}
		Volume []struct {
			UsedBytes *uint64
			PVCRef    *struct{ Name, Namespace string }
		}
	}
}

// PodStats asks the kubelet of node, through the API server's node proxy,
// for pod ns/name's figures.
func (c *Cluster) PodStats(ctx context.Context, node, ns, name string) (PodStats, error) {
	var s summary
	if err := c.get(ctx, "/api/v1/nodes/"+node+"/proxy/stats/summary", &s); err != nil {
		return PodStats{}, fmt.Errorf("the kubelet's summary of node %s: %w", node, err)
	}
	for _, p := range s.Pods {
		if p.PodRef.Name != name || p.PodRef.Namespace != ns {
			continue
		}
		if p.CPU == nil || p.CPU.UsageCoreNanoSeconds == nil {
			return PodStats{}, fmt.Errorf("the kubelet's summary of node %s has no CPU figure for pod %s yet", node, name)
		}
		ps := PodStats{CPUTime: p.CPU.Time, CPUCoreNanoSeconds: *p.CPU.UsageCoreNanoSeconds, VolumeUsedBytes: map[string]uint64{}}
		if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			ps.WorkingSetBytes = *p.Memory.WorkingSetBytes
		}
		for _, v := range p.Volume {
			if v.PVCRef != nil && v.UsedBytes != nil {
				ps.VolumeUsedBytes[v.PVCRef.Name] = *v.UsedBytes
			}
		}
		return ps, nil
	}
	return PodStats{}, fmt.Errorf("the kubelet's summary of node %s has no pod %s", node, name)
}

// CPUPct is the CPU the pod used between two readings, in percent of one
// core; false when the kubelet had not refreshed its figure in between.
func CPUPct(a, b PodStats) (float64, bool) {
	dt := b.CPUTime.Sub(a.CPUTime)
	if dt <= 0 || b.CPUCoreNanoSeconds < a.CPUCoreNanoSeconds {
		return 0, false
	}
	return float64(b.CPUCoreNanoSeconds-a.CPUCoreNanoSeconds) / float64(dt.Nanoseconds()) * 100, true
}
