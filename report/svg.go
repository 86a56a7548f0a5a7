package report

// A small SVG chart renderer. Reports must open offline and be mailable, so
// charts are drawn in Go as plain SVG rather than by a JavaScript library:
// the same markup is inlined into the HTML report and written as .svg files
// next to the Markdown one. Everything user-provided that reaches the markup
// goes through esc.

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Chart geometry, in SVG pixels. Fixed so that every chart of a report lines
// up and the file size stays predictable.
const (
	chartW       = 760
	chartH       = 380
	marginLeft   = 72
	marginRight  = 24
	marginBottom = 50
	titleY       = 22
	legendTop    = 36
	legendRowH   = 18
	charW        = 6.6 // estimated width of a 12px character, for legend layout
)

// fontStack is a system font stack: no web font may be fetched.
const fontStack = `system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif`

// svgNS is the one URL allowed in a report: the SVG namespace, which makes
// the standalone .svg files valid XML. Nothing is fetched from it.
const svgNS = "http://www.w3.org/2000/svg"

// palette is Tableau 10: distinguishable colours that stay readable on white
// and in print.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
	"#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// warmupColor draws what is not measured, so the eye skips it.
const warmupColor = "#a0a0a0"

// scaleKind is how an axis maps data values to positions.
type scaleKind int

const (
	linearScale scaleKind = iota
	log10Scale
	// log2Scale spaces client counts evenly by doubling; its ticks are given.
	log2Scale
	// categoryScale places value i at the middle of the i-th of len(Categories) bands.
	categoryScale
)

// axis is one chart axis. Fit fills lo, hi and ticks from the data.
type axis struct {
	Label      string
	Scale      scaleKind
	Categories []string
	// Ticks are explicit tick values; nil picks nice ones.
	Ticks []float64
	// Format renders a tick value; nil uses fmtSI.
	Format func(float64) string
	// ZeroBased keeps 0 in a linear axis, so bar lengths and throughputs
	// are not exaggerated by a cut-off origin.
	ZeroBased bool
	// Tight ends a linear axis at the data rather than at the next nice
	// tick, for time axes where empty space past the end reads as a gap.
	Tight bool

	lo, hi float64
	ticks  []float64
}

// point is one data point of a line; CI, when set, draws a whisker.
type point struct {
	X, Y float64
	CI   *[2]float64
	Tip  string
}

// line is one series of a line chart. A NaN Y breaks the line.
type line struct {
	Name    string
	Color   string
	Dash    string
	Width   float64
	Markers bool
	// Tip is the tooltip of the whole line (used when there are no markers).
	Tip      string
	Points   []point
	NoLegend bool
}

// barValue is one bar; OK false leaves a gap (no data).
type barValue struct {
	V   float64
	CI  *[2]float64
	Tip string
	OK  bool
}

// barSeries is one bar per category of the X axis.
type barSeries struct {
	Name   string
	Color  string
	Values []barValue
}

// ref is a labelled reference line across the plot. HRefs are labelled in
// the legend, VRefs beside the line.
type ref struct {
	At    float64
	Label string
}

// legendEntry is one legend item; Dash and Marker mirror the line's style.
type legendEntry struct {
	Name   string
	Color  string
	Dash   string
	Marker bool
	Bar    bool
}

// chart is a line chart, a grouped bar chart (Bars over X.Categories), or
// both on the same axes.
type chart struct {
	Title  string
	X, Y   axis
	Lines  []line
	Bars   []barSeries
	HRefs  []ref
	VRefs  []ref
	Legend []legendEntry // nil derives it from Lines and Bars
}

// plot is the pixel rectangle of the data area.
type plot struct{ left, top, width, height float64 }

