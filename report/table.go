// Package report renders stored results for people: the terminal table of
// `tierbench show` and the study list. It reads results records only; it
// never talks to an engine.
package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/tierbench/tierbench/results"
)

// Group is the runs of one placement x durability x clients cell over repeats.
type Group struct {
	Placement  string
	Durability string
	Clients    int
	OK         []results.Run
	Failed     []results.Run
}

// Groups collects runs into groups keyed by placement, durability, clients.
func Groups(runs []results.Run) map[GroupKey]*Group {
	out := map[GroupKey]*Group{}
	for _, r := range runs {
		k := GroupKey{r.Placement, r.Durability, r.Clients}
		g, ok := out[k]
		if !ok {
			g = &Group{Placement: r.Placement, Durability: r.Durability, Clients: r.Clients}
			out[k] = g
		}
		if r.Status == results.RunOK {
			g.OK = append(g.OK, r)
		} else {
			g.Failed = append(g.Failed, r)
		}
	}
	return out
}

// GroupKey identifies a group.
type GroupKey struct {
	Placement  string
	Durability string
	Clients    int
}

// MedianThroughput is the median over the group's ok runs (0 if none).
// Statistics across repeats (CIs, verdicts) belong to the stats package;
// the median is what the plain table needs.
func (g *Group) MedianThroughput() float64 {
	return median(g.OK, func(r results.Run) float64 { return r.ThroughputOpsS })
}

// MedianP99 is the median p99 latency in µs over the group's ok runs.
func (g *Group) MedianP99() float64 {
	return median(g.OK, func(r results.Run) float64 { return r.Latency.P99 })
}

func median(runs []results.Run, f func(results.Run) float64) float64 {
	if len(runs) == 0 {
		return 0
	}
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Show writes the study header, its tiers, and per durability and client
// count the throughput and p99 of each placement with its ratio to the baseline.
func Show(w io.Writer, st *results.Study, runs []results.Run) error {
	fmt.Fprintf(w, "study %s  %q  status %s\n", st.ID, st.Name, st.Status)
	fmt.Fprintf(w, "engine %s (%s), workload %s\n", st.Engine, orDash(st.EngineVersion), st.Workload)
	fmt.Fprintf(w, "  %s\n", params(st.WorkloadParams))
	mode := "closed loop"
	if st.TargetRate > 0 {
		mode = fmt.Sprintf("open loop at %.0f ops/s (%s arrivals)", st.TargetRate, st.Arrival)
	}
	fmt.Fprintf(w, "warmup %gs, measured %gs, %d repeat(s), %s; host %s, %d cpus, kernel %s\n",
		st.WarmupS, st.DurationS, st.Repeat, mode, st.Env.Hostname, st.Env.CPUs, st.Env.Kernel)
	fmt.Fprintln(w, "tiers:")
	names := make([]string, 0, len(st.Tiers))
	for n := range st.Tiers {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, n := range names {
		t := st.Tiers[n]
		d := "durable"
		if !t.Durable {
			d = "NOT DURABLE (" + t.Note + ")"
		}
		if t.Emulated {
			d += ", emulated"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", n, t.Path, t.FSType, t.Device, d)
	}
	tw.Flush()
	fmt.Fprintln(w, "placements:")
	for _, p := range st.Placements {
		base := ""
		if p.Name == st.Baseline {
			base = "  (baseline)"
		}
		fmt.Fprintf(w, "  %s: %s%s\n", p.Name, params(p.Components), base)
	}
	fmt.Fprintln(w)

	groups := Groups(runs)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{"durability", "clients"}
	for _, p := range st.Placements {
		header = append(header, p.Name+" ops/s", "p99")
		if p.Name != st.Baseline {
			header = append(header, "vs "+st.Baseline)
		}
	}
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			row := []string{d, fmt.Sprint(c)}
			base := groups[GroupKey{st.Baseline, d, c}]
			for _, p := range st.Placements {
				g := groups[GroupKey{p.Name, d, c}]
				row = append(row, cellThroughput(g), cellP99(g))
				if p.Name != st.Baseline {
					row = append(row, ratio(g, base))
				}
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	tw.Flush()
	if st.Repeat > 1 {
		fmt.Fprintf(w, "\nfigures are medians over %d repeats\n", st.Repeat)
	}
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
	for _, n := range names {
		if !st.Tiers[n].Durable {
			fmt.Fprintf(w, "\nnote: tier %s is not durable; figures for placements that use it are not what durable storage would give.\n", n)
			break
		}
	}
	return nil
}

func cellThroughput(g *Group) string {
	switch {
	case g == nil:
		return "-"
	case len(g.OK) == 0 && len(g.Failed) > 0:
		return "failed"
	case len(g.OK) == 0:
		return "-"
	}
	return fmt.Sprintf("%.0f", g.MedianThroughput())
}

func cellP99(g *Group) string {
	if g == nil || len(g.OK) == 0 {
		return "-"
	}
	return FormatMicros(g.MedianP99())
}

func ratio(g, base *Group) string {
	if g == nil || base == nil || len(g.OK) == 0 || len(base.OK) == 0 || base.MedianThroughput() == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", g.MedianThroughput()/base.MedianThroughput())
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

// FormatMicros prints microseconds with a unit that keeps 3 significant figures.
func FormatMicros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2fs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2fms", us/1e3)
	case us >= 1:
		return fmt.Sprintf("%.1fµs", us)
	default:
		return fmt.Sprintf("%.0fns", us*1e3)
	}
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
