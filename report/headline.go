package report

// The headline chart, the one chart on the report's first screen: every
// ratio the answer states, at a glance. One row per series that is not a
// baseline and durability mode, at the headline client count: its paired
// ratio as a dot, its 95% CI as a whisker, on a log axis (ratios multiply,
// so 0.5x and 2x lie as far from 1x) with the baseline's 1x dashed. In the
// wide layout each row's words stand in a column left of the plot, one
// short row each; in the narrow one above its whisker across the chart's
// width, which a phone has too little of for a column.

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// headlineRow is one ratio of the headline chart; Ratio 0 draws no dot.
type headlineRow struct {
	// Name says which comparison, "wal-ram (sync)"; Value its ratio, CI
	// and verdict, or why it has none.
	Name    string
	Value   string
	Color   string
	Ratio   float64
	CI      *[2]float64
	Verdict string
	Tip     string
}

// headlineChart is the chart's content, drawn by render in either layout.
type headlineChart struct {
	Title string
	// Axis names what the ratio is of and which side is faster.
	Axis string
	Rows []headlineRow
}

// Headline geometry on top of a layout's width and fonts.
const (
	headRowH      = 40 // a narrow row: its words, then its whisker
	headLineH     = 15 // a second line of words in a narrow row
	headColumnRow = 26 // a wide row: words and whisker side by side
	headTop       = 34 // below the title
	headBottom    = 44 // tick labels and the axis title
	// headColumnMin is the narrowest layout with a column of words.
	headColumnMin = 600
)

// headline builds the headline chart at the report's headline client
// count, or nil when the study compares nothing (one placement).
func (b *builder) headline() *headlineChart {
	h := &headlineChart{
		Title: fmt.Sprintf("%s relative to %s at %s", upperFirst(throughputNoun(b.st)), baselineShort(b.st), clientsText(b.clients)),
		Axis:  fmt.Sprintf("ratio to %s (log scale); %s 1x is faster", baselineShort(b.st), map[bool]string{true: "right of", false: "left of"}[b.st.HigherIsBetter()]),
	}
	for _, d := range b.st.Durability {
		for _, p := range b.st.Placements {
			if b.st.IsBaseline(p) || p.CrashRun() {
				// A crash run's throughput ends at its crash: the crash
				// trade-off answers for it, not a ratio (as in the answer).
				continue
			}
			g := b.group(p.Name, d, b.clients)
			if g == nil {
				continue
			}
			r := headlineRow{Name: fmt.Sprintf("%s (%s)", shownName(p.Name), d), Color: markColor(g.Verdict), Verdict: g.Verdict}
			if b.notDurable(p) {
				// The ratio of a placement a power cut empties is not a
				// free win: the chart says so where the ratio stands.
				r.Name = fmt.Sprintf("%s (%s, not durable)", shownName(p.Name), d)
			}
			switch {
			case g.Ratio > 0 && g.Verdict != stats.NoData && g.RatioCI != nil:
				r.Ratio, r.CI = g.Ratio, g.RatioCI
				r.Value = ratioCI(g) + " " + g.Verdict
			case g.Ratio > 0 && g.Verdict != stats.NoData:
				// Short, for a row: the answer's line says how to get one.
				r.Ratio = g.Ratio
				r.Value = fmt.Sprintf("%.2fx (no CI: %d round%s) %s", g.Ratio, g.Pairs, plural(g.Pairs), g.Verdict)
				if g.Why != "" {
					r.Value = fmt.Sprintf("%.2fx (no CI: no spread) %s", g.Ratio, g.Verdict)
				}
			default:
				r.Value = RatioText(g)
			}
			r.Tip = fmt.Sprintf("%s, %s, %s: %s", shownName(p.Name), d, clientsText(b.clients), RatioText(g))
			h.Rows = append(h.Rows, r)
		}
	}
	if len(h.Rows) == 0 {
		return nil
	}
	return h
}

// notDurable is true when a component of p is on a tier that is not
// durable.
func (b *builder) notDurable(p results.Placement) bool {
	for _, tier := range p.Components {
		if t, ok := b.st.Tiers[tier]; ok && !t.Durable {
			return true
		}
	}
	return false
}

// upperFirst capitalises a title's first letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// markColor paints a row's dot and whisker by its verdict alone: no
// colour says more than the verdict (a placement's palette colour could
// draw an inconclusive ratio in red).
func markColor(v string) string {
	switch v {
	case stats.Better, stats.Worse:
		return verdictColor(v)
	}
	return "#888"
}

// verdictColor paints a verdict's words as the tables do.
func verdictColor(v string) string {
	switch v {
	case stats.Better:
		return "#1a7f37"
	case stats.Worse:
		return "#c62828"
	}
	return "#444"
}