// SVG renders the chart as a standalone <svg> element.
func (c *chart) SVG() string {
	c.fitAxes()
	legend := c.legend()
	rows := c.layoutLegend(legend)
	top := float64(legendTop + len(rows)*legendRowH + 10)
	p := plot{left: marginLeft, top: top, width: chartW - marginLeft - marginRight,
		height: chartH - top - marginBottom}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="%s" width="%d" height="%d" viewBox="0 0 %d %d" role="img" font-family="%s" font-size="12">`,
		svgNS, chartW, chartH, chartW, chartH, fontStack)
	fmt.Fprintf(&b, `<title>%s</title><rect width="%d" height="%d" fill="#fff"/>`, esc(c.Title), chartW, chartH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`,
		chartW/2, titleY, esc(c.Title))
	c.drawLegend(&b, legend, rows)
	c.drawGrid(&b, p)
	c.drawBars(&b, p)
	c.drawRefs(&b, p)
	c.drawLines(&b, p)
	c.drawAxes(&b, p)
	b.WriteString(`</svg>`)
	return b.String()
}

// fitAxes sets both axes' domains from everything that will be drawn, CI
// bounds and reference lines included, so nothing is clipped.
func (c *chart) fitAxes() {
	var xs, ys []float64
	for _, l := range c.Lines {
		for _, pt := range l.Points {
			xs = append(xs, pt.X)
			ys = append(ys, pt.Y)
			if pt.CI != nil {
				ys = append(ys, pt.CI[0], pt.CI[1])
			}
		}
	}
	for _, s := range c.Bars {
		for _, v := range s.Values {
			if !v.OK {
				continue
			}
			ys = append(ys, v.V)
			if v.CI != nil {
				ys = append(ys, v.CI[0], v.CI[1])
			}
		}
	}
	for _, r := range c.HRefs {
		ys = append(ys, r.At)
	}
	for _, r := range c.VRefs {
		xs = append(xs, r.At)
	}
	c.X.fit(xs)
	c.Y.fit(ys)
}

// fit computes the axis domain and ticks from data values (NaNs ignored).
func (a *axis) fit(vals []float64) {
	if a.Scale == categoryScale {
		a.lo, a.hi = -0.5, float64(len(a.Categories))-0.5
		a.ticks = nil
		for i := range a.Categories {
			a.ticks = append(a.ticks, float64(i))
		}
		return
	}
	lo, hi, ok := finiteRange(vals, a.Scale != linearScale)
	if a.Ticks != nil {
		lo, hi, ok = finiteRangeWith(lo, hi, ok, a.Ticks, a.Scale != linearScale)
	}
	if !ok {
		lo, hi = 0, 1
		if a.Scale != linearScale {
			lo, hi = 1, 10
		}
	}
	switch a.Scale {
	case log10Scale:
		a.lo, a.hi, a.ticks = log10Ticks(lo, hi)
	case log2Scale:
		// Half a doubling of room either side keeps end points off the frame.
		a.lo, a.hi, a.ticks = lo/math.Sqrt2, hi*math.Sqrt2, a.Ticks
	default:
		if a.ZeroBased {
			lo, hi = math.Min(lo, 0), math.Max(hi, 0)
		}
		a.lo, a.hi, a.ticks = linearTicks(lo, hi)
		if a.Tight && hi > lo {
			a.lo, a.hi, a.ticks = lo, hi, within(a.ticks, lo, hi)
		}
	}
	if a.Ticks != nil && a.Scale != log2Scale {
		a.ticks = a.Ticks
	}
}

// within keeps the ticks inside [lo, hi].
func within(ticks []float64, lo, hi float64) []float64 {
	var out []float64
	for _, t := range ticks {
		if t >= lo-1e-9 && t <= hi+1e-9 {
			out = append(out, t)
		}
	}
	return out
}

// finiteRange is the min and max of the finite values (positive only when
// positive is set, for log axes).
func finiteRange(vals []float64, positive bool) (lo, hi float64, ok bool) {
	return finiteRangeWith(math.Inf(1), math.Inf(-1), false, vals, positive)
}

