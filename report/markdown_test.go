package report

import (
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMarkdownGolden(t *testing.T) {
	dir := t.TempDir()
	chartDir := filepath.Join(dir, "report-charts")
	var b strings.Builder
	if err := Markdown(&b, newFixture(defaultOpts()).input(), chartDir, "report-charts/"); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("markdown differs from %s (run with -update if the change is intended):\n%s", golden, firstDiff(got, string(want)))
	}
	checkChartLinks(t, got, dir)
}

// checkChartLinks checks every image the report links exists as a
// well-formed SVG file, and every chart file is linked.
func checkChartLinks(t *testing.T, md, dir string) {
	t.Helper()
	links := regexp.MustCompile(`!\[[^\]]*\]\((report-charts/[a-z0-9-]+\.svg)\)`).FindAllStringSubmatch(md, -1)
	if len(links) == 0 {
		t.Fatal("markdown links no chart")
	}
	for _, l := range links {
		b, err := os.ReadFile(filepath.Join(dir, l[1]))
		if err != nil {
			t.Errorf("linked chart: %v", err)
			continue
		}
		if err := wellFormed(b); err != nil {
			t.Errorf("%s is not well-formed XML: %v", l[1], err)
		}
		if !strings.Contains(string(b), `<svg xmlns="http://www.w3.org/2000/svg"`) {
			t.Errorf("%s lacks the SVG namespace", l[1])
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "report-charts", "*.svg"))
	if len(files) != len(links) {
		t.Errorf("%d chart files, %d links", len(files), len(links))
	}
}

func wellFormed(b []byte) error {
	d := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// firstDiff shows the first differing line, which is what one needs to
// judge a golden change.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return ""
}

func TestMarkdownEscapesUserStrings(t *testing.T) {
	o := defaultOpts()
	o.placements = []string{"wal|ram", "<script>alert(1)</script>"}
	var b strings.Builder
	if err := Markdown(&b, newFixture(o).input(), t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script>") {
		t.Error("markdown contains raw HTML from a placement name")
	}
	if !strings.Contains(out, `wal\|ram`) {
		t.Error("a | in a placement name is not escaped, so it would split table cells")
	}
	if !strings.Contains(out, "](timeline-sync-16c.svg)") {
		t.Error("with no chartRel, charts are not linked by bare file name")
	}
}
