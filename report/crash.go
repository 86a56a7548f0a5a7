package report

// This file holds the crash trade-off: for each placement and durability
// mode, what a crash cost (lost acknowledged writes, recovery time) beside
// what the mode bought (throughput without a crash), and where a measured
// loss contradicts what the mode promises.

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/profile"
)

// CrashCost is one cell of the trade-off: a placement in a durability mode
// at a client count, under one kind of crash. `show --format json` carries
// it as it is (crash_costs), per-run figures included, for readers that
// phrase their own answer.
type CrashCost struct {
	Placement string `json:"placement"`
	// Settings are the swept options (and cache state, rate) its runs
	// ran with, apart from the crash kind ("full_page_writes=false"):
	// a study that sweeps a protection compares its crash costs by them.
	Settings   string `json:"settings,omitempty"`
	Durability string `json:"durability"`
	Clients    int    `json:"clients"`
	Kind       string `json:"kind"`
	// Components puts each component on its tier, for a sentence that
	// says where the WAL was and a join with the study's tiers (durable,
	// pmem_emulated).
	Components map[string]string `json:"components"`
	// Nodes is how many nodes a process crash killed; 0: all.
	Nodes int `json:"nodes,omitempty"`
	// Crashed counts the ok runs that crashed; Checked those whose
	// acknowledged writes were checked.
	Crashed int `json:"crashed"`
	Checked int `json:"checked"`
	// Lost and Recovery are the checked runs' lost acknowledged writes
	// and every crashed run's recovery seconds (0 for one that did not
	// come back is left out); Acked, run by run with Lost, how many
	// writes each checked run had acknowledged (Lost == Acked: all lost).
	Lost     []float64 `json:"lost"`
	Acked    []float64 `json:"acked"`
	Recovery []float64 `json:"recovery_s"`
	// Unit is what Lost counts ("record fields").
	Unit string `json:"unit,omitempty"`
	// WindowMS is the oldest lost write's age at the crash, the most of
	// any run.
	WindowMS float64 `json:"lost_window_ms"`
	// Inconsistent are the details of runs whose engine did not come
	// back or whose invariant broke.
	Inconsistent []string `json:"inconsistent,omitempty"`
	// Throughput is the median of the same cell's runs without a crash,
	// NoCrash how many there were (0: the study ran none).
	Throughput float64 `json:"throughput_no_crash"`
	NoCrash    int     `json:"runs_no_crash"`
	// Contradiction, when set, says how a loss contradicts the mode's
	// promise to survive this crash.
	Contradiction string `json:"contradiction,omitempty"`
	// Replayed is what the engine said its last recovery replayed.
	Replayed string `json:"replayed,omitempty"`
	// CorruptChecked counts the crashed runs whose state the engine's own
	// check examined (or that did not start, which counts as corrupt),
	// Corrupt those found corrupt, CorruptDetail the first one's message.
	CorruptChecked int    `json:"corrupt_checked"`
	Corrupt        int    `json:"corrupt"`
	CorruptDetail  string `json:"corrupt_detail,omitempty"`
	// Model says what the crash's power-loss model does and does not
	// model (engine.ModelLabel); "" for a process crash.
	Model string `json:"model,omitempty"`
	// UnloggedCuts counts the reorder cuts where writes found a tier's
	// write log full, Unlogged those writes: lost whole, not drawn.
	UnloggedCuts int   `json:"unlogged_cuts,omitempty"`
	Unlogged     int64 `json:"unlogged,omitempty"`
}

// CrashCosts gathers the trade-off from a study's ok runs (before the
// series view: placements as the study names them), in the study's order.
func CrashCosts(st *results.Study, runs []results.Run) []CrashCost {
	if len(st.Crashes) == 0 || slices.Equal(st.Crashes, []string{"none"}) {
		return nil
	}
	type key struct {
		p, set, d string
		c         int
	}
	noCrash := map[key][]float64{}
	cells := map[key]map[string]*CrashCost{}
	tiers := map[key]string{}
	for _, r := range runs {
		if r.Status != results.RunOK {
			continue
		}
		k := key{r.Placement, WithoutCrashOf(st, r), r.Durability, r.Clients}
		if r.Crash == nil {
			noCrash[k] = append(noCrash[k], st.Throughput(r))
			continue
		}
		if cells[k] == nil {
			cells[k] = map[string]*CrashCost{}
		}
		c := cells[k][r.Crash.Kind]
		if c == nil {
			c = &CrashCost{Placement: r.Placement, Settings: k.set, Durability: r.Durability, Clients: r.Clients, Kind: r.Crash.Kind, Nodes: r.Crash.Nodes, Components: r.Components,
				Model: engine.ModelLabel(r.Crash.Kind)}
			cells[k][r.Crash.Kind] = c
		}
		tiers[k] = "on " + results.ComponentsText(r.Components)
		addCrash(c, r, tiers[k])
	}
	var out []CrashCost
	for _, p := range st.Placements {
		for _, set := range st.SettingsOrder() {
			for _, d := range st.Durability {
				for _, n := range st.Clients {
					k := key{p.Name, set, d, n}
					for _, kind := range st.Crashes {
						c := cells[k][kind]
						if c == nil {
							continue
						}
						c.NoCrash = len(noCrash[k])
						if c.NoCrash > 0 {
							c.Throughput = stats.Median(noCrash[k])
						}
						out = append(out, *c)
					}
				}
			}
		}
	}
	return out
}

