package report

// The Markdown report: the same doc as the HTML one, as GitHub-flavoured
// Markdown for a repository or a pull request, with the charts written as
// .svg files beside it (Markdown cannot inline them).

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Markdown writes the report to w and its charts as SVG files into chartDir,
// linked by relative path chartRel (e.g. "report-charts/").
func Markdown(w io.Writer, in Input, chartDir, chartRel string) error {
	d, err := buildDoc(in)
	if err != nil {
		return err
	}
	if err := writeCharts(d, chartDir); err != nil {
		return err
	}
	m := &mdWriter{w: w, rel: chartRel}
	m.answer(d)
	m.setup(d)
	m.charts(d)
	m.results(d)
	if m.err != nil {
		return fmt.Errorf("write markdown report: %w", m.err)
	}
	return nil
}

// writeCharts writes every chart as a standalone SVG file named by its slug.
func writeCharts(d *doc, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create chart folder: %w", err)
	}
	charts := []chartOut{}
	if d.Headline != nil {
		charts = append(charts, *d.Headline)
	}
	for _, s := range d.Sections {
		charts = append(charts, s.Charts...)
	}
	for _, c := range charts {
		body := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + c.SVG + "\n"
		if err := os.WriteFile(filepath.Join(dir, c.Slug+".svg"), []byte(body), 0o644); err != nil {
			return fmt.Errorf("write chart %s: %w", c.Slug, err)
		}
	}
	return nil
}

// mdWriter keeps the first write error, so the section writers stay flat.
type mdWriter struct {
	w   io.Writer
	rel string
	err error
}

func (m *mdWriter) printf(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, args...)
	}
}

// answer opens the report with the answer's lines and the headline chart,
// then the question and how it was answered.
func (m *mdWriter) answer(d *doc) {
	m.printf("# %s\n\n", md(d.Title))
	if len(d.Answer) == 0 {
		m.printf("No answer: no placement other than the baseline has data to compare.\n\n")
	}
	m.list(d.Answer, "- **", "**")
	if h := d.Headline; h != nil {
		m.printf("![%s](%s)\n\n%s\n\n", md(h.Title), m.chartLink(h.Slug), md(d.HeadlineNote))
	}
	facts := make([]string, len(d.Facts))
	for i, f := range d.Facts {
		facts[i] = "**" + md(f.K) + "** " + md(f.V)
	}
	m.printf("## The question and how it was answered\n\n%s\n\n*%s*\n\n", strings.Join(facts, " · "), md(d.Question))
	if len(d.Verdicts) > 0 {
		m.printf("At %d clients:\n\n", d.Clients)
		m.list(d.Verdicts, "- ", "")
	}
	m.printf("%s\n\n", md(d.Method))
	if len(d.Notes) > 0 {
		m.printf("> **Read these figures with care:**\n>\n")
		m.list(d.Notes, "> - ", "")
	}
	m.list(d.Warnings, "- ", "")
}

// list writes one line per item, then a blank line.
func (m *mdWriter) list(items []string, prefix, suffix string) {
	if len(items) == 0 {
		return
	}
	for _, it := range items {
		m.printf("%s%s%s\n", prefix, md(it), suffix)
	}
	m.printf("\n")
}

func (m *mdWriter) setup(d *doc) {
	m.printf("## Setup\n\n### Environment\n\n")
	m.table(d.Env)
	m.printf("### Tiers\n\n")
	m.table(d.Tiers)
	m.printf("### Placements\n\n")
	m.table(d.Placements)
	m.printf("### Workload and run matrix\n\n")
	m.table(d.Matrix)
	if d.Source != "" {
		fence := codeFence(d.Source)
		m.printf("Study file as given:\n\n%syaml\n%s\n%s\n\n", fence, strings.TrimRight(d.Source, "\n"), fence)
	}
}

// codeFence is a backtick fence longer than any backtick run in s, so the
// study file cannot close its own code block.
func codeFence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

func (m *mdWriter) charts(d *doc) {
	m.printf("## Charts\n\n")
	for _, s := range d.Sections {
		m.printf("### %s\n\n%s\n\n", md(s.Heading), md(s.Intro))
		m.list(s.Notes, "- ", "")
		for _, c := range s.Charts {
			m.printf("![%s](%s)\n\n", md(c.Title), m.chartLink(c.Slug))
			m.list(c.Notes, "- ", "")
		}
	}
}

// chartLink is the image path relative to the Markdown file; angle brackets
// keep a path with spaces in one link.
func (m *mdWriter) chartLink(slug string) string {
	p := slug + ".svg"
	if m.rel != "" {
		p = path.Join(filepath.ToSlash(m.rel), p)
	}
	if strings.ContainsAny(p, " ()") {
		return "<" + p + ">"
	}
	return p
}

func (m *mdWriter) results(d *doc) {
	m.printf("## Results\n\n### Per group\n\n")
	m.printf("One row per placement x durability x clients cell; p50 and p99 are the medians of the runs' own percentiles. %s\n\n", d.Method)
	m.table(d.Groups)
	m.printf("### Every run\n\nLatency percentiles are each run's own, from its measured window; CPU is in percent of one core over that window, the load generator's also per operation.\n\n")
	m.table(d.Runs)
}

// table writes a GitHub-flavoured table; a nil header (key/value tables)
// becomes an empty header row, which GitHub accepts. Folded details become
// columns of their own: a Markdown viewer scrolls a wide table, and has no
// fold.
func (m *mdWriter) table(t table) {
	if t.Details != "" && len(t.Rows) > 0 {
		t = unfold(t)
	}
	n := len(t.Num)
	head := make([]string, n)
	align := make([]string, n)
	for i := range n {
		if i < len(t.Header) {
			head[i] = md(t.Header[i])
		}
		align[i] = "---"
		if t.Num[i] {
			align[i] = "---:"
		}
	}
	m.printf("| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(align, " | "))
	for _, r := range t.Rows {
		cells := make([]string, n)
		for i, c := range r.Cells {
			if i < n {
				cells[i] = md(c.Text)
			}
		}
		m.printf("| %s |\n", strings.Join(cells, " | "))
	}
	m.printf("\n")
}

// unfold makes each of the rows' details a column, named by the first
// row's keys (every row has the same).
func unfold(t table) table {
	out := table{Header: slices.Clone(t.Header), Num: slices.Clone(t.Num)}
	for _, d := range t.Rows[0].Details {
		out.Header = append(out.Header, d.K)
		out.Num = append(out.Num, false)
	}
	for _, r := range t.Rows {
		cells := slices.Clone(r.Cells)
		for _, d := range r.Details {
			cells = append(cells, cell{Text: d.V})
		}
		out.Rows = append(out.Rows, row{Cells: cells, Class: r.Class})
	}
	return out
}

// mdEscaper neutralises Markdown and HTML syntax in user-provided text
// (placement names, paths, errors): GitHub renders raw HTML, and a "|" would
// split a table cell.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "|", `\|`,
	"&", "&amp;", "<", "&lt;", ">", "&gt;", "\r\n", " ", "\n", " ", "\r", " ")

// md escapes text for a Markdown line or table cell.
func md(s string) string { return mdEscaper.Replace(s) }
