package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
)

// Engine events (checkpoints, flushes, compactions, a crash run's crash
// and recovery) are drawn on the throughput timelines as marks: a thin
// vertical line at a moment, a light band over an event that took time,
// coloured by kind, each with a tooltip of what the engine said.

// mark is one event on a chart's X axis, from X0 to X (equal: a moment).
type mark struct {
	X0, X float64
	Color string
	Tip   string
}

// eventColors tell kinds of events apart; none is a placement's colour
// (palette) or the warmup's grey.
var eventColors = map[string]string{
	engine.EventCheckpoint: "#6a3d9a",
	engine.EventFlush:      "#1b9e77",
	engine.EventCompaction: "#d95f02",
	engine.EventSnapshot:   "#e7298a",
	engine.EventCrash:      "#000000",
	engine.EventRecovery:   "#666666",
}

// otherEventColor draws a kind an engine names that has no colour here.
const otherEventColor = "#a6761d"

// maxMarks caps the events drawn on one chart (a compaction storm of a
// long run), so that the chart stays readable and the report small.
const maxMarks = 400

func eventColor(kind string) string {
	if c, ok := eventColors[kind]; ok {
		return c
	}
	return otherEventColor
}

// eventMarks are run r's events as marks, and the kinds among them.
func eventMarks(r results.Run) ([]mark, []string) {
	var out []mark
	var kinds []string
	for _, e := range r.Events {
		tip := fmt.Sprintf("%s, run %d: %s at %ss", r.Placement, r.Seq, e.Kind, roundSig(e.T))
		if e.DurationS > 0 {
			tip += fmt.Sprintf(" for %ss", roundSig(e.DurationS))
		}
		if e.Detail != "" {
			tip += ": " + e.Detail
		}
		out = append(out, mark{X0: e.T, X: e.T + e.DurationS, Color: eventColor(e.Kind), Tip: tip})
		if !slices.Contains(kinds, e.Kind) {
			kinds = append(kinds, e.Kind)
		}
	}
	return out, kinds
}

// eventLegend names each kind drawn, in a fixed order.
func eventLegend(kinds []string) []legendEntry {
	slices.SortFunc(kinds, func(a, b string) int { return strings.Compare(a, b) })
	var out []legendEntry
	for _, k := range kinds {
		out = append(out, legendEntry{Name: "event: " + k, Color: eventColor(k), Dash: "2 2"})
	}
	return out
}

// drawMarks draws each mark within the X axis's domain across the plot:
// a band at least 2 px wide for an event that took time, else a line.
func (c *chart) drawMarks(b *strings.Builder, p plot) {
	for _, m := range c.Marks {
		if m.X < c.X.lo || m.X0 > c.X.hi {
			continue
		}
		x0, x1 := p.x(&c.X, math.Max(m.X0, c.X.lo)), p.x(&c.X, math.Min(m.X, c.X.hi))
		if x1-x0 >= 2 {
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.18"><title>%s</title></rect>`,
				x0, p.top, x1-x0, p.height, m.Color, esc(m.Tip))
			continue
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-opacity="0.7" stroke-dasharray="2 2"><title>%s</title></line>`,
			x0, p.top, x0, p.top+p.height, m.Color, esc(m.Tip))
	}
}

// appendNew appends the values of vs that s does not hold yet.
func appendNew(s []string, vs ...string) []string {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}
