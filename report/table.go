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
)

// Show writes the study header, its tiers, and per durability and client
// count the throughput and p99 of each placement with its ratio to the baseline.
func Show(w io.Writer, st *results.Study, runs []results.Run) error {
	drivers := DriverText(st)
	crashes := CrashCosts(st, runs)
	runs = stats.Explain(st, runs)
	st, runs = results.SeriesView(st, runs)
	fmt.Fprintf(w, "study %s  %q  status %s\n", st.ID, st.Name, st.Status)
	fmt.Fprintf(w, "engine %s (%s), workload %s, %s\n", st.Engine, orDash(st.EngineVersion), st.Workload, drivers)
	if st.Target != "" {
		fmt.Fprintf(w, "target %s: a server tierbench did not start; placements and durability are as the study states them, not applied\n", st.Target)
	}
	if st.Platform != "" {
		fmt.Fprintf(w, "ran on %s; telemetry there is the pods' CPU and memory from the kubelets, with no device I/O or fsync waits\n", st.Platform)
	}
	fmt.Fprintf(w, "  %s\n", params(st.WorkloadParams))
	mode := "closed loop"
	if st.MaxOps > 0 {
		mode += fmt.Sprintf(", each window ends after %d ops", st.MaxOps)
	}
	if st.TargetRate > 0 {
		mode = fmt.Sprintf("open loop at %.0f ops/s (%s arrivals)", st.TargetRate, st.Arrival)
	}
	if note := lanesNote(runs); note != "" {
		mode += ", " + note
	}
	fmt.Fprintf(w, "warmup %gs, measured %gs, %s%s, %s; host %s, %d cpus, kernel %s\n",
		st.WarmupS, st.DurationS, roundsText(st), orderText(st), mode, st.Env.Hostname, st.Env.CPUs, st.Env.Kernel)
	fmt.Fprintln(w, "tiers:")
	names := sortedTierNames(st)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range names {
		t := st.Tiers[n]
		d := "durable"
		if !t.Durable {
			d = "NOT DURABLE (" + t.Note + ")"
		}
		if t.Emulated {
			d += ", emulated"
			if t.Emulation != "" {
				d += " (" + t.Emulation + ")"
			}
			if t.EmulationCheck != "" {
				d += ": " + t.EmulationCheck
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", n, t.Path, t.FSType, t.Device, d, ProbeText(st.Probes[n]))
	}
	tw.Flush()
	fmt.Fprintln(w, "placements:")
	for _, p := range st.Placements {
		base := ""
		if st.IsBaseline(p) {
			base = "  (baseline)"
		}
		fmt.Fprintf(w, "  %s: %s%s\n", p.Name, PlacementText(p), base)
	}
	fmt.Fprintln(w)

	a := stats.Analyze(st, runs)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"durability", "clients"}
	for _, p := range st.Placements {
		header = append(header, p.Name+" "+st.ThroughputUnit(), "p99")
		if !st.IsBaseline(p) {
			header = append(header, "vs "+st.BaselineOf(p))
		}
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			row := []string{d, fmt.Sprint(c)}
			for _, p := range st.Placements {
				g := a.Group(stats.Key{Series: p.Name, Durability: d, Clients: c})
				row = append(row, cellThroughput(g), cellP99(g))
				if !st.IsBaseline(p) {
					row = append(row, cellRatio(g))
				}
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\n"+MethodNote(st))
	cpuTable(w, st, a)
	journalTable(w, st, a)
	fmt.Fprintln(w)
	for _, v := range Verdicts(st, a, 0) {
		fmt.Fprintln(w, v)
	}
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
		fmt.Fprintln(w, "note: "+n)
	}
	return nil
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
			lines = append(lines, fmt.Sprintf("  %s c=%d %s: %s", r.Durability, r.Clients, r.Placement, r.Bottleneck.Text))
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