// WithoutCrashOf is run r's swept settings apart from its crash kind.
func WithoutCrashOf(st *results.Study, r results.Run) string {
	return results.WithoutCrash(strings.Fields(st.VariantOf(r)))
}

// Name is the cell's placement with its settings, as tables and
// sentences name it ("on-4k full_page_writes=false").
func (c CrashCost) Name() string {
	if c.Settings == "" {
		return c.Placement
	}
	return c.Placement + " " + c.Settings
}

// addCrash adds run r's crash to its cell.
func addCrash(c *CrashCost, r results.Run, tiers string) {
	cr := r.Crash
	c.Crashed++
	if cr.Replayed != "" {
		c.Replayed = cr.Replayed
	}
	if cr.RecoveryS > 0 {
		c.Recovery = append(c.Recovery, cr.RecoveryS)
	}
	if !cr.Consistent {
		c.Inconsistent = append(c.Inconsistent, cr.Detail)
	}
	if cr.CorruptChecked || cr.Corrupt {
		c.CorruptChecked++
	}
	if cr.Unlogged > 0 {
		c.UnloggedCuts++
		c.Unlogged += cr.Unlogged
	}
	if cr.Corrupt {
		c.Corrupt++
		if c.CorruptDetail == "" {
			c.CorruptDetail = cr.CorruptDetail
		}
	}
	if !cr.Checked {
		return
	}
	c.Checked++
	c.Lost = append(c.Lost, float64(cr.LostAcked))
	c.Acked = append(c.Acked, float64(cr.Acked))
	c.WindowMS = max(c.WindowMS, cr.LostWindowMS)
	if c.Unit == "" {
		c.Unit = lostUnit(cr.Detail)
	}
	if cr.Promised && cr.LostAcked > 0 && c.Contradiction == "" {
		c.Contradiction = fmt.Sprintf("%s promises to keep every acknowledged write through a %s crash, and run %d lost %d (%s)",
			r.Durability, cr.Kind, r.Seq, cr.LostAcked, tiers)
	}
}

// lostUnit reads the unit from a check's detail ("3 of 40 record fields
// with ..."), "writes" when it says none.
func lostUnit(detail string) string {
	f := strings.Fields(detail)
	if len(f) > 4 && f[1] == "of" {
		if i := slices.Index(f, "with"); i > 3 {
			return strings.Join(f[3:i], " ")
		}
	}
	return "writes"
}

