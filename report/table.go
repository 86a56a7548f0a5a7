// Package report renders stored results for people: the terminal table of
// `tierbench show` and the study list. It reads results records only; it
// never talks to an engine.
package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/tier/profile"
)

// ShowOptions shape `show`'s text.
type ShowOptions struct {
	// Wide adds every column (intervals of each figure, p50, rounds, raw
	// and adjusted p); without it the tables fit 120 columns.
	Wide bool
}

// Show writes the study's answer, then what it rests on: the header, its
// tiers and placements, one row per placement, durability and client
// count, and the tables and notes behind them.
func Show(w io.Writer, st *results.Study, runs []results.Run) error {
	return ShowWith(w, st, runs, ShowOptions{})
}

// ShowWith is Show with options.
func ShowWith(w io.Writer, st *results.Study, runs []results.Run, opt ShowOptions) error {
	drivers := DriverText(st)
	crashes := CrashCosts(st, runs)
	runs = stats.Explain(st, runs)
	st, runs = results.SeriesView(st, runs)
	a := stats.Analyze(st, runs)
	fmt.Fprintf(w, "study %s  %q  status %s\n", st.ID, st.Name, st.Status)
	fmt.Fprintf(w, "engine %s (%s), workload %s, %s\n", st.Engine, orDash(st.EngineVersion), st.Workload, drivers)
	fmt.Fprintln(w, "\nanswer:")
	for _, l := range answerLines(st, a, runs, crashes) {
		fmt.Fprintln(w, wrap(l, showWidth, "  ", "    "))
	}
	fmt.Fprintln(w)
	if st.Target != "" {
		fmt.Fprintf(w, "target %s: a server tierbench did not start; placements and durability are as the study states them, not applied\n", st.Target)
	}
	if st.Platform != "" {
		fmt.Fprintf(w, "ran on %s; telemetry there is the pods' CPU and memory from the kubelets, with no device I/O or fsync waits\n", st.Platform)
	}
	fmt.Fprintln(w, wrap(params(st.WorkloadParams), showWidth, "  ", "    "))
	mode := "closed loop"
	if st.MaxOps > 0 {
		mode += fmt.Sprintf(", each window ends after %d ops", st.MaxOps)
	}
	if st.TargetRate > 0 {
		mode = fmt.Sprintf("open loop at %.0f ops/s (%s arrivals)", st.TargetRate, st.Arrival)
	}
	if len(st.TargetRates) > 1 {
		mode = fmt.Sprintf("open loop at each of %v ops/s (%s arrivals)", st.TargetRates, st.Arrival)
	}
	if st.SLO != nil {
		mode = fmt.Sprintf("open loop, each round searching every capacity under %s (%s arrivals)", stats.SLOText(st.SLO), st.Arrival)
	}
	if note := lanesNote(runs); note != "" {
		mode += ", " + note
	}
	fmt.Fprintln(w, wrap(fmt.Sprintf("warmup %s, measured %gs, %s%s, %s; host %s, %d cpus, kernel %s",
		warmupHeader(st), st.DurationS, roundsText(st), orderText(st), mode, st.Env.Hostname, st.Env.CPUs, st.Env.Kernel), showWidth, "", "  "))
	fmt.Fprintln(w, "tiers:")
	names := sortedTierNames(st)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var tierNotes []string
	for _, n := range names {
		t := st.Tiers[n]
		d := "durable"
		switch {
		case !t.Durable:
			d = "NOT DURABLE"
			tierNotes = append(tierNotes, fmt.Sprintf("%s: %s", n, t.Note))
		case t.LayerDurable:
			d = "durable only under the power-loss layer"
		}
		if t.Emulated {
			d += ", emulated"
			var how []string
			for _, x := range []string{t.Emulation, t.EmulationCheck} {
				if x != "" {
					how = append(how, x)
				}
			}
			if len(how) > 0 {
				tierNotes = append(tierNotes, fmt.Sprintf("%s: emulated: %s", n, strings.Join(how, "; ")))
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", n, t.FSType, t.Device, d)
		tierNotes = append(tierNotes, fmt.Sprintf("%s: at %s", n, t.Path))
	}
	tw.Flush()
	for _, n := range names {
		if p := st.Probes[n]; p != nil {
			tierNotes = append(tierNotes, n+": "+ProbeText(p))
		}
		if t := st.Tiers[n]; len(t.Fidelity) > 0 {
			tierNotes = append(tierNotes, fmt.Sprintf("%s: profile %s %s", n, t.Profile, profile.RowsText(t.Fidelity)))
		}
		if t := st.Tiers[n]; t.AtomicWrite > 0 {
			tierNotes = append(tierNotes, AtomicWriteText(n, t))
		}
	}
	for _, note := range tierNotes {
		fmt.Fprintln(w, wrap(note, showWidth, "    ", "      "))
	}
	fmt.Fprintln(w, "placements:")
	for _, p := range st.Placements {
		base := ""
		if st.IsBaseline(p) {
			base = "  (baseline)"
		}
		fmt.Fprintf(w, "  %s: %s%s\n", p.Name, PlacementText(p), base)
	}
	fmt.Fprintln(w)
	groupTable(w, st, a, opt)
	capacityTable(w, st, stats.Decide(st, a, runs))
	if len(st.Dims()) > 0 {
		fmt.Fprintln(w, "  baseline: "+st.BaselineText())
	}
	fmt.Fprintln(w, "\n"+wrap(MethodNote(st), showWidth, "", ""))
	cpuTable(w, st, a)
	journalTable(w, st, a)
	crashTable(w, crashes)
	bottlenecks(w, st, runs)
	verifications(w, runs)
	caveats(w, runs)
	var failed []results.Run
	for _, r := range runs {
		if r.Status != results.RunOK {
			failed = append(failed, r)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n%d run(s) failed:\n", len(failed))
		for _, r := range failed {
			fmt.Fprintf(w, "  %s  %s %s c=%d #%d: %s\n", r.ID, r.Placement, r.Durability, r.Clients, r.Repeat, r.Error)
		}
	}
	for _, n := range NotDurableNotes(st) {
		fmt.Fprintln(w, wrap("note: "+n, showWidth, "", "  "))
	}
	return nil
}

// showWidth is the width `show`'s text fits by default.
const showWidth = 120

// groupTable writes one row per durability, client count and series: its
// throughput and p99 (medians over rounds) and its ratio to its baseline
// with the 95% CI and verdict, so the table is as narrow with ten
// placements as with two. Wide adds each figure's interval, p50, the
// rounds and the comparison's raw and adjusted p.
func groupTable(w io.Writer, st *results.Study, a *stats.Analysis, opt ShowOptions) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"durability", "clients", "placement", st.ThroughputUnit(), "p99", "vs " + baselineShort(st)}
	if opt.Wide {
		header = []string{"durability", "clients", "placement", "n", st.ThroughputUnit(), "95% CI", "cv", "p50", "p99", "vs " + baselineShort(st), "p", "p adjusted", "disturbed"}
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			for _, p := range st.Placements {
				g := a.Group(stats.Key{Series: p.Name, Durability: d, Clients: c})
				ratio := "-"
				if !st.IsBaseline(p) {
					ratio = cellRatio(g)
				}
				row := []string{d, fmt.Sprint(c), p.Name, cellMedian(g), cellP99(g), ratio}
				if opt.Wide {
					row = []string{d, fmt.Sprint(c), p.Name, cellN(g), cellMedian(g), cellCI(g), cellCV(g), cellP50(g), cellP99(g), ratio, pText(g.P), pText(g.PAdjusted), cellDisturbed(g)}
				}
				fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
			}
		}
	}
	tw.Flush()
}

