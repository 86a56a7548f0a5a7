package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// capacityFixture is a capacity study of two placements whose capacity
// in a round is known (a step meets the objective at or below it), the
// searches run by the project's own rules, rounds steady within 2%.
func capacityFixture(need float64) (*results.Study, []results.Run) {
	st := &results.Study{ID: "cap", Name: "cap", Engine: "pebble", Baseline: "wal-slow", Status: results.StudyDone,
		Placements: []results.Placement{{Name: "wal-slow", Components: map[string]string{"wal": "slow"}}, {Name: "wal-fast", Components: map[string]string{"wal": "fast"}}},
		Durability: []string{"sync"}, Clients: []int{8}, Repeat: 6,
		SLO: &results.SLO{Percentile: "p99", BoundUs: 20_000}, Search: &results.Search{FromOpsS: 1000, Resolution: 0.05, MaxOpsS: 1e6}, NeedOpsS: need,
		Costs: &results.Costs{Tiers: map[string]results.Cost{"slow": {PerMonth: 10}, "fast": {PerMonth: 20}}}}
	truth := map[string]float64{"wal-slow": 5000, "wal-fast": 12000}
	rng := rand.New(rand.NewPCG(63, 1))
	var runs []results.Run
	seq := 0
	for round := 1; round <= st.Repeat; round++ {
		for _, p := range st.Placements {
			c := truth[p.Name] * math.Exp(0.02*rng.NormFloat64())
			var steps []capacity.Step
			var mine []results.Run
			start := st.Search.FromOpsS * (1 + st.Search.Resolution*rng.Float64())
			for {
				rate, more := capacity.Next(*st.Search, start, false, steps)
				if !more {
					break
				}
				seq++
				r := results.Run{ID: p.Name, Seq: seq, Placement: p.Name, Durability: "sync", Clients: 8, Repeat: round, Status: results.RunOK,
					Ops: 20_000, TargetRate: rate, ThroughputOpsS: rate, Latency: hist.Summary{P99: 1_000}}
				if rate > c {
					r.Latency.P99 = 40_000
				}
				mine = append(mine, r)
				steps = capacity.StepsOf(*st.SLO, mine)
			}
			runs = append(runs, mine...)
		}
	}
	return st, runs
}

// TestDecisionLinesSayWhatTheNeedMeans: the recommendation says the
// placement meets the need in at least 95% of rounds (95% confidence),
// with its bound and its mean capacity beside it; a need no placement is
// shown to carry says what would decide it.
func TestDecisionLinesSayWhatTheNeedMeans(t *testing.T) {
	for _, c := range []struct {
		name string
		need float64
		want []string
	}{
		{"carried", 4000, []string{"Cheapest meeting p99 <= 20.00ms at 4000 ops/s", ": wal-slow,", "meets the need in at least 95% of rounds (95% confidence)", "mean capacity 4854 ops/s"}},
		{"a cheaper one may", 4550, []string{": wal-fast,", "meets the need in at least 95% of rounds", "Cheaper, wal-slow may:", "more rounds at this spread would decide"}},
		{"beyond the cheaper's capacity", 4900, []string{": wal-fast,", "mean capacity 11995 ops/s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, runs := capacityFixture(c.need)
			d := stats.DecideRuns(st, runs)
			text := strings.Join(decisionLines(st, d), "\n")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("want %q in:\n%s", w, text)
				}
			}
			t.Log(text)
		})
	}
}
