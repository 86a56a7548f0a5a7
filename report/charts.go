package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// The study's charts. Each section makes one chart per durability mode (per
// durability x clients for timelines) and says in notes what it left out.

// phaseMeasured is the stored histogram phase of the measured window.
const phaseMeasured = "measured"

// percentiles are the latency percentiles charted.
var percentiles = []struct {
	Label string
	Q     float64
}{{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99.9", 99.9}}

// maxTimelinePoints caps the points drawn per run, so a study of 100+ long
// runs still makes a report of a few hundred KB.
const maxTimelinePoints = 200

// render draws c in both layouts and names it for the Markdown chart files.
func (b *builder) render(c *chart, slug string, notes []string) chartOut {
	return chartOut{Title: c.Title, Slug: b.uniqueSlug(slug), SVG: c.SVG(), Narrow: c.render(narrowLayout), Notes: notes}
}

// uniqueSlug makes a safe file stem (durability names are user-provided)
// and keeps it unique within the report.
func (b *builder) uniqueSlug(s string) string {
	var out []rune
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		switch {
		case ok:
			out = append(out, r)
			dash = false
		case !dash && len(out) > 0:
			out = append(out, '-')
			dash = true
		}
	}
	slug := strings.TrimRight(string(out), "-")
	if slug == "" {
		slug = "chart"
	}
	b.slugs[slug]++
	if n := b.slugs[slug]; n > 1 {
		slug = fmt.Sprintf("%s-%d", slug, n)
	}
	return slug
}

// clientAxis spaces client counts by doubling (they usually are 1, 4, 16,
// 64), with a tick at each one the study ran.
func (b *builder) clientAxis() axis {
	ticks := make([]float64, 0, len(b.st.Clients))
	for _, c := range b.st.Clients {
		if c <= 0 {
			return axis{Label: "clients", Scale: categoryScale, Categories: b.clientLabels()}
		}
		ticks = append(ticks, float64(c))
	}
	return axis{Label: "clients (log2 scale)", Scale: log2Scale, Ticks: ticks,
		Format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }}
}

func (b *builder) clientLabels() []string {
	out := make([]string, len(b.st.Clients))
	for i, c := range b.st.Clients {
		out[i] = strconv.Itoa(c)
	}
	return out
}

// clientX is the x of a client count on clientAxis.
func (b *builder) clientX(ax axis, i, c int) float64 {
	if ax.Scale == categoryScale {
		return float64(i)
	}
	return float64(c)
}

// missingNote says why a group is absent from a chart.
func missingNote(g *stats.Group) string {
	if g.Failed > 0 {
		return fmt.Sprintf("%s at %d clients: no ok run (%d failed), so it is missing here.", g.Series, g.Clients, g.Failed)
	}
	return fmt.Sprintf("%s at %d clients: not measured, so it is missing here.", g.Series, g.Clients)
}

func (b *builder) throughputSection() chartSection {
	s := chartSection{ID: "chart-throughput", Heading: "Throughput vs clients",
		Intro: fmt.Sprintf(b.metricIntro()+"Median throughput over the ok rounds of each placement; whiskers are the 95%% t interval of the geometric mean (on logs, shown from %d ok rounds on), not of the median.", stats.MinRounds)}
	for _, d := range b.st.Durability {
		c := &chart{Title: "Throughput vs clients, durability " + d, X: b.clientAxis(),
			Y: axis{Label: "median " + b.st.ThroughputUnit(), ZeroBased: true}}
		var notes []string
		if len(b.st.Clients) == 1 {
			// One client count: raw bars, as the seed studies drew them,
			// rather than lines of one point.
			c.Title = fmt.Sprintf("Throughput at %d clients, durability %s", b.st.Clients[0], d)
			c.X = axis{Label: "clients", Scale: categoryScale, Categories: b.clientLabels()}
			for _, p := range b.st.Placements {
				bs := barSeries{Name: p.Name, Color: b.colors[p.Name]}
				g := b.group(p.Name, d, b.st.Clients[0])
				switch {
				case g == nil:
					bs.Values = append(bs.Values, barValue{})
				case g.N == 0:
					bs.Values = append(bs.Values, barValue{})
					notes = append(notes, missingNote(g))
				default:
					bs.Values = append(bs.Values, barValue{V: g.ThroughputMedian, CI: g.ThroughputCI, OK: true, Tip: throughputTip(g, b.st.ThroughputUnit())})
				}
				c.Bars = append(c.Bars, bs)
			}
			s.Charts = append(s.Charts, b.render(c, "throughput-"+d, notes))
			continue
		}
		for _, p := range b.st.Placements {
			l := line{Name: p.Name, Color: b.colors[p.Name], Markers: true}
			for i, cl := range b.st.Clients {
				x := b.clientX(c.X, i, cl)
				g := b.group(p.Name, d, cl)
				if g == nil || g.N == 0 {
					l.Points = append(l.Points, point{X: x, Y: math.NaN()})
					if g != nil {
						notes = append(notes, missingNote(g))
					}
					continue
				}
				l.Points = append(l.Points, point{X: x, Y: g.ThroughputMedian, CI: g.ThroughputCI, Tip: throughputTip(g, b.st.ThroughputUnit())})
			}
			c.Lines = append(c.Lines, l)
		}
		s.Charts = append(s.Charts, b.render(c, "throughput-"+d, notes))
	}
	return s
}