func finiteRangeWith(lo, hi float64, ok bool, vals []float64, positive bool) (float64, float64, bool) {
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) || (positive && v <= 0) {
			continue
		}
		lo, hi, ok = math.Min(lo, v), math.Max(hi, v), true
	}
	return lo, hi, ok
}

// linearTicks widens [lo, hi] to nice round bounds and returns about five
// ticks at a 1, 2 or 5 times a power of ten step.
func linearTicks(lo, hi float64) (float64, float64, []float64) {
	if hi == lo {
		pad := math.Max(math.Abs(lo)*0.1, 1)
		lo, hi = lo-pad, hi+pad
		if lo < 0 && lo+pad >= 0 {
			lo = 0
		}
	}
	step := niceStep((hi - lo) / 5)
	nlo, nhi := math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	var ticks []float64
	for i := 0; ; i++ {
		v := nlo + float64(i)*step
		if v > nhi+step/2 {
			break
		}
		ticks = append(ticks, v)
	}
	return nlo, nhi, ticks
}

// niceStep rounds raw up to 1, 2, 5 or 10 times a power of ten.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		return mag
	case f <= 2:
		return 2 * mag
	case f <= 5:
		return 5 * mag
	}
	return 10 * mag
}

// log10Ticks widens [lo, hi] to whole decades; with few decades it adds the
// 2 and 5 multiples so the axis still has enough labels to read.
func log10Ticks(lo, hi float64) (float64, float64, []float64) {
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi == dlo {
		dhi++
	}
	var ticks []float64
	for d := dlo; d <= dhi; d++ {
		base := math.Pow(10, d)
		ticks = append(ticks, base)
		if dhi-dlo <= 2 && d < dhi {
			ticks = append(ticks, 2*base, 5*base)
		}
	}
	return math.Pow(10, dlo), math.Pow(10, dhi), ticks
}

// frac maps a data value to 0..1 along the axis.
func (a *axis) frac(v float64) float64 {
	switch a.Scale {
	case log10Scale, log2Scale:
		if v <= 0 {
			return 0
		}
		return (math.Log(v) - math.Log(a.lo)) / (math.Log(a.hi) - math.Log(a.lo))
	}
	return (v - a.lo) / (a.hi - a.lo)
}

func (a *axis) format(v float64) string {
	if a.Scale == categoryScale {
		i := int(v)
		if i >= 0 && i < len(a.Categories) {
			return a.Categories[i]
		}
		return ""
	}
	if a.Format != nil {
		return a.Format(v)
	}
	return fmtSI(v)
}

func (p plot) x(a *axis, v float64) float64 { return p.left + a.frac(v)*p.width }
func (p plot) y(a *axis, v float64) float64 { return p.top + (1-a.frac(v))*p.height }

// legend returns the explicit legend or one entry per named series.
func (c *chart) legend() []legendEntry {
	if c.Legend != nil {
		return c.Legend
	}
	var out []legendEntry
	for _, s := range c.Bars {
		out = append(out, legendEntry{Name: s.Name, Color: s.Color, Bar: true})
	}
	for _, l := range c.Lines {
		if l.Name != "" && !l.NoLegend {
			out = append(out, legendEntry{Name: l.Name, Color: l.Color, Dash: l.Dash, Marker: l.Markers})
		}
	}
	for _, r := range c.HRefs {
		out = append(out, legendEntry{Name: r.Label, Color: refColor, Dash: refDash})
	}
	return out
}

// layoutLegend flows entries left to right, wrapping at the chart width;
// it returns the entries' x positions per row.
func (c *chart) layoutLegend(entries []legendEntry) [][]float64 {
	var rows [][]float64
	x := float64(marginLeft)
	for i, e := range entries {
		w := 34 + charW*float64(utf8.RuneCountInString(e.Name)) + 14
		if i == 0 || x+w > chartW-marginRight {
			rows = append(rows, nil)
			x = marginLeft
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], x)
		x += w
	}
	return rows
}

