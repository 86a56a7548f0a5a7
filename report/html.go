package report

// The HTML report: one self-contained file (styles, script and charts
// inline, no URL fetched) so it opens offline and survives being mailed.
// Its content is first gathered into a doc, which the Markdown report
// renders too, so the two never disagree.

import (
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/profile"
)

// Input is everything a report needs; it never talks to an engine.
type Input struct {
	Study    *results.Study
	Runs     []results.Run
	Analysis *stats.Analysis
	// Clients is the client count for the verdict sentences and the latency
	// chart (0 = HeadlineClients default).
	Clients int
	// Histogram loads a stored histogram (op "all", kind "latency", phase
	// "measured" are what the report uses); it is the results store's method
	// value. May be nil, and then the latency charts are left out with a note.
	Histogram func(runID, op, kind, phase string) (*hdr.Histogram, error)
}

// HTML writes the study's report as one self-contained HTML file.
func HTML(w io.Writer, in Input) error {
	d, err := buildDoc(in)
	if err != nil {
		return err
	}
	if err := pageTemplate.Execute(w, d); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	return nil
}

// doc is a report's content, independent of its output format.
type doc struct {
	Title string
	// Answer is the study's answer (answerLines), the report's first lines;
	// Headline the one chart beside them and HeadlineNote what it plots.
	Answer       []string
	Headline     *chartOut
	HeadlineNote string
	Facts        []kv
	Question     string
	Clients      int
	// Verdicts are the answer at the one client count asked for
	// (Input.Clients), nil when none was.
	Verdicts []string
	// Method says how figures, intervals and verdicts were computed.
	Method     string
	Notes      []string // tiers that are not durable or emulated
	Warnings   []string // failed runs, missing verdicts
	Env        table
	Tiers      table
	Placements table
	Matrix     table
	Source     string
	Sections   []chartSection
	Groups     table
	Runs       table
	// Crashes is the crash trade-off (crash.go): a table, a sentence per
	// cell, and the losses that contradict a mode's promise.
	Crashes        table
	CrashSentences []string
	Contradictions []string
	// CrashModels say what each power-loss model does and does not model.
	CrashModels []string
}

type kv struct{ K, V string }

// table is a rendered table; Num marks right-aligned numeric columns. A nil
// Header makes a two-column key/value table.
type table struct {
	Sortable bool
	// Fit makes the table as wide as the page, its long values (paths,
	// mount options, probe figures) wrapping instead of running off it.
	Fit    bool
	Header []string
	Num    []bool
	Rows   []row
	// Details, when set, heads a last column in which each row's Details
	// are folded away (HTML) or listed in one cell (Markdown): what a
	// reader opens for one run rather than scrolls past for every run.
	Details string
}

type row struct {
	Cells []cell
	Class string
	// More is the folded details' summary ("details", "error"); Details
	// their figures.
	More    string
	Details []kv
}

// cell is a table cell; Sort, when set, is the key the HTML table sorts by
// (a plain number, so "1.50ms" sorts after "900µs").
type cell struct{ Text, Sort string }

// chartSection is one kind of chart, one chart per durability mode (or per
// durability x clients for timelines).
type chartSection struct {
	ID, Heading, Intro string
	Charts             []chartOut
	Notes              []string
}

// chartOut is one rendered chart; Slug names its .svg file for Markdown.
// SVG is the wide layout (the Markdown file's, a desktop's), Narrow the
// one a phone shows.
type chartOut struct {
	Title  string
	Slug   string
	SVG    string
	Narrow string
	Notes  []string
}

// Inline returns both layouts for the HTML template, of which the page's
// CSS shows one. They are built by chart.render, which escapes every
// string it is given.
func (c chartOut) Inline() template.HTML { return template.HTML(c.SVG + c.Narrow) }

// builder carries what every part of the doc needs.
type builder struct {
	in      Input
	st      *results.Study
	a       *stats.Analysis
	clients int
	colors  map[string]string
	slugs   map[string]int
	// drivers names the study's load generators (the view has none).
	drivers string
}

