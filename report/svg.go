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

// layout is a chart's geometry in SVG pixels. Every chart is drawn in two:
// wide, which a desktop report and the Markdown files show at its own size,
// and narrow, which a phone shows near its own size, so that the text stays
// about 11-12 px on screen either way instead of shrinking with the SVG.
type layout struct {
	// class names the layout in the markup, so the page's CSS shows one.
	class               string
	w, h                float64
	left, right, bottom float64
	titleY, legendTop   float64
	legendRowH          float64
	font, titleFont     float64
	// charW is the estimated width of one character at font, for legend
	// layout and squeezing.
	charW float64
	// minPlotH keeps a plot this tall however many legend rows there are:
	// the chart grows instead.
	minPlotH float64
	// thinPx averages the points of lines without markers that fall within
	// this many pixels of each other; 0 draws every point.
	thinPx float64
}

var (
	wideLayout = layout{class: "chart-wide", w: 760, h: 380, left: 72, right: 24, bottom: 50, titleY: 22,
		legendTop: 36, legendRowH: 18, font: 12, titleFont: 14, charW: 6.6, minPlotH: 200}
	narrowLayout = layout{class: "chart-narrow", w: 380, h: 320, left: 58, right: 12, bottom: 46, titleY: 20,
		legendTop: 32, legendRowH: 17, font: 12, titleFont: 13, charW: 6.6, minPlotH: 170, thinPx: 3}
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

// point is one data point of a line; CI, when set, draws a whisker. X0 is
// where the interval a step line's point stands for begins (its X ends it).
type point struct {
	X, Y float64
	X0   float64
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
	// Steps draws each point as a level over its interval [X0, X]: a rate
	// measured over an interval is drawn as what it is, not as a slope
	// between instants, and one interval alone is still a visible segment.
	Steps bool
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
	Title string
	X, Y  axis
	Lines []line
	Bars  []barSeries
	HRefs []ref
	VRefs []ref
	// Marks are engine events along X (marks.go), drawn under the lines.
	Marks  []mark
	Legend []legendEntry // nil derives it from Lines and Bars

	lay layout // the layout being drawn
}

// plot is the pixel rectangle of the data area.
type plot struct{ left, top, width, height float64 }

// SVG renders the chart as a standalone <svg> element in the wide layout.
func (c *chart) SVG() string { return c.render(wideLayout) }

// render draws the chart in layout l.
func (c *chart) render(l layout) string {
	c.lay = l
	c.fitAxes()
	legend := c.legend()
	rows := c.layoutLegend(legend)
	top := l.legendTop + float64(len(rows))*l.legendRowH + 10
	h := max(l.h, top+l.minPlotH+l.bottom)
	p := plot{left: l.left, top: top, width: l.w - l.left - l.right, height: h - top - l.bottom}
	var b strings.Builder
	svgOpen(&b, l, h)
	fmt.Fprintf(&b, `<title>%s</title><rect width="%g" height="%g" fill="#fff"/>`, esc(c.Title), l.w, h)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" font-size="%g" font-weight="bold"%s>%s</text>`,
		l.w/2, l.titleY, l.titleFont, squeeze(c.Title, l.w-16, l.charW*l.titleFont/l.font*1.05), esc(c.Title))
	c.drawLegend(&b, legend, rows)
	c.drawGrid(&b, p)
	c.drawBars(&b, p)
	c.drawMarks(&b, p)
	c.drawRefs(&b, p)
	c.drawLines(&b, p)
	c.drawAxes(&b, p)
	b.WriteString(`</svg>`)
	return b.String()
}

// svgOpen starts an <svg> of layout l, h tall, whose class lets the
// page's CSS show the one layout that fits the screen.
func svgOpen(b *strings.Builder, l layout, h float64) {
	fmt.Fprintf(b, `<svg xmlns="%s" class="%s" width="%g" height="%g" viewBox="0 0 %g %g" role="img" font-family="%s" font-size="%g">`,
		svgNS, l.class, l.w, h, l.w, h, fontStack, l.font)
}