func (c *chart) drawLegend(b *strings.Builder, entries []legendEntry, rows [][]float64) {
	i := 0
	for r, xs := range rows {
		y := float64(legendTop + r*legendRowH + 9)
		for _, x := range xs {
			e := entries[i]
			i++
			switch {
			case e.Bar:
				fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="24" height="10" fill="%s"/>`, x, y-5, e.Color)
			default:
				fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`,
					x, y, x+24, y, e.Color, dashAttr(e.Dash))
				if e.Marker {
					fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`, x+12, y, e.Color)
				}
			}
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`, x+30, y+4, esc(e.Name))
		}
	}
}

// drawGrid draws light horizontal grid lines at the Y ticks and, except for
// categories, vertical ones at the X ticks.
func (c *chart) drawGrid(b *strings.Builder, p plot) {
	for _, t := range c.Y.ticks {
		y := p.y(&c.Y, t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, p.left, y, p.left+p.width, y)
	}
	if c.X.Scale == categoryScale {
		return
	}
	for _, t := range c.X.ticks {
		x := p.x(&c.X, t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f0f0f0"/>`, x, p.top, x, p.top+p.height)
	}
}

// drawAxes draws the frame, tick labels and axis titles.
func (c *chart) drawAxes(b *strings.Builder, p plot) {
	bottom := p.top + p.height
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#888"/>`, p.left, p.top, p.width, p.height)
	for _, t := range c.Y.ticks {
		y := p.y(&c.Y, t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, p.left-4, y, p.left, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, p.left-7, y+4, esc(c.Y.format(t)))
	}
	for _, t := range c.X.ticks {
		x := p.x(&c.X, t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, x, bottom, x, bottom+4)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, bottom+18, esc(c.X.format(t)))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-weight="bold">%s</text>`,
		p.left+p.width/2, bottom+40, esc(c.X.Label))
	fmt.Fprintf(b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" font-weight="bold"%s>%s</text>`,
		p.top+p.height/2, squeeze(c.Y.Label, p.height), esc(c.Y.Label))
}

// squeeze fits a label longer than room (a long baseline name in the
// vertical axis title) by compressing it instead of letting it be clipped.
func squeeze(label string, room float64) string {
	if w := charW * 1.05 * float64(utf8.RuneCountInString(label)); w > room {
		return fmt.Sprintf(` textLength="%.0f" lengthAdjust="spacingAndGlyphs"`, room)
	}
	return ""
}

// drawLines draws each line as one path (broken at NaNs), then its CI
// whiskers and markers with tooltips.
func (c *chart) drawLines(b *strings.Builder, p plot) {
	for _, l := range c.Lines {
		width := l.Width
		if width == 0 {
			width = 2
		}
		if d := c.pathData(p, l.Points); d != "" {
			fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="%g" stroke-linejoin="round"%s>`,
				d, l.Color, width, dashAttr(l.Dash))
			if l.Tip != "" {
				fmt.Fprintf(b, `<title>%s</title>`, esc(l.Tip))
			}
			b.WriteString(`</path>`)
		}
		for _, pt := range l.Points {
			if math.IsNaN(pt.Y) {
				continue
			}
			x := p.x(&c.X, pt.X)
			if pt.CI != nil {
				whisker(b, x, p.y(&c.Y, pt.CI[0]), p.y(&c.Y, pt.CI[1]), l.Color)
			}
			if l.Markers {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="#fff"><title>%s</title></circle>`,
					x, p.y(&c.Y, pt.Y), l.Color, esc(pt.Tip))
			}
		}
	}
}

// pathData is an SVG path through the points; NaN Y values start a new
// subpath so a missing group leaves a gap rather than a false line.
func (c *chart) pathData(p plot, pts []point) string {
	var b strings.Builder
	pen := false
	for _, pt := range pts {
		if math.IsNaN(pt.Y) {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&b, "%s%.1f %.1f", cmd, p.x(&c.X, pt.X), p.y(&c.Y, pt.Y))
		pen = true
	}
	return b.String()
}