// cellMedian is a group's median figure, "failed" or "-".
func cellMedian(g *stats.Group) string {
	switch {
	case g == nil || (g.N == 0 && g.Failed == 0):
		return "-"
	case g.N == 0:
		return "failed"
	}
	return figure(g.ThroughputMedian)
}

// cellCI is a group's figure's 95% CI, or "-".
func cellCI(g *stats.Group) string {
	if g == nil || g.ThroughputCI == nil {
		return "-"
	}
	return fmt.Sprintf("[%s-%s]", figure(g.ThroughputCI[0]), figure(g.ThroughputCI[1]))
}

func cellN(g *stats.Group) string {
	if g == nil {
		return "-"
	}
	if g.Failed > 0 {
		return fmt.Sprintf("%d+%d failed", g.N, g.Failed)
	}
	return fmt.Sprint(g.N)
}

func cellCV(g *stats.Group) string {
	if g == nil || g.N < 2 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*g.ThroughputCV)
}

func cellP50(g *stats.Group) string {
	if g == nil || g.N == 0 {
		return "-"
	}
	return hist.FormatMicros(g.P50Median)
}

func cellDisturbed(g *stats.Group) string {
	if g == nil || g.Disturbed == 0 {
		return "-"
	}
	return fmt.Sprintf("%d of %d", g.Disturbed, g.N)
}

