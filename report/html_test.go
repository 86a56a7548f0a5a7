package report

import (
	"flag"
	"fmt"
	"html/template"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

var sampleHTML = flag.String("sample", "", "also write the fixture's HTML report to this file, to look at it")

func renderHTML(t *testing.T, in Input) string {
	t.Helper()
	var b strings.Builder
	if err := HTML(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTMLReportContents(t *testing.T) {
	f := newFixture(defaultOpts())
	in := f.input()
	out := renderHTML(t, in)
	if *sampleHTML != "" {
		if err := os.WriteFile(*sampleHTML, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	view, viewRuns := results.SeriesView(f.st, stats.Explain(f.st, f.runs))
	lines := answerLines(view, in.Analysis, viewRuns, CrashCosts(f.st, f.runs))
	if len(lines) == 0 {
		t.Fatal("the fixture has no answer lines")
	}
	answer := out[strings.Index(out, `<section id="answer"`):strings.Index(out, `<section id="question"`)]
	for _, v := range lines {
		if !strings.Contains(answer, template.HTMLEscapeString(v)) {
			t.Errorf("the answer block lacks line %q", v)
		}
	}
	for _, want := range []string{
		"The question and how it was answered", "not durable", "NOT DURABLE: tmpfs keeps its files in RAM only",
		"all-disk", "wal-ram", "all-ram", "<svg", `<table class="sortable">`, "addEventListener('click'",
		"engine: open WAL: no space left on device", `<tr class="failed">`,
		"AMD EPYC 7B13, 8 CPUs", "v0.4.0", "pebble v2.1.7", "rw,nosuid,nodev", "closed loop",
		"Throughput vs clients", "Throughput relative to the baseline", "Latency percentiles at 16 clients",
		"Per-second throughput, durability sync, 16 clients", "warmup ends",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	assertSections(t, out, "<h1>", `<section id="answer"`, `<figure class="headline">`, "The question and how it was answered",
		"<h2>Setup", "<h2>Charts", "<h2>Results")
}

// assertSections checks the report's parts come in the order asked for.
func assertSections(t *testing.T, out string, marks ...string) {
	t.Helper()
	last := -1
	for _, m := range marks {
		i := strings.Index(out, m)
		if i < last {
			t.Errorf("%q comes before the previous section", m)
		}
		last = i
	}
}

// TestHTMLIsSelfContained checks the report fetches nothing: the only URL is
// the SVG namespace, which is an identifier, not a resource.
func TestHTMLIsSelfContained(t *testing.T) {
	out := renderHTML(t, newFixture(defaultOpts()).input())
	if !strings.Contains(out, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("inline SVG lacks its namespace")
	}
	rest := strings.ReplaceAll(out, `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"http://", "https://", "<link", "src=", "url(", "@import", "//cdn"} {
		if i := strings.Index(rest, bad); i >= 0 {
			t.Errorf("report refers to an external resource: %q", rest[max(0, i-60):min(len(rest), i+60)])
		}
	}
	if n := strings.Count(out, "<script"); n != 1 {
		t.Errorf("want exactly the one inline script, found %d", n)
	}
}

func TestHTMLEscapesUserStrings(t *testing.T) {
	evil := "<script>alert(1)</script>"
	o := defaultOpts()
	o.placements = []string{"wal-ram", evil}
	o.fewSamples = evil
	f := newFixture(o)
	f.st.Name = `x" onload="alert(2)`
	ram := f.st.Tiers["ram"]
	ram.Path = "/dev/shm/<b>bold</b>"
	f.st.Tiers["ram"] = ram
	out := renderHTML(t, f.input())
	for _, bad := range []string{evil, "<b>bold", `" onload="`} {
		if strings.Contains(out, bad) {
			t.Errorf("report contains unescaped %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;bold&lt;/b&gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks escaped %q", want)
		}
	}
	if n := strings.Count(out, "<script"); n != 1 {
		t.Errorf("want exactly the one inline script, found %d", n)
	}
}

func TestLatencyPercentileWithTooFewSamplesIsOmitted(t *testing.T) {
	out := renderHTML(t, newFixture(defaultOpts()).input())
	// all-ram at 16 clients recorded 3 x 200 = 600 latencies: enough for
	// p99 (100), too few for p99.9 (1000).
	for _, want := range []string{"all-ram: p99.9 (needs 1000) omitted: only 600 samples merged from 3 runs",
		"all-ram p99: ", "wal-ram p99.9: ", "all-disk p99.9: "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(out, "all-ram p99.9: ") {
		t.Error("all-ram p99.9 is charted from too few samples")
	}
}

func TestLatencyChartsNeedHistograms(t *testing.T) {
	in := newFixture(defaultOpts()).input()
	in.Histogram = nil
	out := renderHTML(t, in)
	if !strings.Contains(out, "No stored histograms were given to the report") {
		t.Error("missing histograms are not explained")
	}
}

func TestFailedGroupIsMissingFromChartsAndNoted(t *testing.T) {
	o := defaultOpts()
	o.failGroup = "all-ram"
	f := newFixture(o)
	out := renderHTML(t, f.input())
	for _, want := range []string{
		"No ok run for all-ram, sync, 16 clients (3 failed): missing from the charts.",
		"all-ram at 16 clients: no ok run (3 failed), so it is missing here.",
		"all-ram at 16 clients: no ok run (3 failed: engine: open WAL: no space left on device), nothing to compare, so it has no bar.",
		"all-ram: 3 failed run(s) not drawn.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	failed := 0
	for _, r := range f.runs {
		if r.Status == results.RunFailed {
			failed++
		}
	}
	if got := strings.Count(out, `<tr class="failed">`); got < failed {
		t.Errorf("%d failed rows, want at least %d (one per failed run)", got, failed)
	}
}

// TestHTMLStaysSmall renders a large study (128 runs of 10 minutes) and
// checks the report stays mailable.
func TestHTMLStaysSmall(t *testing.T) {
	o := defaultOpts()
	o.clients, o.repeat, o.seconds = []int{1, 4, 16, 64}, 5, 600
	out := renderHTML(t, newFixture(o).input())
	if len(out) > 1<<20 {
		t.Errorf("report is %d KB, want under 1 MB", len(out)>>10)
	}
	t.Logf("report of %d runs: %d KB", 2*4*5*3, len(out)>>10)
}

func TestSortKeysAreNumbers(t *testing.T) {
	out := renderHTML(t, newFixture(defaultOpts()).input())
	re := regexp.MustCompile(`data-sort="([^"]*)"`)
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		if strings.ContainsAny(m[1], "µmsx%") {
			t.Fatalf("sort key %q is not a plain number", m[1])
		}
	}
}

// TestOneClientCountDrawsRawBars: a study at one client count (the seed
// studies' shape) gets raw throughput bars beside the normalised ones,
// not lines of one point each.
func TestOneClientCountDrawsRawBars(t *testing.T) {
	o := defaultOpts()
	o.clients = []int{16}
	out := renderHTML(t, newFixture(o).input())
	for _, want := range []string{"Throughput at 16 clients, durability sync", "Throughput / all-disk, durability sync"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks chart %q", want)
		}
	}
	if strings.Contains(out, "Throughput vs clients, durability") {
		t.Error("a one-point line chart of throughput vs clients is still drawn")
	}
}

// TestRunTableIsCompact: the every-run table has the columns a reader
// compares first and one details cell per row, in which the rest is
// folded, a failed run's error among it.
func TestRunTableIsCompact(t *testing.T) {
	f := newFixture(defaultOpts())
	out := renderHTML(t, f.input())
	i := strings.Index(out, `<div id="runs">`)
	if i < 0 {
		t.Fatal("no every-run table")
	}
	runs := out[i : i+strings.Index(out[i:], "</table>")]
	head := regexp.MustCompile(`<th[^>]*>([^<]*)</th>`).FindAllStringSubmatch(runs, -1)
	var names []string
	for _, h := range head {
		names = append(names, h[1])
	}
	want := []string{"run", "placement", "durability", "clients", "round", "status", "ops/s", "p50", "p99", "errors", "details"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("columns %q, want %q", names, want)
	}
	rows := regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`).FindAllStringSubmatch(runs[strings.Index(runs, "<tbody>"):], -1)
	if len(rows) != len(f.runs) {
		t.Fatalf("%d rows, want one per run (%d)", len(rows), len(f.runs))
	}
	for _, r := range rows {
		if n := strings.Count(r[1], "<td"); n != len(want) {
			t.Errorf("a row of %d cells, want %d", n, len(want))
		}
		if strings.Count(r[1], "<details>") != 1 {
			t.Errorf("a row without its folded details: %.200s", r[1])
		}
	}
	for _, r := range f.runs {
		if r.Status != results.RunOK {
			folded := "<summary>error</summary><dl><dt>error or caveat</dt><dd>" + template.HTMLEscapeString(r.Error) + "</dd>"
			if !strings.Contains(runs, folded) {
				t.Errorf("run %d's error is not in its details", r.Seq)
			}
		}
	}
}

// TestAnswerAtOneClientCount: asked for one client count, the report keeps
// the answer across every client count first and gives that count's
// verdicts under the question, and the headline chart is drawn there.
func TestAnswerAtOneClientCount(t *testing.T) {
	f := newFixture(defaultOpts())
	in := f.input()
	in.Clients = f.st.Clients[0]
	out := renderHTML(t, in)
	i := strings.Index(out, fmt.Sprintf("<h3>At %d clients</h3>", in.Clients))
	if i < 0 {
		t.Fatalf("no verdicts at %d clients", in.Clients)
	}
	for _, v := range Verdicts(f.st, in.Analysis, in.Clients) {
		if !strings.Contains(out[i:], template.HTMLEscapeString(v)) {
			t.Errorf("lacks %q under the question", v)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("relative to all-disk at %d clients</title>", in.Clients)) {
		t.Errorf("the headline chart is not drawn at %d clients", in.Clients)
	}
}