func throughputTip(g *stats.Group, unit string) string {
	t := fmt.Sprintf("%s, %s, %d clients: %.0f %s median of %d", g.Series, g.Durability, g.Clients, g.ThroughputMedian, unit, g.N)
	if g.ThroughputCI != nil {
		t += fmt.Sprintf(" (95%% CI of the geometric mean %.0f-%.0f)", g.ThroughputCI[0], g.ThroughputCI[1])
	}
	return t
}

func (b *builder) ratioSection() chartSection {
	s := chartSection{ID: "chart-ratio", Heading: "Throughput relative to the baseline",
		Intro: fmt.Sprintf("Each bar is a placement's throughput ratio to the baseline %s at the same durability and client count, paired round by round: the geometric mean of the per-round ratios, which can differ from the ratio of the two medians; a bar %s the dashed 1.0 line is faster. Whiskers are the ratio's paired t interval (on logs, %d rounds at least), Holm-adjusted to match the verdict.", b.st.BaselineText(), fasterSide(b.st), stats.MinRounds)}
	var others []results.Placement
	for _, p := range b.st.Placements {
		if !b.st.IsBaseline(p) {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		s.Notes = append(s.Notes, "The study has no placement besides the baseline, so there is nothing to compare.")
		return s
	}
	for _, d := range b.st.Durability {
		base := baselineShort(b.st)
		c := &chart{Title: fmt.Sprintf("Throughput / %s, durability %s", base, d),
			X:     axis{Label: "clients", Scale: categoryScale, Categories: b.clientLabels()},
			Y:     axis{Label: "ratio to " + base, ZeroBased: true, Format: fmtRatio},
			HRefs: []ref{{At: 1, Label: base + " = 1.0x"}}}
		var notes []string
		for _, p := range others {
			bs := barSeries{Name: p.Name, Color: b.colors[p.Name]}
			for _, cl := range b.st.Clients {
				g := b.group(p.Name, d, cl)
				if g == nil || g.Ratio == 0 {
					bs.Values = append(bs.Values, barValue{})
					if g != nil {
						notes = append(notes, fmt.Sprintf("%s at %d clients: %s, so it has no bar.", p.Name, cl, RatioText(g)))
					}
					continue
				}
				bs.Values = append(bs.Values, barValue{V: g.Ratio, CI: g.RatioCI, OK: true,
					Tip: fmt.Sprintf("%s, %s, %d clients: %s", p.Name, d, cl, RatioText(g))})
			}
			c.Bars = append(c.Bars, bs)
		}
		s.Charts = append(s.Charts, b.render(c, "ratio-"+d, notes))
	}
	return s
}

func (b *builder) latencySection() chartSection {
	s := chartSection{ID: "chart-latency", Heading: fmt.Sprintf("Latency percentiles at %d clients", b.clients),
		Intro: "Each placement's latency percentiles from its runs' HDR histograms of the measured window, merged across rounds (percentiles are never averaged across runs). The y axis is logarithmic. A percentile is shown only when the merged histogram holds enough samples for its tail to contain at least one."}
	if b.in.Histogram == nil {
		s.Notes = append(s.Notes, "No stored histograms were given to the report, so the latency charts are left out.")
		return s
	}
	for _, d := range b.st.Durability {
		c := &chart{Title: fmt.Sprintf("Latency percentiles at %d clients, durability %s", b.clients, d),
			X: axis{Label: "percentile", Scale: categoryScale, Categories: percentileLabels()},
			Y: axis{Label: "latency (log scale)", Scale: log10Scale, Format: fmtMicrosTick}}
		var notes []string
		for _, p := range b.st.Placements {
			l, n := b.latencyLine(p.Name, d)
			notes = append(notes, n...)
			if l != nil {
				c.Lines = append(c.Lines, *l)
			}
		}
		s.Charts = append(s.Charts, b.render(c, fmt.Sprintf("latency-%s-%dc", d, b.clients), notes))
	}
	return s
}

func percentileLabels() []string {
	out := make([]string, len(percentiles))
	for i, p := range percentiles {
		out[i] = p.Label
	}
	return out
}

// latencyLine is one placement's percentile line, or nil with a note when
// it has no data; percentiles short of samples are left out with a note.
func (b *builder) latencyLine(placement, d string) (*line, []string) {
	g := b.group(placement, d, b.clients)
	if g == nil {
		return nil, nil
	}
	if g.N == 0 {
		return nil, []string{missingNote(g)}
	}
	h, notes := b.mergedHistogram(g)
	if h == nil || h.TotalCount() == 0 {
		return nil, append(notes, fmt.Sprintf("%s: no latency histogram could be loaded, so it is missing here.", placement))
	}
	l := &line{Name: placement, Color: b.colors[placement], Markers: true}
	var omitted []string
	for i, pc := range percentiles {
		need := stats.MinSamplesFor(pc.Q)
		if h.TotalCount() < need {
			l.Points = append(l.Points, point{X: float64(i), Y: math.NaN()})
			omitted = append(omitted, fmt.Sprintf("%s (needs %d)", pc.Label, need))
			continue
		}
		us := float64(h.ValueAtQuantile(pc.Q)) / 1e3
		l.Points = append(l.Points, point{X: float64(i), Y: us,
			Tip: fmt.Sprintf("%s %s: %s (%d samples from %d runs)", placement, pc.Label, hist.FormatMicros(us), h.TotalCount(), g.N)})
	}
	if len(omitted) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s omitted: only %d samples merged from %d runs, too few for the tail beyond the percentile to hold one sample.",
			placement, strings.Join(omitted, ", "), h.TotalCount(), g.N))
	}
	return l, notes
}

