package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// This file shows a capacity study's decision (stats.Decide): the lines
// that open its answer, its capacity table, and the latency-against-rate
// chart of its search steps.

// decisionLines opens a capacity study's answer, per block: the cheapest
// placement meeting the need (or the frontier), then each dominated
// placement and why, then what bounds a capacity and how long the search
// took.
func decisionLines(st *results.Study, d *stats.Decision) []string {
	var out []string
	slo := stats.SLOText(st.SLO)
	byName := map[[3]string]*stats.CapacityEntry{}
	for _, e := range d.Capacity {
		byName[[3]string{e.Series, e.Durability, fmt.Sprint(e.Clients)}] = e
	}
	entry := func(series, dur string, clients int) *stats.CapacityEntry {
		return byName[[3]string{series, dur, fmt.Sprint(clients)}]
	}
	for i, f := range d.Frontiers {
		block := fmt.Sprintf("%s, %s", f.Durability, clientsText(f.Clients))
		rec := d.Recommendations[i]
		switch {
		case rec.Series != nil:
			e := entry(*rec.Series, f.Durability, f.Clients)
			line := fmt.Sprintf("Cheapest meeting %s at %s ops/s (%s): %s, %s; it meets the need in at least %.0f%% of rounds (95%% confidence): %s carried in 95%% of rounds, mean capacity %s",
				slo, figure(st.NeedOpsS), block, e.Series, costText(st, e), stats.NeedCoverage*100, boundText(rec.LowerBoundOpsS), capacityText(e))
			if base := entry(st.BaselineOf(results.Placement{Name: e.Series}), f.Durability, f.Clients); base != nil && base != e && e.RatioCI95 != nil {
				line += fmt.Sprintf("; %s %s, %s [%s-%s] its capacity (%s)", costDiff(st, e, base), base.Series, ratioX(e.Ratio), ratioX(e.RatioCI95[0]), ratioX(e.RatioCI95[1]), e.Verdict)
			}
			if rec.Cheaper != "" {
				line += ". Cheaper, " + rec.Cheaper
			}
			out = append(out, line+".")
		case st.NeedOpsS > 0:
			out = append(out, fmt.Sprintf("No placement is shown to meet %s at %s ops/s (%s): %s.", slo, figure(st.NeedOpsS), block, rec.Reason))
		}
		var front []string
		for _, s := range f.Series {
			e := entry(s, f.Durability, f.Clients)
			front = append(front, fmt.Sprintf("%s (%s, %s)", s, costText(st, e), capacityText(e)))
		}
		if len(front) > 0 {
			out = append(out, fmt.Sprintf("Capacity under %s (%s): the frontier, cheapest first, is %s.", slo, block, strings.Join(front, "; ")))
		}
		for _, dom := range d.Dominated {
			if dom.Durability == f.Durability && dom.Clients == f.Clients {
				out = append(out, fmt.Sprintf("%s is dominated by %s (%s): %s.", dom.Series, dom.By, block, dom.Why))
			}
		}
	}
	for _, e := range d.Capacity {
		if e.AtLeast {
			out = append(out, fmt.Sprintf("%s's capacity (%s, %s) is only a lower bound in some rounds: the step above it waited in tierbench's clients or reached the search's most; raise clients or search max to measure further.",
				e.Series, e.Durability, clientsText(e.Clients)))
		}
		if e.Dropped != "" {
			out = append(out, fmt.Sprintf("%s (%s, %s) was no longer searched %s.", e.Series, e.Durability, clientsText(e.Clients), e.Dropped))
		}
	}
	if t := d.Time.TimeText(); t != "" {
		out = append(out, t)
	}
	return out
}

// boundText is a lower tolerance bound: "at least 9,100 ops/s".
func boundText(b *float64) string {
	if b == nil {
		return "no bound"
	}
	return "at least " + figure(*b) + " ops/s"
}

// capacityText is "9,800 ops/s [9,500-10,100]", with "at least" when
// bounded by the clients.
func capacityText(e *stats.CapacityEntry) string {
	if e == nil || e.Rounds == 0 {
		return "no capacity"
	}
	t := figure(e.OpsS) + " ops/s"
	if e.AtLeast {
		t = "at least " + t
	}
	if e.CI95 != nil {
		t += fmt.Sprintf(" [%s-%s]", figure(e.CI95[0]), figure(e.CI95[1]))
	}
	return t
}