// whisker draws a vertical CI whisker with caps.
func whisker(b *strings.Builder, x, y1, y2 float64, color string) {
	fmt.Fprintf(b, `<path d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f" stroke="%s" stroke-width="1.5" fill="none"/>`,
		x, y1, y2, x-4, y1, x+4, x-4, y2, x+4, color)
}

// drawBars draws grouped bars: within each category band, one bar per
// series, from the axis origin (0, or the bottom of a log axis).
func (c *chart) drawBars(b *strings.Builder, p plot) {
	n := len(c.X.Categories)
	if n == 0 || len(c.Bars) == 0 {
		return
	}
	band := p.width / float64(n)
	bw := band * 0.8 / float64(len(c.Bars))
	base := math.Max(c.Y.lo, 0)
	if c.Y.Scale == log10Scale {
		base = c.Y.lo
	}
	y0 := p.y(&c.Y, base)
	for si, s := range c.Bars {
		for ci, v := range s.Values {
			if !v.OK || ci >= n {
				continue
			}
			x := p.left + band*float64(ci) + band*0.1 + bw*float64(si)
			y := p.y(&c.Y, v.V)
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.85"><title>%s</title></rect>`,
				x+1, math.Min(y, y0), math.Max(bw-2, 1), math.Abs(y0-y), s.Color, esc(v.Tip))
			if v.CI != nil {
				whisker(b, x+bw/2, p.y(&c.Y, v.CI[0]), p.y(&c.Y, v.CI[1]), "#222")
			}
		}
	}
}

// halo outlines text in white so a label stays readable over bars and lines.
const halo = ` stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"`

// Horizontal reference lines are labelled in the legend, not over the bars
// they cross.
const (
	refColor = "#333"
	refDash  = "6 4"
)

// drawRefs draws dashed reference lines; vertical ones carry their label.
func (c *chart) drawRefs(b *strings.Builder, p plot) {
	for _, r := range c.HRefs {
		y := p.y(&c.Y, r.At)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"><title>%s</title></line>`,
			p.left, y, p.left+p.width, y, refColor, refDash, esc(r.Label))
	}
	for _, r := range c.VRefs {
		x := p.x(&c.X, r.At)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-width="1.5" stroke-dasharray="4 3"/>`,
			x, p.top, x, p.top+p.height)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#555"%s>%s</text>`, x+4, p.top+14, halo, esc(r.Label))
	}
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, dash)
}

// esc escapes text for SVG and HTML alike: html.EscapeString emits only the
// five XML-safe entities, so the result is valid in a standalone .svg too.
func esc(s string) string { return html.EscapeString(s) }

// roundSig rounds to 3 significant figures and prints without exponent or
// trailing zeros, so tick labels read 0.3 rather than 0.30000000000000004.
func roundSig(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// fmtSI prints a count with a k/M/G suffix: 1500 is 1.5k.
func fmtSI(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return roundSig(v/1e9) + "G"
	case a >= 1e6:
		return roundSig(v/1e6) + "M"
	case a >= 1e3:
		return roundSig(v/1e3) + "k"
	}
	return roundSig(v)
}

// fmtMicrosTick prints microseconds compactly for tick labels: 1ms, 20µs.
func fmtMicrosTick(us float64) string {
	switch {
	case us >= 1e6:
		return roundSig(us/1e6) + "s"
	case us >= 1e3:
		return roundSig(us/1e3) + "ms"
	case us >= 1:
		return roundSig(us) + "µs"
	}
	return roundSig(us*1e3) + "ns"
}

// fmtRatio prints a ratio tick: 1.5x.
func fmtRatio(v float64) string { return roundSig(v) + "x" }