// pText prints a p value, "-" for none.
func pText(p *float64) string {
	switch {
	case p == nil:
		return "-"
	case *p < 0.0001:
		return "<0.0001"
	}
	return strconv.FormatFloat(*p, 'f', 4, 64)
}

// warmupHeader is the warmup as the header says it: "2s", "cut after
// the fact (MSER-5), at most 60s, judged steady within ±5% over 3s", or,
// for a study stored before, "until steady within ±5% over 3s, at most
// 60s".
func warmupHeader(st *results.Study) string {
	if r := st.WarmupRule; r != nil && r.AfterTheFact {
		return fmt.Sprintf("cut after the fact (MSER-5), at most %gs, judged steady within ±%s over %gs", st.WarmupS, pctText1(r.Steady), r.WindowS)
	}
	if r := st.WarmupRule; r != nil {
		return fmt.Sprintf("until steady within ±%s over %gs, at most %gs", pctText1(r.Steady), r.WindowS, st.WarmupS)
	}
	return fmt.Sprintf("%gs", st.WarmupS)
}

// wrap breaks s into lines of at most width columns at spaces: the first
// line indented by first, the rest by rest. A word longer than a line
// stands alone.
func wrap(s string, width int, first, rest string) string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return first
	}
	var b strings.Builder
	line := first + words[0]
	for _, wd := range words[1:] {
		if len([]rune(line))+1+len([]rune(wd)) > width {
			b.WriteString(line + "\n")
			line = rest + wd
			continue
		}
		line += " " + wd
	}
	b.WriteString(line)
	return b.String()
}

func cellThroughput(g *stats.Group) string {
	switch {
	case g == nil || (g.N == 0 && g.Failed == 0):
		return "-"
	case g.N == 0:
		return "failed"
	case g.ThroughputCI != nil:
		return fmt.Sprintf("%s [%s-%s]", figure(g.ThroughputMedian), figure(g.ThroughputCI[0]), figure(g.ThroughputCI[1]))
	}
	return figure(g.ThroughputMedian)
}

