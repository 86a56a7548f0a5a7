package stats

import (
	"fmt"
	"slices"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
)

// A capacity study's figure is each round's capacity: the highest rate
// whose step met the objective (package capacity). Analyze judges it as
// any study's figure, paired round by round with the study's guard, by
// seeing each (series, durability, clients, round) search as one run: the
// step that set the capacity, with the capacity as its throughput. That
// capacity is the geometric middle of the search's final bracket
// (capacity.Found.EstimateOpsS), not its met end, which is low by up to a
// resolution; so capacities are compared as any figure, with no slack.

// capacityRuns collapses a capacity study's steps into one run per search,
// in the order the searches ended. A search with no met step is a failed
// run saying why, so the group counts it as failed with its cause.
func capacityRuns(st *results.Study, runs []results.Run) []results.Run {
	type search struct {
		key   Key
		round int
	}
	var order []search
	steps := map[search][]results.Run{}
	for _, r := range runs {
		k := search{Key{st.SeriesOf(r), r.Durability, r.Clients}, r.Repeat}
		if _, seen := steps[k]; !seen {
			order = append(order, k)
		}
		steps[k] = append(steps[k], r)
	}
	out := make([]results.Run, 0, len(order))
	for _, k := range order {
		mine := steps[k]
		slices.SortFunc(mine, func(a, b results.Run) int { return a.Seq - b.Seq })
		out = append(out, searchRun(st, mine))
	}
	return out
}

// searchRun is one search's steps seen as one run (see capacityRuns).
func searchRun(st *results.Study, steps []results.Run) results.Run {
	found := capacity.Capacity(*st.Search, capacity.StepsOf(*st.SLO, steps))
	last := steps[len(steps)-1]
	if found.OpsS == 0 {
		r := last
		r.Status = results.RunFailed
		r.Error = fmt.Sprintf("no rate met %s: %s", SLOText(st.SLO), lowestMiss(st, steps))
		return r
	}
	// The last step at the rate decided it (capacity.Tries).
	i := len(steps) - 1
	for steps[i].TargetRate != found.OpsS || steps[i].Status != results.RunOK {
		i--
	}
	r := steps[i]
	r.ThroughputOpsS = found.EstimateOpsS
	r.Caveats = slices.Clone(r.Caveats)
	if found.AtLeast {
		r.Caveats = append(r.Caveats, fmt.Sprintf("capacity is at least %.0f ops/s: %s", found.OpsS, found.Above))
	}
	return r
}

// lowestMiss says why the lowest rate tried missed the objective.
func lowestMiss(st *results.Study, steps []results.Run) string {
	low := steps[0]
	for _, r := range steps[1:] {
		if r.TargetRate < low.TargetRate {
			low = r
		}
	}
	if low.Status != results.RunOK {
		return fmt.Sprintf("at %.0f ops/s the run failed: %s", low.TargetRate, low.Error)
	}
	return fmt.Sprintf("at %.0f ops/s, %s", low.TargetRate, capacity.Judge(*st.SLO, low).Why)
}

// SLOText prints an objective: "p99 <= 20.00ms" (with ", errors <= 0.1%").
func SLOText(slo *results.SLO) string {
	if slo == nil {
		return ""
	}
	t := fmt.Sprintf("%s <= %s", slo.Percentile, hist.FormatMicros(slo.BoundUs))
	if slo.Errors != nil {
		t += fmt.Sprintf(", errors <= %g%%", *slo.Errors*100)
	}
	return t
}