// Sentence says what the cell bought and what its crash cost, in words a
// reader can act on.
func (c CrashCost) Sentence() string {
	var b strings.Builder
	clients := "clients"
	if c.Clients == 1 {
		clients = "client"
	}
	fmt.Fprintf(&b, "%s on %s, %d %s: ", c.Durability, c.Name(), c.Clients, clients)
	if c.NoCrash > 0 {
		fmt.Fprintf(&b, "%s ops/s without a crash (median of %d); ", humanize.Commaf(float64(int64(c.Throughput))), c.NoCrash)
	}
	fmt.Fprintf(&b, "%s ", crashName(c.Kind, c.Nodes))
	switch {
	case c.Checked == 0 && len(c.Inconsistent) == c.Crashed:
		b.WriteString("left nothing to check")
	case c.Checked == 0:
		b.WriteString("was not checked for lost writes (the workload keeps no record of them)")
	case stats.Mean(c.Lost) == 0:
		fmt.Fprintf(&b, "lost no acknowledged write in %d of %d runs", c.Checked, c.Checked)
	case c.lostAll():
		fmt.Fprintf(&b, "lost every acknowledged write of the window in %d of %d runs (%s %s on average; the oldest %s ms before the crash)",
			c.Checked, c.Checked, figure(stats.Mean(c.Lost)), c.Unit, figure(c.WindowMS))
	case c.ackedKnown():
		lost := figure(stats.Mean(c.Lost))
		if ci := ciText(stats.MeanInterval(c.Lost), figure); ci != "" {
			lost += " (" + strings.TrimPrefix(ci, ", ") + ")"
		}
		fmt.Fprintf(&b, "lost %s of %s acknowledged %s (means of %d runs; the oldest %s ms before the crash)",
			lost, figure(stats.Mean(c.Acked)), c.Unit, c.Checked, figure(c.WindowMS))
	default:
		fmt.Fprintf(&b, "lost %s acknowledged %s (mean of %d runs%s; the oldest %s ms before the crash)",
			figure(stats.Mean(c.Lost)), c.Unit, c.Checked, ciText(stats.MeanInterval(c.Lost), figure), figure(c.WindowMS))
	}
	if len(c.Recovery) > 0 {
		fmt.Fprintf(&b, "; recovery %ss%s", figure(stats.Mean(c.Recovery)), ciText(stats.MeanInterval(c.Recovery), figure))
	}
	if c.Replayed != "" {
		fmt.Fprintf(&b, " (the last: %s)", c.Replayed)
	}
	if n := len(c.Inconsistent); n > 0 {
		fmt.Fprintf(&b, "; %d of %d runs came back INCONSISTENT: %s", n, c.Crashed, firstLine(c.Inconsistent[0]))
	}
	switch {
	case c.Corrupt > 0:
		fmt.Fprintf(&b, "; CORRUPT in %d of %d cuts by the engine's own check: %s", c.Corrupt, c.CorruptChecked, firstLine(c.CorruptDetail))
	case c.CorruptChecked > 0:
		fmt.Fprintf(&b, "; corrupt in 0 of %d cuts by the engine's own check", c.CorruptChecked)
	}
	if c.UnloggedCuts > 0 {
		fmt.Fprintf(&b, "; in %d of %d cuts a tier's write log was full, so %d unsynced writes were lost whole rather than reordered",
			c.UnloggedCuts, c.Crashed, c.Unlogged)
	}
	return b.String()
}

// corruptText is the corrupt column: "k/N" cuts the engine's own check
// found corrupt, "-" when it checked none.
func (c CrashCost) corruptText() string {
	if c.CorruptChecked == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", c.Corrupt, c.CorruptChecked)
}

// modelLabels are the power-loss models of costs, each once, saying what
// it does and does not model.
func modelLabels(costs []CrashCost) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range costs {
		if c.Model != "" && !seen[c.Kind] {
			seen[c.Kind] = true
			out = append(out, c.Kind+" is "+c.Model)
		}
	}
	return out
}

// ackedKnown reports whether every checked run says how many writes it
// had acknowledged (runs stored before crash.acked do not).
func (c CrashCost) ackedKnown() bool {
	if c.Checked == 0 || len(c.Acked) != len(c.Lost) {
		return false
	}
	for _, a := range c.Acked {
		if a <= 0 {
			return false
		}
	}
	return true
}

// lostAll reports whether every checked run lost every write it had
// acknowledged: nothing of the window survived (a WAL on tmpfs).
func (c CrashCost) lostAll() bool {
	if c.Checked == 0 || len(c.Acked) != len(c.Lost) {
		return false
	}
	for i, l := range c.Lost {
		if l == 0 || l != c.Acked[i] {
			return false
		}
	}
	return true
}

// crashName names a crash kind in a sentence, with the nodes a partial
// crash killed.
func crashName(kind string, nodes int) string {
	k, known := engine.FindCrash(kind)
	switch {
	case nodes == 1:
		return "a " + kind + " crash of 1 node"
	case nodes > 1:
		return fmt.Sprintf("a %s crash of %d nodes", kind, nodes)
	case known && strings.Contains(kind, ":"):
		_, model, _ := strings.Cut(kind, ":")
		return k.Phrase + " (model " + model + ")"
	case known:
		return k.Phrase
	}
	return "a " + kind + " crash"
}

// firstLine is s up to its first line break, with a pointer to the rest
// (a server's log tail) when there is more.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSuffix(strings.TrimSpace(s[:i]), ":") + " (its log: show --format json, runs[].crash.detail)"
	}
	return s
}