// costText is "$14/month", or "unpriced".
func costText(st *results.Study, e *stats.CapacityEntry) string {
	if e == nil || e.CostPerMonth == nil {
		return "unpriced"
	}
	t := capacity.Money(st.Costs, *e.CostPerMonth) + "/month"
	if len(e.Unpriced) > 0 {
		t += " (" + strings.Join(e.Unpriced, ", ") + " unpriced)"
	}
	return t
}

// costDiff is "$4/month more than" or "$2/month less than" or "the same
// cost as".
func costDiff(st *results.Study, e, base *stats.CapacityEntry) string {
	if e.CostPerMonth == nil || base.CostPerMonth == nil {
		return "against"
	}
	diff := *e.CostPerMonth - *base.CostPerMonth
	switch {
	case diff > 0:
		return capacity.Money(st.Costs, diff) + "/month more than"
	case diff < 0:
		return capacity.Money(st.Costs, -diff) + "/month less than"
	}
	return "the same cost as"
}

// ratioX prints a ratio with two significant figures: "2.4x".
func ratioX(r float64) string { return fmt.Sprintf("%.2fx", r) }

// capacityTable writes `show`'s capacity table.
func capacityTable(w io.Writer, st *results.Study, d *stats.Decision) {
	if d == nil {
		return
	}
	fmt.Fprintln(w, "\n"+wrap(fmt.Sprintf("capacity under %s (search from %s ops/s to %g%%; each round's capacity is the geometric middle of its final bracket, or its upper end when that was unsure at the bound (the highest of a run of them), the figure their geometric mean with its 95%% CI; "+
		"vs baseline [Holm-adjusted interval]; need: carried in at least %.0f%% of rounds at 95%% confidence over the candidates, yes, no or may):",
		stats.SLOText(st.SLO), figure(st.Search.FromOpsS), st.Search.Resolution*100, stats.NeedCoverage*100), showWidth, "", "  "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  placement\tdurability\tclients\tcapacity ops/s [95% CI]\trounds\tsteps\tvs baseline\tcost/month\tper M ops\tneed\tdecision")
	for _, e := range d.Capacity {
		vs := e.Verdict
		if e.RatioCI95 != nil {
			vs = fmt.Sprintf("%s [%s-%s] %s", ratioX(e.Ratio), ratioX(e.RatioCI95[0]), ratioX(e.RatioCI95[1]), e.Verdict)
		}
		per := "-"
		if e.CostPerMillionOps != nil {
			per = capacity.Money(st.Costs, *e.CostPerMillionOps)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", e.Series, e.Durability, e.Clients, capacityText(e), e.Rounds, e.Steps, vs,
			costText(st, e), per, orDash(e.MeetsNeed), decisionWord(d, e))
	}
	tw.Flush()
	for _, e := range d.Capacity {
		if len(e.CostParts) > 0 {
			fmt.Fprintln(w, wrap(fmt.Sprintf("%s costs %s", e.Series, strings.Join(e.CostParts, " + ")), showWidth, "    ", "      "))
		}
	}
}

// decisionWord says where a series stands in its block's decision.
func decisionWord(d *stats.Decision, e *stats.CapacityEntry) string {
	for i, f := range d.Frontiers {
		if f.Durability != e.Durability || f.Clients != e.Clients {
			continue
		}
		if r := d.Recommendations[i].Series; r != nil && *r == e.Series {
			return "recommended"
		}
		if slices.Contains(f.Series, e.Series) {
			return "frontier"
		}
	}
	for _, dom := range d.Dominated {
		if dom.Series == e.Series && dom.Durability == e.Durability && dom.Clients == e.Clients {
			return "dominated by " + dom.By
		}
	}
	return "-"
}

// capacitySection draws latency against the rate achieved, per block
// (durability x clients) and placement: a capacity study's search steps,
// with the objective's bound across and each capacity marked, or the
// runs of a target_rate axis. It is the curve every capacity planner
// draws.
func (b *builder) capacitySection() chartSection {
	s := chartSection{ID: "chart-capacity", Heading: "Latency against throughput"}
	pct := "p99"
	var d *stats.Decision
	if b.st.SLO != nil {
		pct = b.st.SLO.Percentile
		d = stats.Decide(b.st, b.a, b.in.Runs)
		s.Intro = fmt.Sprintf("Each point is one search step: its p50 (dashed) and %s (solid) latency, from the intended start, against the rate it achieved; a whisker is the step's 95%% interval of its %s (order statistics), which the step was judged by. The horizontal line is the objective's bound; each placement's capacity (the geometric mean of its rounds') is marked below the axis. Both axes are logarithmic.", pct, pct)
	} else {
		s.Intro = "Each point is one run of the target_rate axis: its p50 (dashed) and p99 (solid) latency, from the intended start, against the rate it achieved. Both axes are logarithmic."
	}
	// A series of a rate axis is a placement at one rate: its line is the
	// placement's (Placement.Of, less the rate).
	of := map[string]string{}
	var placements []string
	for _, p := range b.st.Placements {
		name := p.Name
		if len(b.st.TargetRates) > 1 && p.Of != "" {
			name = p.Of
		}
		of[p.Name] = name
		if !slices.Contains(placements, name) {
			placements = append(placements, name)
			if _, ok := b.colors[name]; !ok {
				b.colors[name] = b.colors[p.Name]
			}
		}
	}
	for _, dur := range b.st.Durability {
		for _, cl := range b.st.Clients {
			c := &chart{Title: fmt.Sprintf("Latency against throughput, %s, %s", dur, clientsText(cl)),
				X: axis{Label: "achieved ops/s (log scale)", Scale: log10Scale},
				Y: axis{Label: "latency (log scale)", Scale: log10Scale, Format: fmtMicrosTick}}
			if b.st.SLO != nil {
				c.HRefs = []ref{{At: b.st.SLO.BoundUs, Label: stats.SLOText(b.st.SLO)}}
			}
			for _, name := range placements {
				b.rateLines(c, name, of, dur, cl, pct)
			}
			if d != nil {
				for _, e := range d.Capacity {
					if e.Durability == dur && e.Clients == cl && e.Rounds > 0 {
						c.VRefs = append(c.VRefs, ref{At: e.OpsS, Label: e.Series})
					}
				}
			}
			if len(c.Lines) > 0 {
				s.Charts = append(s.Charts, b.render(c, fmt.Sprintf("capacity-%s-%dc", dur, cl), nil))
			}
		}
	}
	return s
}

// rateLines adds placement name's runs of one block to c: its latency at
// pct and its p50, against the rate each run achieved.
func (b *builder) rateLines(c *chart, name string, of map[string]string, dur string, clients int, pct string) {
	var runs []results.Run
	for _, r := range b.in.Runs {
		if of[r.Placement] == name && r.Durability == dur && r.Clients == clients && r.Status == results.RunOK && r.ThroughputOpsS > 0 {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return
	}
	slices.SortFunc(runs, func(x, y results.Run) int { return cmp.Compare(x.ThroughputOpsS, y.ThroughputOpsS) })
	top := line{Name: name + " " + pct, Color: b.colors[name], Markers: true}
	p50 := line{Name: name + " p50", Color: b.colors[name], Dash: "4 3", NoLegend: true}
	for _, r := range runs {
		at, _ := capacity.At(r.Latency, pct)
		tip := fmt.Sprintf("%s #%d asked %.0f ops/s, achieved %.0f: %s %s", name, r.Repeat, r.TargetRate, r.ThroughputOpsS, pct, hist.FormatMicros(at))
		ci, hasCI := r.LatencyCI[pct]
		hasCI = hasCI && !ci.Open
		if hasCI {
			tip += fmt.Sprintf(" [%s-%s]", hist.FormatMicros(ci.Lo), hist.FormatMicros(ci.Hi))
		}
		switch {
		case r.Probe:
			tip += ", a probe that passed (it steered the search; no capacity rests on it)"
		case b.st.SLO != nil:
			tip += ", " + metText(capacity.Judge(*b.st.SLO, r))
		}
		pt := point{X: r.ThroughputOpsS, Y: at, Tip: tip}
		if hasCI {
			// The step's percentile is one order statistic: its whisker
			// is the 95% interval the step was judged by.
			pt.CI = &[2]float64{ci.Lo, ci.Hi}
		}
		top.Points = append(top.Points, pt)
		p50.Points = append(p50.Points, point{X: r.ThroughputOpsS, Y: r.Latency.P50})
	}
	c.Lines = append(c.Lines, top, p50)
}

func metText(o capacity.Outcome) string {
	switch {
	case o.Met && o.Arrivals != "":
		return "met; " + o.Arrivals
	case o.Met:
		return "met"
	case o.Unsure:
		return "unsure: " + o.Why
	}
	return "missed: " + o.Why
}
