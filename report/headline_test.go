package report

import (
	"fmt"
	"html/template"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// TestHeadlineChartPlotsEachRatio: the first screen's chart has a row per
// placement that is not the baseline and durability mode, at the headline
// client count, with the paired ratio, CI and verdict the tables judge, in
// both layouts, and says in its caption which interval it draws.
func TestHeadlineChartPlotsEachRatio(t *testing.T) {
	f := newFixture(defaultOpts())
	in := f.input()
	d, err := buildDoc(in)
	if err != nil {
		t.Fatal(err)
	}
	if d.Headline == nil {
		t.Fatal("no headline chart")
	}
	clients := HeadlineClients(f.st, 0)
	rows := 0
	for _, dur := range f.st.Durability {
		for _, p := range f.st.Placements {
			if f.st.IsBaseline(p) {
				continue
			}
			g := in.Analysis.Group(stats.Key{Series: p.Name, Durability: dur, Clients: clients})
			name := fmt.Sprintf("%s (%s)", p.Name, dur)
			for _, tier := range p.Components {
				if !f.st.Tiers[tier].Durable {
					name = fmt.Sprintf("%s (%s, not durable)", p.Name, dur)
				}
			}
			value := template.HTMLEscapeString(ratioCI(g) + " " + g.Verdict)
			painted := regexp.MustCompile(`fill="` + verdictColor(g.Verdict) + `"[^>]*>` + regexp.QuoteMeta(value) + `<`)
			for _, svg := range []string{d.Headline.SVG, d.Headline.Narrow} {
				text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(svg, "")
				if i := strings.Index(text, template.HTMLEscapeString(name+":")); i < 0 || !strings.Contains(text[i:], value) {
					t.Errorf("headline chart lacks the row %q: %q", name, value)
				}
				if !painted.MatchString(svg) {
					t.Errorf("%s: %q is not painted as %q", name, value, g.Verdict)
				}
			}
			rows++
		}
	}
	for _, svg := range []string{d.Headline.SVG, d.Headline.Narrow} {
		if n := strings.Count(svg, "<circle"); n != rows {
			t.Errorf("%d dots, want one per ratio (%d)", n, rows)
		}
		if err := wellFormed([]byte(svg)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(d.Headline.Title, fmt.Sprintf("at %d clients", clients)) {
		t.Errorf("title %q does not say the client count", d.Headline.Title)
	}
	if !strings.Contains(d.HeadlineNote, "paired t interval, Holm-adjusted") || strings.Contains(d.HeadlineNote, "bootstrap") {
		t.Errorf("caption %q does not name the interval drawn", d.HeadlineNote)
	}
}

// TestHeadlineMarksSayNoMoreThanTheVerdict: a dot and whisker are red
// only for worse, green only for better; inconclusive and equivalent are
// grey, whatever the placement's colour elsewhere.
func TestHeadlineMarksSayNoMoreThanTheVerdict(t *testing.T) {
	red, green := verdictColor(stats.Worse), verdictColor(stats.Better)
	for _, c := range []struct {
		verdict, want string
	}{{stats.Better, green}, {stats.Worse, red}, {stats.Inconclusive, "#888"}, {stats.Equivalent, "#888"}, {stats.NoData, "#888"}} {
		if got := markColor(c.verdict); got != c.want {
			t.Errorf("%s drawn in %s, want %s", c.verdict, got, c.want)
		}
	}
	for _, p := range palette {
		if p == "#888" {
			t.Errorf("the neutral grey %s is a placement colour too", p)
		}
	}
}

// TestHeadlineChartWithoutComparison: a study of one placement compares
// nothing, so it has no headline chart (and the page says why instead).
func TestHeadlineChartWithoutComparison(t *testing.T) {
	f := newFixture(defaultOpts())
	f.st.Placements = f.st.Placements[:1]
	var runs []results.Run
	for _, r := range f.runs {
		if r.Placement == f.st.Placements[0].Name {
			runs = append(runs, r)
		}
	}
	f.runs = runs
	d, err := buildDoc(f.input())
	if err != nil {
		t.Fatal(err)
	}
	if d.Headline != nil {
		t.Errorf("a headline chart for a study that compares nothing: %s", d.Headline.Title)
	}
}

// TestRatioDomain: the axis holds every ratio and CI and 1x, its ticks
// are within it, no more than asked for, with 1x among them.
func TestRatioDomain(t *testing.T) {
	cases := [][]headlineRow{
		{{Ratio: 2.1, CI: &[2]float64{1.9, 2.3}}, {Ratio: 1.3, CI: &[2]float64{1.1, 1.5}}},
		{{Ratio: 0.97, CI: &[2]float64{0.95, 1.01}}},
		{{Ratio: 9.5, CI: &[2]float64{7.3, 12.4}}, {Ratio: 0.4, CI: &[2]float64{0.2, 0.8}}},
		{{Ratio: 1.02}},
	}
	for _, most := range []int{3, 5, 9} {
		for i, rows := range cases {
			lo, hi, ticks := ratioDomain(rows, most)
			if len(ticks) == 0 || len(ticks) > most {
				t.Errorf("case %d: %d ticks, want 1 to %d: %v", i, len(ticks), most, ticks)
			}
			one := false
			for _, tk := range ticks {
				if tk < lo || tk > hi {
					t.Errorf("case %d: tick %v outside %v-%v", i, tk, lo, hi)
				}
				one = one || math.Abs(tk-1) < 1e-9
			}
			if !one {
				t.Errorf("case %d: no 1x tick among %v", i, ticks)
			}
			for _, r := range rows {
				in := []float64{r.Ratio, 1}
				if r.CI != nil {
					in = append(in, r.CI[0], r.CI[1])
				}
				for _, v := range in {
					if v < lo || v > hi {
						t.Errorf("case %d: %v outside the axis %v-%v", i, v, lo, hi)
					}
				}
			}
		}
	}
}

// TestEveryChartHasBothLayouts: each chart of the HTML report is there
// wide and narrow, the narrow one no wider than a phone's screen shows
// at about its size.
func TestEveryChartHasBothLayouts(t *testing.T) {
	out := renderHTML(t, newFixture(defaultOpts()).input())
	wide := strings.Count(out, `class="`+wideLayout.class+`"`)
	narrow := strings.Count(out, `class="`+narrowLayout.class+`"`)
	if wide == 0 || wide != narrow {
		t.Errorf("%d wide and %d narrow charts, want as many of each", wide, narrow)
	}
	re := regexp.MustCompile(`<svg [^>]*class="` + narrowLayout.class + `" width="([0-9.]+)"`)
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		if m[1] != fmt.Sprint(narrowLayout.w) {
			t.Errorf("a narrow chart %s wide, want %v", m[1], narrowLayout.w)
		}
	}
}
