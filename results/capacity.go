package results

import "strconv"

// This file holds what a capacity study (slo:) stores beyond a fixed-rate
// one: the objective, the search's settings, what each placement costs,
// and the placements its search stopped running. Each search step is an
// ordinary Run with its own TargetRate; whether it met the objective, and
// each placement's capacity, are computed from the runs whenever results
// are shown (package capacity), like every other figure.

// SLO is a latency objective: the latency of each operation, measured from
// its intended start in open loop, at Percentile must be at most BoundUs,
// and with Errors set the failed operations at most that fraction.
type SLO struct {
	// Percentile is one of capacity.Percentiles: "p50" .. "p99.9".
	Percentile string   `json:"percentile"`
	BoundUs    float64  `json:"bound_us"`
	Errors     *float64 `json:"errors,omitempty"`
}

// Search is how a capacity study looks for each placement's capacity: from
// FromOpsS, doubling until the objective fails (or halving until it holds),
// then bisecting until the bracket's ends are within Resolution (a
// fraction) of each other.
type Search struct {
	FromOpsS   float64 `json:"from_ops_s"`
	Resolution float64 `json:"resolution"`
	// MaxOpsS bounds the ramp: a placement that still meets the objective
	// there has a capacity of at least MaxOpsS.
	MaxOpsS float64 `json:"max_ops_s"`
}

// Cost is a price: PerGiBMonth for each GiB a component keeps on the tier,
// PerMonth for the device (or the host) whatever is on it.
type Cost struct {
	PerGiBMonth float64 `json:"per_gib_month,omitempty"`
	PerMonth    float64 `json:"per_month,omitempty"`
}

// Costs are the prices a study was given: per tier, the host's, and the
// production size of components whose footprint the user knows (bytes);
// other components' footprints are measured at the end of their runs
// (Run.Footprint).
type Costs struct {
	Tiers map[string]Cost  `json:"tiers,omitempty"`
	Host  *Cost            `json:"host,omitempty"`
	Sizes map[string]int64 `json:"sizes,omitempty"`
	// Currency is printed before figures; "$" unless given.
	Currency string `json:"currency,omitempty"`
}

// Dropped is a placement a capacity study stopped searching after a round,
// because another that costs no more had a capacity whose interval lies
// wholly above its own.
type Dropped struct {
	Series     string `json:"placement"`
	Durability string `json:"durability"`
	Clients    int    `json:"clients"`
	AfterRound int    `json:"after_round"`
	By         string `json:"by"`
}

// SearchRound is one round of a capacity study's searches, as it ran (a
// resumed round counts what ran after the resume).
type SearchRound struct {
	Round        int     `json:"round"`
	Searches     int     `json:"searches"`
	Steps        int     `json:"steps"`
	EngineStarts int     `json:"engine_starts"`
	WallS        float64 `json:"wall_s"`
}

// RateLabel names a rate of a target_rate axis in a series: "rate=2000".
func RateLabel(rate float64) string {
	return "rate=" + strconv.FormatFloat(rate, 'f', -1, 64)
}

// RateDim names the target_rate axis.
const RateDim = "target rate"
