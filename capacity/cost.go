package capacity

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/results"
)

// GiB is the unit tiers are priced per.
const GiB = 1 << 30

// HoursPerMonth is the month prices are quoted for (730 h, as cloud price
// lists use): a cost per million operations at capacity divides by it.
const HoursPerMonth = 730

// Price is what a placement costs a month, and its parts.
type Price struct {
	PerMonth float64
	// Parts say where each figure comes from: "wal on fast: 0.4 GiB
	// measured x $0.50".
	Parts []string
	// Unpriced lists the tiers the placement uses that have no cost.
	Unpriced []string
}

// PlacementCost prices placement p: for each component, its size (declared
// in costs.Sizes, else the largest footprint among runs) times its tier's
// price per GiB-month; each tier it uses once at its price per month; and
// the host's. ok is false when the study priced nothing.
func PlacementCost(costs *results.Costs, p results.Placement, runs []results.Run) (Price, bool) {
	if costs == nil {
		return Price{}, false
	}
	cur := Currency(costs)
	var pr Price
	used := map[string]bool{}
	for _, comp := range slices.Sorted(maps.Keys(p.Components)) {
		t := p.Components[comp]
		used[t] = true
		c, priced := costs.Tiers[t]
		if !priced || c.PerGiBMonth == 0 {
			continue
		}
		size, how := costs.Sizes[comp], "declared"
		if size == 0 {
			size, how = footprint(comp, runs), "measured"
		}
		pr.PerMonth += float64(size) / GiB * c.PerGiBMonth
		pr.Parts = append(pr.Parts, fmt.Sprintf("%s on %s: %s %s x %s%g/GiB", comp, t, humanize.IBytes(uint64(size)), how, cur, c.PerGiBMonth))
	}
	for _, t := range slices.Sorted(maps.Keys(used)) {
		c, priced := costs.Tiers[t]
		switch {
		case !priced:
			pr.Unpriced = append(pr.Unpriced, t)
		case c.PerMonth > 0:
			pr.PerMonth += c.PerMonth
			pr.Parts = append(pr.Parts, fmt.Sprintf("tier %s: %s%g", t, cur, c.PerMonth))
		}
	}
	if h := costs.Host; h != nil && h.PerMonth > 0 {
		pr.PerMonth += h.PerMonth
		pr.Parts = append(pr.Parts, fmt.Sprintf("host: %s%g", cur, h.PerMonth))
	}
	return pr, true
}

// footprint is the most bytes component comp held at the end of any run.
func footprint(comp string, runs []results.Run) int64 {
	var most int64
	for _, r := range runs {
		most = max(most, r.Footprint[comp])
	}
	return most
}

// PerMillionOps is a monthly cost per million operations served at opsS
// all month; 0 without a capacity.
func PerMillionOps(perMonth, opsS float64) float64 {
	if opsS <= 0 {
		return 0
	}
	return perMonth / (opsS * HoursPerMonth * 3600 / 1e6)
}

// Currency is the symbol costs are printed with.
func Currency(costs *results.Costs) string {
	if costs == nil || costs.Currency == "" {
		return "$"
	}
	return costs.Currency
}

// Money prints an amount: "$14.20/month".
func Money(costs *results.Costs, v float64) string {
	return Currency(costs) + trim(v)
}

// trim prints v with at most 2 decimals and none trailing, or 2
// significant figures below 1 (a cost per million operations).
func trim(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	if v != 0 && v < 1 && v > -1 {
		s = fmt.Sprintf("%.2g", v)
		if strings.Contains(s, "e") {
			s = fmt.Sprintf("%.6f", v)
		}
	}
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}