// fitAxes sets both axes' domains from everything that will be drawn, CI
// bounds and reference lines included, so nothing is clipped.
func (c *chart) fitAxes() {
	var xs, ys []float64
	for _, l := range c.Lines {
		for _, pt := range l.Points {
			xs = append(xs, pt.X)
			if l.Steps {
				xs = append(xs, pt.X0)
			}
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
	l := c.lay
	var rows [][]float64
	x := l.left
	for i, e := range entries {
		w := 34 + l.charW*float64(utf8.RuneCountInString(e.Name)) + 14
		if i == 0 || x+w > l.w-l.right {
			rows = append(rows, nil)
			x = l.left
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], x)
		x += w
	}
	return rows
}

func (c *chart) drawLegend(b *strings.Builder, entries []legendEntry, rows [][]float64) {
	i := 0
	for r, xs := range rows {
		y := c.lay.legendTop + float64(r)*c.lay.legendRowH + 9
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
			// A name wider than the chart (a long tier path) is squeezed
			// rather than run off its edge.
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f"%s>%s</text>`, x+30, y+4, squeeze(e.Name, c.lay.w-c.lay.right-x-30, c.lay.charW), esc(e.Name))
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
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-weight="bold"%s>%s</text>`,
		p.left+p.width/2, bottom+c.lay.bottom-10, squeeze(c.X.Label, p.width, c.lay.charW*1.05), esc(c.X.Label))
	fmt.Fprintf(b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" font-weight="bold"%s>%s</text>`,
		p.top+p.height/2, squeeze(c.Y.Label, p.height, c.lay.charW*1.05), esc(c.Y.Label))
}

// squeeze fits a label longer than room (a long baseline name in the
// vertical axis title, a long title in the narrow layout) by compressing
// it instead of letting it be clipped; charW is one character's width.
func squeeze(label string, room, charW float64) string {
	if w := charW * float64(utf8.RuneCountInString(label)); w > room && room > 0 {
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
		pts := l.Points
		if !l.Markers {
			pts = c.thin(p, pts, l.Steps)
		}
		if d := c.pathData(p, pts, l.Steps); d != "" {
			fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="%g" stroke-linejoin="round"%s>`,
				d, l.Color, width, dashAttr(l.Dash))
			if l.Tip != "" {
				fmt.Fprintf(b, `<title>%s</title>`, esc(l.Tip))
			}
			b.WriteString(`</path>`)
		}
		for _, pt := range pts {
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

// thin averages consecutive points that fall within the layout's thinPx
// of each other (a step's level weighted by its interval's length), so a
// narrow chart draws what a pixel can show rather than every second of a
// long run. NaN points are kept: they break the line.
func (c *chart) thin(p plot, pts []point, steps bool) []point {
	px := c.lay.thinPx
	if px <= 0 || len(pts) == 0 {
		return pts
	}
	out := make([]point, 0, len(pts))
	bucket := math.Inf(-1)
	var acc point
	var sum, weight float64
	n := 0
	flush := func() {
		if n > 0 {
			acc.Y = sum / weight
			out = append(out, acc)
		}
		n, sum, weight = 0, 0, 0
	}
	for _, pt := range pts {
		if math.IsNaN(pt.Y) {
			flush()
			out = append(out, pt)
			bucket = math.Inf(-1)
			continue
		}
		k := math.Floor(p.x(&c.X, pt.X) / px)
		if n > 0 && k != bucket {
			flush()
		}
		w := 1.0
		if steps {
			w = math.Max(pt.X-pt.X0, 0)
		}
		if n == 0 {
			acc = pt
			if w == 0 {
				w = 1 // a zero-length step still counts once
			}
		}
		acc.X = pt.X
		sum += pt.Y * w
		weight += w
		bucket = k
		n++
	}
	flush()
	return out
}

// pathData is an SVG path through the points; NaN Y values start a new
// subpath so a missing group leaves a gap rather than a false line. A step
// line goes level over each point's interval, rising or falling where one
// interval meets the next, and leaves a gap where intervals do not meet.
func (c *chart) pathData(p plot, pts []point, steps bool) string {
	var b strings.Builder
	pen := false
	lastX := 0.0
	for _, pt := range pts {
		if math.IsNaN(pt.Y) {
			pen = false
			continue
		}
		x, y := p.x(&c.X, pt.X), p.y(&c.Y, pt.Y)
		if steps {
			// Vertical then horizontal moves: a step costs what a point
			// of a polyline does.
			x0 := p.x(&c.X, pt.X0)
			if pen && math.Abs(x0-lastX) < 0.5 {
				fmt.Fprintf(&b, "V%.1fH%.1f", y, x)
			} else {
				fmt.Fprintf(&b, "M%.1f %.1fH%.1f", x0, y, x)
			}
			pen, lastX = true, x
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&b, "%s%.1f %.1f", cmd, x, y)
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