// buildDoc gathers the report's content.
func buildDoc(in Input) (*doc, error) {
	if in.Study == nil {
		return nil, fmt.Errorf("report: no study given")
	}
	drivers := DriverText(in.Study)
	crashes := CrashCosts(in.Study, in.Runs)
	in.Runs = stats.Explain(in.Study, in.Runs)
	in.Study, in.Runs = results.SeriesView(in.Study, in.Runs)
	b := &builder{in: in, st: in.Study, a: in.Analysis, colors: map[string]string{}, slugs: map[string]int{}, drivers: drivers}
	if b.a == nil {
		b.a = stats.Analyze(in.Study, in.Runs)
	}
	b.clients = HeadlineClients(b.st, in.Clients)
	for i, p := range b.st.Placements {
		b.colors[p.Name] = palette[i%len(palette)]
	}
	d := &doc{
		Title:    "Study " + b.st.Name,
		Answer:   answerLines(b.st, b.a, in.Runs, crashes),
		Facts:    b.facts(),
		Question: b.question(),
		Clients:  b.clients,
		Method:   MethodNote(b.st),
		Notes:    NotDurableNotes(b.st),
		Warnings: b.warnings(),
		Env:      b.envTable(),
		Tiers:    b.tierTable(),
		Matrix:   b.matrixTable(),
		Source:   b.st.Source,
		Groups:   b.groupTable(),
		Runs:     b.runTable(),
	}
	if in.Clients != 0 {
		d.Verdicts = Verdicts(b.st, b.a, in.Clients)
	}
	if h := b.headline(); h != nil {
		d.Headline = &chartOut{Title: h.Title, Slug: b.uniqueSlug("headline"), SVG: h.render(wideLayout), Narrow: h.render(narrowLayout)}
		d.HeadlineNote = fmt.Sprintf("Each dot is a placement's %s ratio to %s at %s, paired round by round (the geometric mean of the per-round ratios); each whisker its paired t interval, Holm-adjusted to match the verdict; a dot is green for better, red for worse and grey otherwise.",
			throughputNoun(b.st), baselineShort(b.st), clientsText(b.clients))
	}
	d.Placements = b.placementTable()
	d.Crashes = crashCostTable(crashes)
	d.CrashModels = modelLabels(crashes)
	for _, c := range crashes {
		d.CrashSentences = append(d.CrashSentences, c.Sentence())
		if c.Contradiction != "" {
			d.Contradictions = append(d.Contradictions, c.Contradiction)
		}
	}
	d.Sections = []chartSection{b.throughputSection(), b.ratioSection(), b.latencySection(), b.timelineSection(), b.telemetrySection()}
	if b.st.SLO != nil || len(b.st.TargetRates) > 1 {
		d.Sections = append([]chartSection{b.capacitySection()}, d.Sections...)
	}
	return d, nil
}

func (b *builder) group(placement, durability string, clients int) *stats.Group {
	return b.a.Group(stats.Key{Series: placement, Durability: durability, Clients: clients})
}

func (b *builder) facts() []kv {
	st := b.st
	f := []kv{{"id", st.ID}, {"status", st.Status}, {"engine", st.Engine}, {"workload", st.Workload},
		{"started", fmtTime(st.StartedAt)}}
	if st.FinishedAt != nil {
		f = append(f, kv{"finished", fmtTime(*st.FinishedAt)},
			kv{"took", st.FinishedAt.Sub(st.StartedAt).Round(time.Second).String()})
	}
	return f
}

// fmtTime prints in UTC so a report reads the same wherever it is rendered.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func (b *builder) question() string {
	base := b.st.BaselineText()
	for _, p := range b.st.Placements {
		if p.Name == b.st.Baseline {
			base += " (" + PlacementText(p) + ")"
		}
	}
	at := "Each answer runs across the client counts measured, from the first to the last"
	if b.in.Clients != 0 {
		at += fmt.Sprintf("; below it, the answer at %s alone", clientsText(b.clients))
	}
	return fmt.Sprintf("How does the throughput of %s running %s change when its components are placed on other storage tiers, compared with the baseline placement %s? %s.",
		orDash(b.st.Engine), orDash(b.st.Workload), base, at)
}

// warnings says which runs failed and which groups have no data, because a
// verdict read without them can mislead.
func (b *builder) warnings() []string {
	var out []string
	failed := 0
	for _, r := range b.in.Runs {
		if r.Status != results.RunOK {
			failed++
		}
	}
	if failed > 0 {
		out = append(out, fmt.Sprintf("%d of %d runs did not finish ok; they are listed in the results table with their errors and left out of every figure.", failed, len(b.in.Runs)))
	}
	for _, g := range b.a.Groups {
		if g.N == 0 {
			out = append(out, fmt.Sprintf("No ok run for %s, %s, %d clients (%d failed): missing from the charts.", g.Series, g.Durability, g.Clients, g.Failed))
		}
	}
	return out
}

