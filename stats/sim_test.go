package stats

import (
	"math"
	"math/rand/v2"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
)

// The simulations of capacity studies below run the project's own search
// (capacity.Next, the steps judged by capacity.StepsOf and the capacity
// taken by searchRun, as show does) against placements whose capacity in
// a round is known: a step meets the objective when its rate is at most
// that round's capacity. A round's capacity is the placement's true one
// times the round's machine speed (shared by every placement, uniform
// within ±10%) times its own noise (log-normal, sigma simNoise unless
// told). Each search starts as the runner's do (capacity.Start): the
// first round from the study's from, later ones from the round before's
// final bracket, dithered by a uniform share of a resolution.

// simNoise is a placement's own round-to-round spread: 3% on logs, about
// what the review's figures imply at 5% resolution (power 0.55 / 0.94 /
// 1.00 for a true +10% at 3 / 5 / 10 rounds without the slack).
const simNoise = 0.03

// capStudy is a capacity study for searchRun: p99 bounded at 20 ms.
func capStudy(resolution float64) *results.Study {
	return &results.Study{SLO: &results.SLO{Percentile: "p99", BoundUs: 20_000},
		Search: &results.Search{FromOpsS: 1000, Resolution: resolution, MaxOpsS: 1e7}}
}

// simSearch runs one search against a round whose capacity is truth,
// starting from start (warm: an earlier round's capacity), and returns
// the capacity figure searchRun gives it and its steps.
func simSearch(st *results.Study, truth, start float64, warm bool) (estimate float64, steps []capacity.Step) {
	var runs []results.Run
	for len(steps) < 60 {
		rate, more := capacity.Next(*st.Search, start, warm, steps)
		if !more {
			break
		}
		r := results.Run{Status: results.RunOK, Repeat: 1, Clients: 8, Ops: 10_000, TargetRate: rate, ThroughputOpsS: rate,
			Latency: hist.Summary{P99: 1_000}}
		if rate > truth {
			r.Latency.P99 = 30_000
		}
		runs = append(runs, r)
		steps = capacity.StepsOf(*st.SLO, runs)
	}
	for i := range runs {
		runs[i].Seq = i + 1
	}
	got := searchRun(st, runs)
	if got.Status != results.RunOK {
		return 0, steps
	}
	return got.ThroughputOpsS, steps
}

// simPlacement is one placement of a simulated study: its true capacity
// and own noise.
type simPlacement struct {
	truth, noise float64
}

// simRounds runs rounds of searches for each placement and returns each
// one's capacity per round, as Analyze would pair them.
func simRounds(rng *rand.Rand, st *results.Study, ps []simPlacement, rounds int) []map[int]float64 {
	out := make([]map[int]float64, len(ps))
	last := make([][]capacity.Step, len(ps))
	for i := range out {
		out[i] = map[int]float64{}
	}
	for r := 1; r <= rounds; r++ {
		speed := 0.9 + 0.2*rng.Float64()
		for i, p := range ps {
			truth := p.truth * speed * math.Exp(p.noise*rng.NormFloat64())
			start, warm := capacity.Start(*st.Search, last[i], rng.Float64())
			out[i][r], last[i] = simSearch(st, truth, start, warm)
		}
	}
	return out
}
