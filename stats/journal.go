package stats

import (
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
)

// JournalWrites returns the writes and flushes per second over run r's
// measured window on the device of the tier holding its commit log, its
// journal (the
// IRIS study's "journal writes/s", shown beside throughput). They count
// every write to that device: with the data on the same tier, its writes
// too. ok is false for an engine without a journal component or a run
// without disk telemetry for the tier (tmpfs has no device).
func JournalWrites(st *results.Study, r results.Run) (writes, flushes float64, tier string, ok bool) {
	if r.Telemetry == nil {
		return 0, 0, "", false
	}
	_, t, has := st.ComponentWith(r, engine.RoleCommitLog)
	if !has {
		return 0, 0, "", false
	}
	ts, sampled := r.Telemetry.Tiers[t]
	if !sampled || ts.Device == "" {
		return 0, 0, t, false
	}
	return ts.WriteIOPS, ts.FlushesPerS, t, true
}

// journal fills the group's journal figures: medians over its ok runs,
// and a CI of the writes from MinRounds runs on.
func journal(st *results.Study, g *Group) {
	var writes, flushes []float64
	for _, r := range g.Runs {
		w, f, _, ok := JournalWrites(st, r)
		if !ok {
			return
		}
		writes, flushes = append(writes, w), append(flushes, f)
	}
	if len(writes) == 0 {
		return
	}
	g.JournalWritesMedian, g.JournalFlushesMedian = Median(writes), Median(flushes)
	g.JournalWritesCI = LogInterval(writes)
}