// ciText is ", 95% CI [a-b]" or "" without an interval.
func ciText(ci *[2]float64, f func(float64) string) string {
	if ci == nil {
		return ""
	}
	return fmt.Sprintf(", 95%% CI [%s-%s]", f(max(ci[0], 0)), f(ci[1]))
}

// crashTable writes the trade-off for show: one line per cell, then every
// contradiction.
func crashTable(w io.Writer, costs []CrashCost) {
	if len(costs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nwhat a crash costs (lost acknowledged writes and recovery, beside throughput without a crash):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  placement\tdurability\tclients\tcrash\truns\tops/s no crash\tlost acked (mean)\toldest lost\trecovery\tconsistent\tcorrupt\t")
	for _, c := range costs {
		ops, lost, oldest, rec := "-", "-", "-", "-"
		if c.NoCrash > 0 {
			ops = humanize.Commaf(float64(int64(c.Throughput)))
		}
		if c.Checked > 0 {
			lost = figure(stats.Mean(c.Lost)) + " " + c.Unit
			if c.WindowMS > 0 {
				oldest = figure(c.WindowMS) + " ms"
			}
		}
		if len(c.Recovery) > 0 {
			rec = figure(stats.Mean(c.Recovery)) + " s"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%d/%d\t%s\t\n", c.Name(), c.Durability, c.Clients, c.Kind, c.Crashed,
			ops, lost, oldest, rec, c.Crashed-len(c.Inconsistent), c.Crashed, c.corruptText())
	}
	tw.Flush()
	for _, l := range modelLabels(costs) {
		fmt.Fprintln(w, wrap(l, showWidth, "  ", "    "))
	}
	for _, c := range costs {
		fmt.Fprintln(w, wrap(c.Sentence(), showWidth, "  ", "    "))
	}
	for _, c := range costs {
		if c.Contradiction != "" {
			fmt.Fprintln(w, wrap("CONTRADICTS THE DOCUMENTED MODE: "+c.Contradiction, showWidth, "  ", "    "))
		}
	}
}

// crashCostTable is the trade-off as an HTML table.
func crashCostTable(costs []CrashCost) table {
	t := table{Sortable: true,
		Header: []string{"placement", "durability", "clients", "crash", "runs", "ops/s without a crash", "lost acknowledged (mean)", "95% CI", "oldest lost (ms)", "recovery (s)", "consistent", "corrupt"},
		Num:    []bool{false, false, true, false, true, true, true, false, true, true, false, false}}
	for _, c := range costs {
		ops, lost, ci, oldest, rec := cell{Text: "-"}, cell{Text: "-"}, cell{Text: "-"}, cell{Text: "-"}, cell{Text: "-"}
		if c.NoCrash > 0 {
			ops = cell{Text: humanize.Commaf(float64(int64(c.Throughput))), Sort: numSort(c.Throughput)}
		}
		if c.Checked > 0 {
			m := stats.Mean(c.Lost)
			lost = cell{Text: figure(m) + " " + c.Unit, Sort: numSort(m)}
			ci = cell{Text: strings.TrimPrefix(ciText(stats.MeanInterval(c.Lost), figure), ", 95% CI ")}
			oldest = cell{Text: figure(c.WindowMS), Sort: numSort(c.WindowMS)}
		}
		if len(c.Recovery) > 0 {
			m := stats.Mean(c.Recovery)
			rec = cell{Text: figure(m), Sort: numSort(m)}
		}
		r := row{Cells: []cell{{Text: c.Name()}, {Text: c.Durability}, intCell(c.Clients), {Text: c.Kind}, intCell(c.Crashed),
			ops, lost, ci, oldest, rec, {Text: fmt.Sprintf("%d/%d", c.Crashed-len(c.Inconsistent), c.Crashed)}, {Text: c.corruptText()}}}
		if c.Contradiction != "" {
			r.Class = "contradiction"
		}
		t.Rows = append(t.Rows, r)
	}
	return t
}

// AtomicWriteText says a tier's atomic-write unit, where it comes from
// (declared, a profile's, or its kind's default, assumed where the
// device's is not known) and what the device reports, for show.
func AtomicWriteText(name string, t tier.Info) string {
	s := fmt.Sprintf("%s: atomic writes up to %s, %s", name, profile.AtomicWriteText(t.AtomicWrite), t.AtomicWriteFrom)
	if t.VolatileCache {
		s += "; a volatile write cache (O_DIRECT writes lost at a cut until flushed)"
	}
	if t.DeviceAtomicWrite != "" {
		s += "; " + t.DeviceAtomicWrite
	}
	return s
}