// mergedHistogram merges the measured latency histograms of the group's ok
// runs; a run whose histogram cannot be loaded is skipped with a note.
func (b *builder) mergedHistogram(g *stats.Group) (*hdr.Histogram, []string) {
	merged := hist.New()
	var notes []string
	for _, r := range g.Runs {
		h, err := b.in.Histogram(r.ID, results.OpAll, results.KindLatency, phaseMeasured)
		if err != nil || h == nil {
			notes = append(notes, fmt.Sprintf("%s: run %d's latency histogram is unavailable (%v); it is left out of the merge.", g.Series, r.Seq, err))
			continue
		}
		merged.Merge(h)
	}
	return merged, notes
}

func (b *builder) timelineSection() chartSection {
	s := chartSection{ID: "chart-timeline", Heading: "Throughput over time, per run",
		Intro: fmt.Sprintf("Operations per second of every ok run, one line per run coloured by placement, each level the rate over one interval the driver reported (a second, the last of a phase shorter). Warmup intervals are grey and dashed; the dashed vertical line marks the end of the %gs warmup. Hover a line to see which run it is. Dotted vertical marks and light bands are the engine's own events (checkpoints, flushes, compactions; a crash run's crash and recovery) in the first run of each placement, a band spanning the time one took; hover one for what the engine said.", b.st.WarmupS)}
	for _, d := range b.st.Durability {
		for _, cl := range b.st.Clients {
			if c, notes := b.timelineChart(d, cl); c != nil {
				s.Charts = append(s.Charts, b.render(c, fmt.Sprintf("timeline-%s-%dc", d, cl), notes))
			} else {
				s.Notes = append(s.Notes, notes...)
			}
		}
	}
	return s
}