func (b *builder) envTable() table {
	e := b.st.Env
	cpu := orDash(e.CPUModel)
	if e.CPUs > 0 {
		cpu += fmt.Sprintf(", %d CPUs", e.CPUs)
	}
	engine := orDash(b.st.Engine)
	if b.st.EngineVersion != "" {
		engine += " " + b.st.EngineVersion
	}
	return kvTable([]kv{{"host", orDash(e.Hostname)}, {"OS", orDash(e.OS)}, {"kernel", orDash(e.Kernel)},
		{"CPU", cpu}, {"memory", fmtBytes(e.MemoryBytes)}, {"Go", orDash(e.GoVersion)},
		{"tierbench", orDash(e.TierbenchVersion)}, {"engine", engine}})
}

func kvTable(rows []kv) table {
	t := table{Num: []bool{false, false}}
	for _, r := range rows {
		t.Rows = append(t.Rows, row{Cells: []cell{{Text: r.K}, {Text: r.V}}})
	}
	return t
}

func fmtBytes(n uint64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

func (b *builder) tierTable() table {
	t := table{Fit: true, Header: []string{"tier", "path", "fs type", "mount point", "device", "mount options", "durable", "emulated", "probed (fio)"},
		Num: make([]bool, 9)}
	for _, n := range sortedTierNames(b.st) {
		ti := b.st.Tiers[n]
		dev := orDash(ti.Device)
		if ti.BackingFile != "" {
			dev += " (file " + ti.BackingFile + ")"
		}
		durable, class := "yes", ""
		if !ti.Durable {
			durable, class = "NOT DURABLE", "warn"
			if ti.Note != "" {
				durable += ": " + ti.Note
			}
		}
		t.Rows = append(t.Rows, row{Class: class, Cells: []cell{{Text: n}, {Text: orDash(ti.Path)}, {Text: orDash(ti.FSType)},
			{Text: orDash(ti.MountPoint)}, {Text: dev}, {Text: orDash(ti.MountOptions)}, {Text: durable}, {Text: emulatedText(ti.Emulated, ti.Emulation, ti.EmulationCheck, fidelityText(ti))},
			{Text: ProbeText(b.st.Probes[n])}}})
	}
	return t
}

// emulatedText says how a tier is emulated and what checked it (the fsync
// p50 the probe and the layer measured), as `show` does.
// fidelityText is a profiled tier's figures asked against achieved, ""
// when the study did not probe it.
func fidelityText(ti tier.Info) string {
	if len(ti.Fidelity) == 0 {
		return ""
	}
	return "profile " + ti.Profile + " " + profile.RowsText(ti.Fidelity)
}

func emulatedText(emulated bool, how, check, fidelity string) string {
	out := yesNo(emulated)
	for _, s := range []string{how, check, fidelity} {
		if emulated && s != "" {
			out += "; " + s
		}
	}
	return out
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// placementTable has one column per component, so placements read as a
// matrix; a tier that is not durable is marked in its cell.
func (b *builder) placementTable() table {
	comps := map[string]string{}
	for _, p := range b.st.Placements {
		for c := range p.Components {
			comps[c] = c
		}
	}
	names := slices.Sorted(maps.Keys(comps))
	t := table{Header: append(append([]string{"placement"}, names...), "role"), Num: make([]bool, len(names)+2)}
	for _, p := range b.st.Placements {
		cells := []cell{{Text: p.Name}}
		for _, c := range names {
			cells = append(cells, cell{Text: b.tierLabel(p.Components[c])})
		}
		role := ""
		if b.st.IsBaseline(p) {
			role = "baseline"
		}
		t.Rows = append(t.Rows, row{Cells: append(cells, cell{Text: role})})
	}
	return t
}

func (b *builder) tierLabel(tier string) string {
	if tier == "" {
		return "-"
	}
	ti, ok := b.st.Tiers[tier]
	switch {
	case ok && !ti.Durable && ti.Emulated:
		return tier + " (not durable, emulated)"
	case ok && !ti.Durable:
		return tier + " (not durable)"
	case ok && ti.Emulated:
		return tier + " (emulated)"
	}
	return tier
}

func (b *builder) matrixTable() table {
	st := b.st
	durs := make([]string, len(st.Durability))
	for i, d := range st.Durability {
		durs[i] = d + " (" + lowerFirst(durabilityPhrase(d)) + ")"
	}
	clients := make([]string, len(st.Clients))
	for i, c := range st.Clients {
		clients[i] = strconv.Itoa(c)
	}
	load := "closed loop: each client issues its next operation when the last completes"
	if st.TargetRate > 0 {
		load = fmt.Sprintf("open loop at a target of %.0f ops/s, %s arrivals; latency counts from the intended start", st.TargetRate, orDash(st.Arrival))
	}
	if note := lanesNote(b.in.Runs); note != "" {
		load += "; " + note
	}
	ok, failed := 0, 0
	for _, r := range b.in.Runs {
		if r.Status == results.RunOK {
			ok++
		} else {
			failed++
		}
	}
	rows := []kv{{"workload", orDash(st.Workload)}, {"load generator", b.drivers}}
	if st.Target != "" {
		rows = append(rows, kv{"target", st.Target + " (a server tierbench did not start: placement and durability as stated, not applied)"})
	}
	if st.Platform != "" {
		rows = append(rows, kv{"platform", st.Platform + " (telemetry: the pods' CPU and memory from the kubelets; no device I/O or fsync waits)"})
	}
	return kvTable(append(rows, []kv{{"workload parameters", orDash(params(st.WorkloadParams))},
		{"engine options", orDash(params(st.Options))}, {"baseline", orDash(st.Baseline)},
		{"durability modes", orDash(strings.Join(durs, "; "))}, {"client counts", orDash(strings.Join(clients, ", "))},
		{"rounds", roundsText(st) + orderText(st)}, {"warmup", fmtSeconds(st.WarmupS)},
		{"measured duration", fmtSeconds(st.DurationS)}, {"load", load},
		{"runs", fmt.Sprintf("%d (%d ok, %d not ok)", len(b.in.Runs), ok, failed)}}...))
}

// lowerFirst lowercases only the first letter, so "WAL" stays "WAL".
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func fmtSeconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + "s" }

// numSort is a cell's sort key; NaN (missing) sorts as empty.
func numSort(v float64) string {
	if v != v {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func (b *builder) groupTable() table {
	t := table{Sortable: true, Header: []string{"durability", "clients", "placement", "ok", "failed", "median " + b.st.ThroughputUnit(),
		"95% CI", "CV", "p50", "p99", "vs " + baselineShort(b.st), "ratio CI", "verdict"},
		Num: []bool{false, true, false, true, true, true, true, true, true, true, true, true, false}}
	for _, g := range b.a.Groups {
		t.Rows = append(t.Rows, b.groupRow(g))
	}
	addJournalColumns(&t, b.a.Groups)
	return t
}

// addJournalColumns puts the writes and flushes per second on the
// journal's tier beside throughput (the IRIS study's journal writes/s),
// when the study measured them.
func addJournalColumns(t *table, groups []*stats.Group) {
	measured := false
	for _, g := range groups {
		measured = measured || g.JournalWritesMedian > 0
	}
	if !measured {
		return
	}
	t.Header = append(t.Header, "journal tier writes/s", "95% CI", "journal tier flushes/s")
	t.Num = append(t.Num, true, true, true)
	for i, g := range groups {
		w, ci, f := cell{Text: "-"}, cell{Text: "-"}, cell{Text: "-"}
		if g.JournalWritesMedian > 0 {
			w = cell{Text: fmt.Sprintf("%.0f", g.JournalWritesMedian), Sort: numSort(g.JournalWritesMedian)}
			f = cell{Text: fmt.Sprintf("%.0f", g.JournalFlushesMedian), Sort: numSort(g.JournalFlushesMedian)}
		}
		if g.JournalWritesCI != nil {
			ci = cell{Text: fmt.Sprintf("%.0f-%.0f", g.JournalWritesCI[0], g.JournalWritesCI[1])}
		}
		t.Rows[i].Cells = append(t.Rows[i].Cells, w, ci, f)
	}
}

func (b *builder) groupRow(g *stats.Group) row {
	r := row{Class: "verdict-" + strings.ReplaceAll(g.Verdict, " ", "-")}
	if g.N == 0 {
		r.Class = "failed"
		return row{Class: r.Class, Cells: []cell{{Text: g.Durability}, intCell(g.Clients), {Text: g.Series},
			intCell(g.N), intCell(g.Failed), {Text: "-"}, {Text: "-"}, {Text: "-"}, {Text: "-"}, {Text: "-"}, {Text: "-"}, {Text: "-"}, {Text: g.Verdict}}}
	}
	tpCI, ratio, ratioCI := "-", "-", "-"
	if g.ThroughputCI != nil {
		tpCI = fmt.Sprintf("%.0f-%.0f", g.ThroughputCI[0], g.ThroughputCI[1])
	}
	if g.Ratio != 0 {
		ratio = fmt.Sprintf("%.2fx", g.Ratio)
	}
	if g.RatioCI != nil {
		ratioCI = fmt.Sprintf("%.2f-%.2fx", g.RatioCI[0], g.RatioCI[1])
	}
	r.Cells = []cell{{Text: g.Durability}, intCell(g.Clients), {Text: g.Series}, intCell(g.N), intCell(g.Failed),
		{Text: fmt.Sprintf("%.0f", g.ThroughputMedian), Sort: numSort(g.ThroughputMedian)}, {Text: tpCI},
		{Text: fmt.Sprintf("%.1f%%", g.ThroughputCV*100), Sort: numSort(g.ThroughputCV)},
		microsCell(g.P50Median), microsCell(g.P99Median), {Text: ratio, Sort: numSort(g.Ratio)}, {Text: ratioCI}, {Text: g.Verdict}}
	return r
}

func intCell(v int) cell { return cell{Text: strconv.Itoa(v), Sort: strconv.Itoa(v)} }

func microsCell(us float64) cell {
	if us <= 0 {
		return cell{Text: "-"}
	}
	return cell{Text: hist.FormatMicros(us), Sort: numSort(us)}
}

// runTable has one short row per run, the figures a reader compares
// first (placement, durability, clients, round, status, throughput, p50,
// p99, errors), and everything else folded into the row's details.
func (b *builder) runTable() table {
	t := table{Sortable: true, Details: "details", Header: []string{"run", "placement", "durability", "clients", "round", "status", "ops/s",
		"p50", "p99", "errors"},
		Num: []bool{true, false, false, true, true, false, true, true, true, true}}
	runs := append([]results.Run(nil), b.in.Runs...)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Seq < runs[j].Seq })
	for _, r := range runs {
		t.Rows = append(t.Rows, runRow(r))
	}
	if m := b.st.Metric; m != nil {
		// The workload's own figure goes beside ops/s (all ops).
		const at = 7
		t.Header = slices.Insert(t.Header, at, m.Name)
		t.Num = slices.Insert(t.Num, at, true)
		for i, r := range runs {
			c := cell{Text: "-"}
			if v := b.st.Throughput(r); r.Status == results.RunOK && v > 0 {
				c = cell{Text: fmt.Sprintf("%.0f", v), Sort: numSort(v)}
			}
			t.Rows[i].Cells = slices.Insert(t.Rows[i].Cells, at, c)
		}
	}
	return t
}

func runRow(r results.Run) row {
	class, more := "", "details"
	if r.Status != results.RunOK {
		class, more = "failed", "error"
	}
	tput := cell{Text: "-"}
	if r.ThroughputOpsS > 0 {
		tput = cell{Text: fmt.Sprintf("%.0f", r.ThroughputOpsS), Sort: numSort(r.ThroughputOpsS)}
	}
	errText := strings.Join(strings.Fields(r.Error), " ")
	for _, c := range r.Caveats {
		errText = strings.TrimSpace(errText + " caveat: " + c)
	}
	if len(r.Caveats) > 0 && more == "details" {
		more = "caveat"
	}
	cpu := cpuOf(r)
	// Every row has the same keys in the same order: Markdown makes them
	// columns.
	details := []kv{{"error or caveat", errText}, {"p99.9", microsCell(r.Latency.P999).Text}, {"engine CPU", pctText(cpu.engine)},
		{"engine cache", BuffersText(r)}, {"load generator CPU", cpu.loadText()},
		{"load generator CPU per op", cpu.perOpText()}, {"bottleneck", BottleneckText(r.Bottleneck)},
		{"evidence", EvidenceText(r.Bottleneck)}, {"verified", VerifiedText(r)}, {"run id", r.ID}}
	return row{Class: class, More: more, Details: details, Cells: []cell{intCell(r.Seq), {Text: r.Placement}, {Text: r.Durability}, intCell(r.Clients),
		intCell(r.Repeat), {Text: r.Status}, tput, microsCell(r.Latency.P50), microsCell(r.Latency.P99),
		{Text: strconv.FormatInt(r.Errors, 10), Sort: strconv.FormatInt(r.Errors, 10)}}}
}
