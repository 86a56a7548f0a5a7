package report

import (
	"fmt"
	"sort"

	"github.com/tierbench/tierbench/results"
)

// tierDashes tell the tiers of one placement apart in telemetry charts.
var tierDashes = []string{"", "6 3", "2 3", "8 3 2 3"}

// telemetrySection draws, next to the throughput timelines, what each tier's
// device did in every second of the measured window: the write IOPS of the
// first repeat of each placement, so a fsync storm or a stall can be seen
// against the throughput.
func (b *builder) telemetrySection() chartSection {
	s := chartSection{ID: "chart-telemetry", Heading: "Device writes over time, per run",
		Intro: "Write IOPS of each tier's block device over the measured window (first repeat of each placement), from /proc/diskstats read once a second: each level is one sample, the rate over the interval it spans (the last one shorter when the window is not a whole number of seconds). Colour is the placement, the dash pattern the tier. Tiers without a block device (tmpfs) have no line."}
	for _, d := range b.st.Durability {
		for _, cl := range b.st.Clients {
			c := &chart{Title: fmt.Sprintf("Device write IOPS, durability %s, %d clients", d, cl),
				X: axis{Label: "seconds into the measured window", ZeroBased: true, Tight: true,
					Format: func(v float64) string { return roundSig(v) + "s" }},
				Y: axis{Label: "write IOPS", ZeroBased: true}}
			most := 0
			for _, p := range b.st.Placements {
				g := b.group(p.Name, d, cl)
				if g == nil || len(g.Runs) == 0 {
					continue
				}
				r := g.Runs[0]
				for i, ln := range telemetryLines(r, b.colors[p.Name]) {
					ln.Dash = tierDashes[i%len(tierDashes)]
					c.Lines = append(c.Lines, ln)
					c.Legend = append(c.Legend, legendEntry{Name: ln.Name, Color: ln.Color, Dash: ln.Dash})
					most = max(most, len(ln.Points))
				}
			}
			if len(c.Lines) == 0 {
				s.Notes = append(s.Notes, fmt.Sprintf("Durability %s, %d clients: no device telemetry recorded.", d, cl))
				continue
			}
			var notes []string
			if most < fewSamples {
				notes = append(notes, fmt.Sprintf("The measured window is %s, so each device has %s here: too few to show a trend, only the level of each.",
					fmtSeconds(b.st.DurationS), fmt.Sprintf("%d sample%s", most, plural(most))))
			}
			s.Charts = append(s.Charts, b.render(c, fmt.Sprintf("telemetry-%s-%dc", d, cl), notes))
		}
	}
	return s
}

// fewSamples is the fewest samples per device a chart reads as a trend;
// below it the chart says the window was short.
const fewSamples = 5

// telemetryLines returns one write-IOPS line per tier with a device, a
// level per sample over the interval from the previous sample's end (the
// window's start for the first).
func telemetryLines(r results.Run, color string) []line {
	if r.TelemetryTimeline == nil || r.Telemetry == nil {
		return nil
	}
	names := make([]string, 0, len(r.TelemetryTimeline.Tiers))
	for n := range r.TelemetryTimeline.Tiers {
		if r.Telemetry.Tiers[n].Device != "" && len(r.TelemetryTimeline.Tiers[n]) > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []line
	for _, n := range names {
		ln := line{Name: fmt.Sprintf("%s: tier %s (%s)", r.Placement, n, r.Telemetry.Tiers[n].Device), Color: color, Width: 1.5,
			Tip: fmt.Sprintf("%s, tier %s, run %d", r.Placement, n, r.Seq), NoLegend: true, Steps: true}
		from := 0.0
		for _, smp := range r.TelemetryTimeline.Tiers[n] {
			ln.Points = append(ln.Points, point{X0: from, X: smp.T, Y: smp.WriteIOPS})
			from = smp.T
		}
		out = append(out, ln)
	}
	return out
}
