package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/telemetry"
)

// runCPU is a run's CPU over its measured window, in percent of one core:
// the engine's (its process tree where sampled) and its load generator's;
// loadPerOp is the load generator's CPU per operation in µs. load is nil
// when the run recorded none.
type runCPU struct {
	engine    float64
	load      *telemetry.LoadGenSummary
	loadPct   float64
	loadPerOp float64
}

func cpuOf(r results.Run) runCPU {
	t := r.Telemetry
	if t == nil {
		return runCPU{}
	}
	c := runCPU{engine: t.Engine.CPUPct, load: t.LoadGen}
	if t.Engine.TreeCPUPct > 0 {
		c.engine = t.Engine.TreeCPUPct
	}
	if t.LoadGen != nil {
		c.loadPct, c.loadPerOp = t.LoadGen.CPUPct, t.LoadGen.CPUUsPerOp
	}
	return c
}

// medianCPU is the median of each figure over runs; the load generator's
// name and sharing come from the first run that recorded one.
func medianCPU(runs []results.Run) runCPU {
	var eng, pct, perOp []float64
	var m runCPU
	for _, r := range runs {
		c := cpuOf(r)
		eng = append(eng, c.engine)
		if c.load != nil {
			if m.load == nil {
				m.load = c.load
			}
			pct, perOp = append(pct, c.loadPct), append(perOp, c.loadPerOp)
		}
	}
	if len(eng) > 0 {
		m.engine = stats.Median(eng)
	}
	if len(pct) > 0 {
		m.loadPct, m.loadPerOp = stats.Median(pct), stats.Median(perOp)
	}
	return m
}

func pctText(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", v)
}

// loadText names the load generator with its CPU; a driver inside the
// engine's process is said to be there rather than split from it.
func (c runCPU) loadText() string {
	switch {
	case c.load == nil:
		return "-"
	case c.load.SharesEngine:
		return c.load.Name + " (in the engine)"
	case c.load.LaneThreads > 0:
		return fmt.Sprintf("%s's lanes %.0f%%", c.load.Name, c.loadPct)
	}
	return fmt.Sprintf("%s %.0f%%", c.load.Name, c.loadPct)
}

func (c runCPU) perOpText() string {
	if c.load == nil || c.loadPerOp <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f µs", c.loadPerOp)
}

// perOpRatioText is a group's load generator CPU per operation against its
// baseline's: "0.85x [0.80-0.91]", or "-".
func perOpRatioText(g *stats.Group) string {
	c, ok := g.LoadPerOpRatio()
	switch {
	case !ok:
		return "-"
	case c.ShownCI() == nil:
		return fmt.Sprintf("%.2fx", c.Ratio)
	}
	ci := c.ShownCI()
	return fmt.Sprintf("%.2fx [%.2f-%.2f] %s", c.Ratio, ci[0], ci[1], c.Verdict)
}

// cpuTable writes, per durability, client count and series, the median
// CPU of the engine and of the load generator over the measured window:
// whether the clients took CPU the server needed. Nothing when no run
// recorded a load generator (runs stored before it was sampled).
func cpuTable(w io.Writer, st *results.Study, a *stats.Analysis) {
	var rows [][]string
	any, lanes := false, false
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			for _, p := range st.Placements {
				g := a.Group(stats.Key{Series: p.Name, Durability: d, Clients: c})
				if g == nil || len(g.Runs) == 0 {
					continue
				}
				m := medianCPU(g.Runs)
				any = any || m.load != nil
				lanes = lanes || m.load != nil && m.load.LaneThreads > 0
				rows = append(rows, []string{d, fmt.Sprint(c), p.Name, pctText(m.engine), m.loadText(), m.perOpText(), perOpRatioText(g)})
			}
		}
	}
	if !any {
		return
	}
	fmt.Fprintln(w, "\n"+wrap("CPU over the measured window, % of one core (medians over rounds); per op: the load generator's CPU per operation, and its ratio to the baseline series', paired by round [95% CI] with its verdict (lower is better):", showWidth, "", ""))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  durability\tclients\tseries\tengine\tload generator\tper op\tper op vs baseline")
	for _, r := range rows {
		fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
	}
	tw.Flush()
	if lanes {
		fmt.Fprintln(w, wrap("tierbench's lanes: the threads its clients ran on, without the rest of its process (telemetry, progress), which a standard tool's figure does not carry either", showWidth, "  ", "    "))
	}
}

// journalTable writes, per group, the writes and flushes per second on the
// journal's tier beside throughput, when the study measured them.
func journalTable(w io.Writer, st *results.Study, a *stats.Analysis) {
	var rows [][]string
	for _, g := range a.Groups {
		// A read-only workload's stray writes are no journal figure.
		if g.JournalWritesMedian <= 0 || g.JournalFlushesMedian < 1 {
			continue
		}
		ci := ""
		if g.JournalWritesCI != nil {
			ci = fmt.Sprintf(" [%.0f-%.0f]", g.JournalWritesCI[0], g.JournalWritesCI[1])
		}
		rows = append(rows, []string{g.Durability, fmt.Sprint(g.Clients), g.Series, fmt.Sprintf("%.0f", g.ThroughputMedian),
			fmt.Sprintf("%.0f%s", g.JournalWritesMedian, ci), fmt.Sprintf("%.0f", g.JournalFlushesMedian)})
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nJournal: writes and flushes per second on the device of the commit log's tier (WAL, redo log), medians over rounds:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  durability\tclients\tseries\t"+st.ThroughputUnit()+"\tjournal writes/s\tflushes/s")
	for _, r := range rows {
		fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
	}
	tw.Flush()
}
