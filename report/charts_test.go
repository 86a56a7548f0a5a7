package report

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

func TestLinearTicksAreNice(t *testing.T) {
	lo, hi, ticks := linearTicks(0, 9300)
	if lo != 0 || hi != 10000 || !reflect.DeepEqual(ticks, []float64{0, 2000, 4000, 6000, 8000, 10000}) {
		t.Errorf("got %v %v %v", lo, hi, ticks)
	}
	lo, hi, _ = linearTicks(5, 5)
	if !(lo < 5 && hi > 5) {
		t.Errorf("a single value gets no room: %v-%v", lo, hi)
	}
}

func TestLog10TicksCoverDecades(t *testing.T) {
	lo, hi, ticks := log10Ticks(35, 4200)
	if lo != 10 || hi != 10000 {
		t.Errorf("domain %v-%v, want 10-10000", lo, hi)
	}
	if ticks[0] != 10 || ticks[len(ticks)-1] != 10000 {
		t.Errorf("ticks %v", ticks)
	}
	_, _, few := log10Ticks(3, 7)
	if !reflect.DeepEqual(few, []float64{1, 2, 5, 10}) {
		t.Errorf("within one decade want 1 2 5 10, got %v", few)
	}
}

func TestTickFormats(t *testing.T) {
	cases := map[string]string{fmtSI(2500): "2.5k", fmtSI(0.30000000000000004): "0.3", fmtSI(1.2e6): "1.2M",
		fmtMicrosTick(1000): "1ms", fmtMicrosTick(20): "20µs", fmtMicrosTick(0.5): "500ns", fmtRatio(1.5): "1.5x"}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestLineBreaksAtMissingPoints(t *testing.T) {
	c := &chart{Title: "t", X: axis{Scale: linearScale}, Y: axis{Scale: linearScale},
		Lines: []line{{Name: "a", Color: "#000", Points: []point{{X: 1, Y: 1}, {X: 2, Y: math.NaN()}, {X: 3, Y: 3}}}}}
	svg := c.SVG()
	if strings.Count(svg, `d="M`) != 1 || strings.Count(svg, "M") < 2 || strings.Contains(svg, "NaN") {
		t.Errorf("want one path with two subpaths and no NaN:\n%s", svg)
	}
}

func TestChartEscapesText(t *testing.T) {
	c := &chart{Title: `a<b & "c"`, X: axis{Scale: categoryScale, Categories: []string{"<x>"}, Label: "&"},
		Y: axis{Label: "y"}, Bars: []barSeries{{Name: "<s>", Color: "#000", Values: []barValue{{V: 1, OK: true, Tip: "<t>"}}}}}
	svg := c.SVG()
	for _, bad := range []string{"<b", "<x>", "<s>", "<t>", `"c"`} {
		if strings.Contains(svg, bad) {
			t.Errorf("unescaped %q in %s", bad, svg)
		}
	}
	if err := wellFormed([]byte(svg)); err != nil {
		t.Error(err)
	}
}

func TestDownsampleKeepsRateAndPhases(t *testing.T) {
	var tl []results.Interval
	for i := range 1000 {
		phase := "measured"
		if i < 100 {
			phase = "warmup"
		}
		tl = append(tl, results.Interval{T: float64(i + 1), Length: 1, Phase: phase, Ops: 500, OpsS: 500})
	}
	out := downsample(tl, 200)
	if len(out) > 205 {
		t.Errorf("%d points, want about 200", len(out))
	}
	for _, iv := range out {
		if iv.OpsS != 500 {
			t.Fatalf("merged rate %v, want 500", iv.OpsS)
		}
	}
	if out[len(out)-1].T != 1000 {
		t.Errorf("last point at %v, want 1000", out[len(out)-1].T)
	}
}

func TestUniqueSlug(t *testing.T) {
	b := &builder{slugs: map[string]int{}}
	got := []string{b.uniqueSlug("throughput-Sync!"), b.uniqueSlug("throughput-sync"), b.uniqueSlug("../..")}
	want := []string{"throughput-sync", "throughput-sync-2", "chart"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
