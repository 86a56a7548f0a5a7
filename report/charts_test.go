package report

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
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

// TestStepLineDrawsEachInterval: a rate measured over an interval is drawn
// as a level across it, so a line of one interval (a 500ms warmup) is a
// visible segment, and intervals that meet join without a slope.
func TestStepLineDrawsEachInterval(t *testing.T) {
	one := &chart{Title: "t", X: axis{ZeroBased: true}, Y: axis{ZeroBased: true},
		Lines: []line{{Color: "#000", Steps: true, Points: []point{{X0: 0, X: 0.5, Y: 800}}}}}
	if d := regexp.MustCompile(` d="(M[0-9.]+ [0-9.]+H[0-9.]+)"`).FindStringSubmatch(one.SVG()); d == nil {
		t.Errorf("one interval draws no level segment:\n%s", one.SVG())
	}
	two := &chart{Title: "t", X: axis{ZeroBased: true}, Y: axis{ZeroBased: true},
		Lines: []line{{Color: "#000", Steps: true, Points: []point{{X0: 0, X: 1, Y: 800}, {X0: 1, X: 1.5, Y: 400}}}}}
	svg := two.SVG()
	if !regexp.MustCompile(` d="M[0-9.]+ [0-9.]+H[0-9.]+V[0-9.]+H[0-9.]+"`).MatchString(svg) {
		t.Errorf("two intervals that meet are not one stepped path:\n%s", svg)
	}
}

// TestNarrowLayoutAveragesDenseLines: a long run's line is averaged to
// what the narrow chart's pixels can show, keeping its level.
func TestNarrowLayoutAveragesDenseLines(t *testing.T) {
	var pts []point
	for i := range 600 {
		pts = append(pts, point{X0: float64(i), X: float64(i + 1), Y: 500})
	}
	c := &chart{Title: "t", X: axis{ZeroBased: true, Tight: true}, Y: axis{ZeroBased: true},
		Lines: []line{{Color: "#000", Steps: true, Points: pts}}}
	c.lay = narrowLayout
	c.fitAxes()
	p := plot{left: narrowLayout.left, width: narrowLayout.w - narrowLayout.left - narrowLayout.right, height: 100}
	thin := c.thin(p, pts, true)
	if most := int(p.width/narrowLayout.thinPx) + 2; len(thin) > most {
		t.Errorf("%d points left, want at most %d", len(thin), most)
	}
	for _, pt := range thin {
		if pt.Y != 500 {
			t.Fatalf("averaged level %v, want 500", pt.Y)
		}
	}
	if thin[0].X0 != 0 || thin[len(thin)-1].X != 600 {
		t.Errorf("thinned line spans %v-%v, want 0-600", thin[0].X0, thin[len(thin)-1].X)
	}
}

// TestTimelineLegendNamesOnlyDrawnWarmup: the warmup entry is in the
// legend when warmup intervals are drawn (as a dashed grey line), and not
// when a study measured without warmup.
func TestTimelineLegendNamesOnlyDrawnWarmup(t *testing.T) {
	f := newFixture(defaultOpts())
	b := &builder{in: f.input(), st: f.st, a: f.input().Analysis, colors: map[string]string{}, slugs: map[string]int{}}
	c, _ := b.timelineChart("sync", 4)
	if !hasLegend(c, "warmup (not measured)") || !strings.Contains(c.SVG(), `stroke="`+warmupColor+`" stroke-width="1.5" stroke-linejoin="round" stroke-dasharray="5 4"`) {
		t.Error("warmup drawn but not both in the legend and on the chart")
	}
	for i := range f.runs {
		var measured []results.Interval
		for _, iv := range f.runs[i].Timeline {
			if iv.Phase == phaseMeasured {
				measured = append(measured, iv)
			}
		}
		f.runs[i].Timeline = measured
	}
	f.st.WarmupS = 0
	b = &builder{in: f.input(), st: f.st, a: f.input().Analysis, colors: map[string]string{}, slugs: map[string]int{}}
	c, _ = b.timelineChart("sync", 4)
	if hasLegend(c, "warmup (not measured)") {
		t.Error("the legend names a warmup line that is not drawn")
	}
}