// figure prints a throughput or elapsed time: whole numbers from 100 up,
// three significant figures below (a query set's 5.37 s).
func figure(v float64) string {
	if math.Abs(v) >= 100 || v == 0 {
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func cellP99(g *stats.Group) string {
	if g == nil || g.N == 0 {
		return "-"
	}
	return hist.FormatMicros(g.P99Median)
}

func cellRatio(g *stats.Group) string {
	switch {
	case g != nil && g.Verdict == stats.CrashRun:
		return "crash run"
	case g == nil || g.N == 0 || g.Ratio == 0:
		return "-"
	case g.RatioCI != nil:
		return fmt.Sprintf("%.2fx [%.2f-%.2f] %s", g.Ratio, g.RatioCI[0], g.RatioCI[1], g.Verdict)
	}
	return fmt.Sprintf("%.2fx", g.Ratio)
}

func params(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if m[k] != "" {
			parts = append(parts, k+"="+m[k])
		}
	}
	return strings.Join(parts, " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedTierNames(st *results.Study) []string {
	names := make([]string, 0, len(st.Tiers))
	for n := range st.Tiers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PlacementText describes a placement: its component=tier pairs, and the
// durability it pins, if any.
func PlacementText(p results.Placement) string {
	t := params(p.Components)
	if p.Durability != "" {
		t = strings.TrimSpace(t + " durability " + p.Durability + " in every row")
	}
	if t == "" {
		return "-"
	}
	return t
}

// DriverText names a study's load generators for a reader.
func DriverText(st *results.Study) string {
	switch len(st.Drivers) {
	case 0:
		return "driver builtin"
	case 1:
		return "driver " + st.Drivers[0]
	}
	return "drivers " + strings.Join(st.Drivers, ", ") + " (each placement/driver pair is compared with " + st.BaselineSeries() + ")"
}

// List writes one line per study, newest first.
func List(w io.Writer, studies []results.Study) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tENGINE\tWORKLOAD\tSTATUS\tSTARTED")
	for _, s := range studies {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Name, s.Engine, s.Workload, s.Status, s.StartedAt.Local().Format("2006-01-02 15:04:05"))
	}
	tw.Flush()
}

// bottlenecks lists each ok run's likely limit, first repeat only: the
// answer to why a faster tier did or did not help.
func bottlenecks(w io.Writer, st *results.Study, runs []results.Run) {
	var lines []string
	for _, r := range runs {
		if r.Status == results.RunOK && r.Repeat == 1 && r.Bottleneck != nil {
			lines = append(lines, wrap(fmt.Sprintf("%s c=%d %s: %s", r.Durability, r.Clients, r.Placement, r.Bottleneck.Text), showWidth, "  ", "    "))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nbottlenecks (repeat 1):")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// caveats lists what the engine saw in each run that changes what was
// measured (RocksDB spilled over to the slow device): every repeat, since
// one run's caveat need not be another's.
func caveats(w io.Writer, runs []results.Run) {
	first := true
	for _, r := range runs {
		for _, c := range r.Caveats {
			if first {
				fmt.Fprintln(w, "\ncaveats (they change what was measured):")
				first = false
			}
			fmt.Fprintf(w, "  run %d, %s c=%d %s #%d: %s\n", r.Seq, r.Durability, r.Clients, r.Placement, r.Repeat, c)
		}
	}
}

// verifications says which invariant checks ran after the ok runs and held
// (a check that fails fails its run, listed with the failures).
func verifications(w io.Writer, runs []results.Run) {
	ok := 0
	checked := map[string]int{}
	var order []string
	for _, r := range runs {
		if r.Status != results.RunOK {
			continue
		}
		ok++
		if r.Verified {
			if checked[r.Verification] == 0 {
				order = append(order, r.Verification)
			}
			checked[r.Verification]++
		}
	}
	// Checks that count what each run did (tpcc's NOPM) differ in every
	// run: past a few, say how many held and show the first as an example.
	const listed = 3
	if len(order) > listed {
		n := 0
		for _, c := range checked {
			n += c
		}
		fmt.Fprintf(w, "\nverified after %d of %d ok run(s) (each run's proof: show --format json, runs[].verification); the first: %s\n", n, ok, orDash(order[0]))
		return
	}
	for _, what := range order {
		fmt.Fprintf(w, "\nverified after %d of %d ok run(s): %s\n", checked[what], ok, orDash(what))
	}
}

// lanesNote says how tierbench's own driver ran its clients when it ran
// them on lanes (driver/lane), or "".
func lanesNote(runs []results.Run) string {
	lo, hi := 0, 0
	for _, r := range runs {
		if r.Lanes > 0 {
			lo, hi = min(r.Lanes, cmp.Or(lo, r.Lanes)), max(hi, r.Lanes)
		}
	}
	const what = " (a goroutine each, multiplexing its clients' connections as pgbench -j does)"
	switch {
	case hi == 0:
		return ""
	case lo == hi:
		return fmt.Sprintf("builtin clients on %d lane(s)", hi) + what
	}
	return fmt.Sprintf("builtin clients on %d to %d lanes, as each driver says", lo, hi) + what
}
