package runner

import (
	"slices"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
)

// TestRaceDropsADominatedPlacement runs a real capacity race: Pebble's WAL
// on a tier whose fsync takes 2 ms against the baseline's 50 µs, at the
// same price, in up to 5 rounds. The slow placement's capacity is several
// times lower every round, so once its interval at the look's share of
// alpha lies below 1 (round 3 on a quiet machine) it is dropped: it stops
// being searched, the record says after which round and by which
// placement, and every round it ran is still paired with the baseline's.
func TestRaceDropsADominatedPlacement(t *testing.T) {
	root, ledger := emulatedRoot(t)
	st := tinyStudy(t, nil, []study.Placement{
		{Name: "wal-fast", Components: map[string]string{"data": "ram", "wal": "fast"}},
		{Name: "wal-slow", Components: map[string]string{"data": "ram", "wal": "slow"}},
	})
	st.Tiers = []study.Tier{
		{Spec: tier.Spec{Name: "ram", Kind: tier.TmpfsSpec{Size: 64 << 20}}},
		{Spec: tier.Spec{Name: "slow", Kind: tier.TmpfsSpec{Size: 64 << 20}, Latency: &tier.LatencySpec{Fsync: 2 * time.Millisecond}}},
		{Spec: tier.Spec{Name: "fast", Kind: tier.TmpfsSpec{Size: 64 << 20}, Latency: &tier.LatencySpec{Fsync: 50 * time.Microsecond}}},
	}
	st.Durability, st.Clients = []engine.Durability{engine.Sync}, []int{8}
	st.Warmup, st.Duration, st.Repeat = 300*time.Millisecond, time.Second, 5
	st.Arrival = "constant"
	// As TestCapacityKnownAnswer: p50, which saturation sets, and a coarse
	// grid from near the slow placement's capacity.
	st.SLO = &results.SLO{Percentile: "p50", BoundUs: 20_000}
	st.Search = results.Search{FromOpsS: 2000, Resolution: 0.5, MaxOpsS: 100_000}
	st.Costs = &results.Costs{Tiers: map[string]results.Cost{"ram": {PerMonth: 1}, "slow": {PerMonth: 10}, "fast": {PerMonth: 10}}}
	rec, _, lines := runStudy(t, root, st, ledger)

	runs := storedRuns(t, root, rec)
	i := slices.IndexFunc(rec.Dropped, func(d results.Dropped) bool { return d.Series == "wal-slow" })
	if i < 0 {
		if slices.ContainsFunc(runs, func(r results.Run) bool { return r.Disturbed }) {
			t.Logf("wal-slow was not dropped, with steps disturbed by other processes; not judged:\n%s", lines)
			return
		}
		t.Fatalf("wal-slow, several times slower at the same price, was not dropped in %d rounds:\n%s", st.Repeat, lines)
	}
	d := rec.Dropped[i]
	if d.By != "wal-fast" || d.AfterRound < 2 || d.AfterRound >= st.Repeat {
		t.Errorf("dropped %+v: want by wal-fast after a round from 2 to %d", d, st.Repeat-1)
	}
	ran := map[string]map[int]bool{"wal-fast": {}, "wal-slow": {}}
	for _, r := range runs {
		if r.Status == results.RunOK {
			ran[rec.SeriesOf(r)][r.Repeat] = true
		}
	}
	for round := range ran["wal-slow"] {
		if round > d.AfterRound {
			t.Errorf("wal-slow was searched in round %d, after it was dropped after round %d", round, d.AfterRound)
		}
		if !ran["wal-fast"][round] {
			t.Errorf("wal-slow's round %d has no wal-fast search to pair with", round)
		}
	}
	if !ran["wal-fast"][st.Repeat] {
		t.Errorf("the baseline was not searched in the last round %d: rounds %v", st.Repeat, ran["wal-fast"])
	}
	t.Logf("wal-slow dropped after round %d of %d by %s", d.AfterRound, st.Repeat, d.By)
}