func hasLegend(c *chart, name string) bool {
	for _, e := range c.Legend {
		if e.Name == name {
			return true
		}
	}
	return false
}

// TestShortWindowDeviceChart: a measured window of a few seconds has a
// few telemetry samples per device; the chart draws each as a level over
// its interval and says why there are so few.
func TestShortWindowDeviceChart(t *testing.T) {
	o := defaultOpts()
	o.seconds = 2
	f := newFixture(o)
	d, err := buildDoc(f.input())
	if err != nil {
		t.Fatal(err)
	}
	var tel chartSection
	for _, s := range d.Sections {
		if s.ID == "chart-telemetry" {
			tel = s
		}
	}
	if len(tel.Charts) == 0 {
		t.Fatal("no device charts")
	}
	want := fmt.Sprintf("The measured window is %s, so each device has %d samples here", fmtSeconds(f.st.DurationS), o.seconds)
	for _, c := range tel.Charts {
		if len(c.Notes) == 0 || !strings.HasPrefix(c.Notes[0], want) {
			t.Errorf("%s: notes %q, want %q", c.Title, c.Notes, want)
		}
		if !regexp.MustCompile(` d="M[0-9.]+ [0-9.]+H[0-9.]+V[0-9.]+H[0-9.]+"`).MatchString(c.SVG) {
			t.Errorf("%s: the samples are not drawn as levels", c.Title)
		}
	}
}

// TestTimelineDrawsEngineEvents: the events of the first run of each
// placement are marks on its timeline, a band for one that took time and
// a line for a moment, each kind named in the legend and each mark's
// tooltip saying what the engine said; a study without events has no
// event in its legend.
func TestTimelineDrawsEngineEvents(t *testing.T) {
	f := newFixture(defaultOpts())
	b := &builder{in: f.input(), st: f.st, a: f.input().Analysis, colors: map[string]string{}, slugs: map[string]int{}}
	c, _ := b.timelineChart("sync", 4)
	for _, e := range c.Legend {
		if strings.HasPrefix(e.Name, "event: ") {
			t.Errorf("legend names %q of a study without events", e.Name)
		}
	}
	for i := range f.runs {
		r := &f.runs[i]
		r.Events = []results.Event{
			{T: 3, DurationS: 1.5, Kind: "checkpoint", Detail: "time: wrote 42 buffers (0.3%)"},
			{T: 5.5, Kind: "crash", Detail: "process crash"},
		}
	}
	b = &builder{in: f.input(), st: f.st, a: f.input().Analysis, colors: map[string]string{}, slugs: map[string]int{}}
	c, _ = b.timelineChart("sync", 4)
	svg := c.SVG()
	for _, want := range []string{"event: checkpoint", "event: crash"} {
		if !hasLegend(c, want) {
			t.Errorf("legend lacks %q", want)
		}
	}
	placements := 0
	for _, p := range f.st.Placements {
		if g := b.group(p.Name, "sync", 4); g != nil && len(g.Runs) > 0 {
			placements++
		}
	}
	if len(c.Marks) != 2*placements {
		t.Errorf("%d marks, want the 2 events of the first run of each of %d placements", len(c.Marks), placements)
	}
	band := `fill="` + eventColor("checkpoint") + `" fill-opacity="0.18"><title>`
	line := `stroke="` + eventColor("crash") + `" stroke-width="1.5" stroke-opacity="0.7"`
	if !strings.Contains(svg, band) || !strings.Contains(svg, line) || !strings.Contains(svg, "time: wrote 42 buffers (0.3%)") {
		t.Errorf("the chart lacks the checkpoint's band, the crash's line or the checkpoint's detail")
	}
}