// timelineChart draws every ok run of one durability x clients cell; nil
// when none has a timeline.
func (b *builder) timelineChart(d string, cl int) (*chart, []string) {
	c := &chart{Title: fmt.Sprintf("Per-second throughput, durability %s, %d clients", d, cl),
		X: axis{Label: "seconds since the run started (warmup included)", ZeroBased: true, Tight: true,
			Format: func(v float64) string { return roundSig(v) + "s" }},
		Y: axis{Label: "ops/s", ZeroBased: true}}
	var notes, kinds []string
	warmup := false
	for _, p := range b.st.Placements {
		g := b.group(p.Name, d, cl)
		if g == nil {
			continue
		}
		if g.Failed > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d failed run(s) not drawn.", p.Name, g.Failed))
		}
		drawn := false
		for _, r := range g.Runs {
			if len(r.Timeline) == 0 {
				notes = append(notes, fmt.Sprintf("%s: run %d has no timeline.", p.Name, r.Seq))
				continue
			}
			if !drawn {
				// The first run's events: every run's would hide the lines.
				ms, ks := eventMarks(r)
				c.Marks = append(c.Marks, ms...)
				kinds = appendNew(kinds, ks...)
			}
			ls := timelineLines(r, b.colors[p.Name])
			warmup = warmup || len(ls[0].Points) > 0
			c.Lines = append(c.Lines, ls...)
			drawn = true
		}
		if drawn {
			c.Legend = append(c.Legend, legendEntry{Name: p.Name, Color: b.colors[p.Name]})
		}
	}
	if len(c.Lines) == 0 {
		return nil, append(notes, fmt.Sprintf("Durability %s, %d clients: no ok run with a timeline, so there is no timeline chart.", d, cl))
	}
	if warmup {
		// Only a warmup that is drawn is named in the legend.
		c.Legend = append(c.Legend, legendEntry{Name: "warmup (not measured)", Color: warmupColor, Dash: "5 4"})
	}
	if b.st.WarmupS > 0 {
		c.VRefs = []ref{{At: b.st.WarmupS, Label: "warmup ends"}}
	}
	if len(c.Marks) > maxMarks {
		notes = append(notes, fmt.Sprintf("%d engine events; the first %d are drawn.", len(c.Marks), maxMarks))
		c.Marks = c.Marks[:maxMarks]
	}
	c.Legend = append(c.Legend, eventLegend(kinds)...)
	return c, notes
}

// timelineLines splits a run's timeline into a grey dashed warmup line and
// a coloured measured line, each a level per interval: a warmup of one
// interval (500ms of warmup is one) is still drawn.
func timelineLines(r results.Run, color string) []line {
	tip := fmt.Sprintf("%s, %s, %d clients, repeat %d (run %d)", r.Placement, r.Durability, r.Clients, r.Repeat, r.Seq)
	warm := line{Color: warmupColor, Dash: "5 4", Width: 1.5, Tip: tip + ", warmup", NoLegend: true, Steps: true}
	meas := line{Color: color, Width: 1.5, Tip: tip, NoLegend: true, Steps: true}
	for _, iv := range downsample(r.Timeline, maxTimelinePoints) {
		pt := point{X0: iv.T - iv.Length, X: iv.T, Y: iv.OpsS}
		if iv.Phase == phaseMeasured {
			meas.Points = append(meas.Points, pt)
		} else {
			warm.Points = append(warm.Points, pt)
		}
	}
	return []line{warm, meas}
}

// downsample merges runs of consecutive same-phase intervals so at most
// about limit remain; each merged interval's rate is its ops over its length.
func downsample(tl []results.Interval, limit int) []results.Interval {
	if len(tl) <= limit {
		return tl
	}
	k := (len(tl) + limit - 1) / limit
	var out []results.Interval
	for i := 0; i < len(tl); {
		acc := tl[i]
		j := i + 1
		for ; j < len(tl) && j < i+k && tl[j].Phase == acc.Phase; j++ {
			acc.T, acc.Length, acc.Ops = tl[j].T, acc.Length+tl[j].Length, acc.Ops+tl[j].Ops
		}
		if acc.Length > 0 {
			acc.OpsS = float64(acc.Ops) / acc.Length
		}
		out = append(out, acc)
		i = j
	}
	return out
}

// metricIntro says, when the workload has its own throughput figure, what
// the charts and tables count: "Throughput is tpmC: new_order ops per
// minute. ".
func (b *builder) metricIntro() string {
	m := b.st.Metric
	if m == nil {
		return ""
	}
	if m.Elapsed {
		return fmt.Sprintf("The figure is %s: the seconds one pass over the workload's operations takes (the sum of their mean times); lower is better, so the charts read downwards. ", m.Name)
	}
	per := "second"
	if m.PerMinute {
		per = "minute"
	}
	if m.PerOp > 1 {
		return fmt.Sprintf("Throughput is %s: %s ops per %s times %g (each op counts that many). ", m.Name, m.Op, per, m.PerOp)
	}
	return fmt.Sprintf("Throughput is %s: %s ops per %s. ", m.Name, m.Op, per)
}

// fasterSide says on which side of a 1.0 ratio the faster series lie.
func fasterSide(st *results.Study) string {
	if st.HigherIsBetter() {
		return "above"
	}
	return "below"
}