// render draws the chart in layout l.
func (h *headlineChart) render(l layout) string {
	textW := func(s string) float64 { return l.charW * 1.05 * float64(utf8.RuneCountInString(s)) }
	rowH, words := float64(headRowH), 0.0
	if l.w >= headColumnMin {
		rowH = headColumnRow
		// One line per row if that fits in half the width, else the
		// column narrows to the longer of each row's two lines.
		var full, split float64
		for _, r := range h.Rows {
			full = max(full, textW(r.Name+": "+r.Value))
			split = max(split, textW(r.Name+":"), textW(r.Value))
		}
		words = full + 12
		if words > l.w/2 {
			words = min(split+12, l.w/2)
		}
	}
	// A row whose words do not fit one line puts its figures on a second,
	// rather than squeezing them past reading.
	width := l.w - 28 - words
	room := width
	if words > 0 {
		room = words - 12
	}
	wrap := make([]bool, len(h.Rows))
	rowTop := make([]float64, len(h.Rows)+1)
	for i, r := range h.Rows {
		rowTop[i+1] = rowTop[i] + rowH
		if textW(r.Name+": "+r.Value) > room {
			wrap[i] = true
			rowTop[i+1] += headLineH
		}
	}
	ax := axis{Scale: log10Scale}
	p := plot{left: 14 + words, top: headTop, width: width, height: rowTop[len(h.Rows)]}
	ax.lo, ax.hi, ax.ticks = ratioDomain(h.Rows, max(3, int(p.width/70)))
	height := p.top + p.height + headBottom
	var b strings.Builder
	svgOpen(&b, l, height)
	fmt.Fprintf(&b, `<title>%s</title><rect width="%g" height="%g" fill="#fff"/>`, esc(h.Title), l.w, height)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" font-size="%g" font-weight="bold"%s>%s</text>`,
		l.w/2, l.titleY, l.titleFont, squeeze(h.Title, l.w-16, l.charW*l.titleFont/l.font*1.05), esc(h.Title))
	bottom := p.top + p.height
	for _, t := range ax.ticks {
		x := p.x(&ax, t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e8e8e8"/>`, x, p.top, x, bottom)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, x, bottom, x, bottom+4)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, bottom+17, esc(fmtRatio(t)))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, p.left, bottom, p.left+p.width, bottom)
	one := p.x(&ax, 1)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"/>`,
		one, p.top, one, bottom, refColor, refDash)
	for i, r := range h.Rows {
		y := p.top + rowTop[i]
		// Words above the whisker (narrow), or beside it in their column.
		tx, ty, wy := p.left, y+14, y+29
		if words > 0 {
			tx, ty, wy = 14, y+rowH/2+4, y+(rowTop[i+1]-rowTop[i])/2
		}
		fmt.Fprintf(&b, `<g><title>%s</title>`, esc(r.Tip))
		if wrap[i] {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f"%s%s>%s:</text>`, tx, ty, halo, squeeze(r.Name+":", room, l.charW*1.05), esc(r.Name))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s" font-weight="bold"%s%s>%s</text>`,
				tx, ty+headLineH, verdictColor(r.Verdict), halo, squeeze(r.Value, room, l.charW*1.1), esc(r.Value))
			if words == 0 {
				wy += headLineH
			}
		} else {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f"%s%s>%s: <tspan fill="%s" font-weight="bold">%s</tspan></text>`,
				tx, ty, halo, squeeze(r.Name+": "+r.Value, room, l.charW*1.05), esc(r.Name), verdictColor(r.Verdict), esc(r.Value))
		}
		if r.Ratio > 0 {
			if r.CI != nil {
				x0, x1 := p.x(&ax, r.CI[0]), p.x(&ax, r.CI[1])
				fmt.Fprintf(&b, `<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f" stroke="%s" stroke-width="2" fill="none"/>`,
					x0, wy, x1, x0, wy-5, wy+5, x1, wy-5, wy+5, r.Color)
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="#fff"/>`, p.x(&ax, r.Ratio), wy, r.Color)
		}
		b.WriteString(`</g>`)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle"%s>%s</text>`,
		p.left+p.width/2, bottom+36, squeeze(h.Axis, p.width, l.charW), esc(h.Axis))
	b.WriteString(`</svg>`)
	return b.String()
}

// ratioDomain is a log axis around every ratio, CI and 1x, with at most
// most ticks at round ratios (1x always among them when in range).
func ratioDomain(rows []headlineRow, most int) (lo, hi float64, ticks []float64) {
	lo, hi = 1, 1
	for _, r := range rows {
		if r.Ratio <= 0 {
			continue
		}
		lo, hi = math.Min(lo, r.Ratio), math.Max(hi, r.Ratio)
		if r.CI != nil && r.CI[0] > 0 {
			lo, hi = math.Min(lo, r.CI[0]), math.Max(hi, r.CI[1])
		}
	}
	// A little room either side keeps a whisker's cap off the frame.
	lo, hi = lo/1.06, hi*1.06
	if hi/lo < 2.5 {
		// Within a factor of 2.5 round linear steps (1.2x, 1.4x) read
		// better than the few round ratios (1x, 2x) a log axis has there.
		_, _, lin := linearTicks(lo, hi)
		return lo, hi, thinTicks(within(lin, lo, hi), most)
	}
	for _, mults := range [][]float64{{1, 1.5, 2, 3, 5, 7}, {1, 2, 5}, {1, 3}, {1}} {
		var ts []float64
		for d := math.Floor(math.Log10(lo)) - 1; d <= math.Ceil(math.Log10(hi)); d++ {
			for _, m := range mults {
				if v := m * math.Pow(10, d); v >= lo && v <= hi {
					ts = append(ts, v)
				}
			}
		}
		if len(ts) <= most {
			return lo, hi, ts
		}
	}
	return lo, hi, thinTicks([]float64{lo, 1, hi}, most)
}

// thinTicks keeps every k-th tick so that at most most remain, keeping 1x
// when it is among them.
func thinTicks(ts []float64, most int) []float64 {
	if len(ts) <= most || most <= 0 {
		return ts
	}
	k := (len(ts) + most - 1) / most
	one := -1
	for i, t := range ts {
		if math.Abs(t-1) < 1e-9 {
			one = i
		}
	}
	off := 0
	if one >= 0 {
		off = one % k
	}
	var out []float64
	for i := off; i < len(ts); i += k {
		out = append(out, ts[i])
	}
	return out
}
