package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// HeadlineClients picks the client count the verdict sentences speak of:
// want if the study has it, else the largest client count (where placement
// differences under load show most).
func HeadlineClients(st *results.Study, want int) int {
	for _, c := range st.Clients {
		if c == want {
			return c
		}
	}
	best := 0
	for _, c := range st.Clients {
		if c > best {
			best = c
		}
	}
	return best
}

// durabilityPhrase says in words what a durability mode is.
func durabilityPhrase(d string) string {
	switch d {
	case "sync":
		return "With synced commits"
	case "nosync":
		return "With unsynced commits (WAL written, no fsync)"
	case "async":
		return "With asynchronous commits"
	case "nowal":
		return "Without a WAL"
	}
	return "With durability " + d
}

// Verdicts returns one sentence per durability mode answering the study's
// question at the given client count, e.g. "With synced commits, at 16
// clients, wal-ram delivers 2.10x (95% CI 1.90-2.30x) the throughput of
// all-disk; all-ram 2.40x (95% CI 2.20-2.60x)." A side without an ok run is
// named with why, never given a ratio: "wal-quick: no ok run (2 failed:
// tier quick full), nothing to compare".
func Verdicts(st *results.Study, a *stats.Analysis, clients int) []string {
	var out []string
	for _, d := range st.Durability {
		if s := verdict(st, a, d, clients); s != "" {
			out = append(out, s)
		}
	}
	out = append(out, durabilityVerdicts(st, a, clients)...)
	return append(out, sweepVerdicts(st, a, clients)...)
}

// sweepVerdicts compares, for each swept dimension, each further value
// with the dimension's first, the rest held equal, on every placement:
// "With synced commits, at 16 clients, heap=4g against heap=1g: all-sata
// 1.10x (95% CI ...); all-pmem ..." and "warm against cold: ...". This is
// the question of a cache or heap sweep (how much does a bigger cache
// buy?), which the baseline comparison, made within one combination,
// leaves out.
func sweepVerdicts(st *results.Study, a *stats.Analysis, clients int) []string {
	var out []string
	for _, d := range st.Durability {
		for i, dim := range st.Dims() {
			for _, v := range dim.Labels[1:] {
				var parts []string
				for _, p := range st.Placements {
					if len(p.Settings) <= i || p.Settings[i] != v {
						continue
					}
					q, ok := sameBut(st, p, i, dim.Labels[0])
					if !ok {
						continue
					}
					g := a.Group(stats.Key{Series: p.Name, Durability: d, Clients: clients})
					base := a.Group(stats.Key{Series: q.Name, Durability: d, Clients: clients})
					if g == nil || base == nil {
						continue
					}
					name := strings.Join(append([]string{p.Of}, slices.Delete(slices.Clone(p.Settings), i, i+1)...), " ")
					parts = append(parts, name+" "+versusText(g, base, v, dim.Labels[0]))
				}
				if len(parts) > 0 {
					out = append(out, fmt.Sprintf("%s, at %d clients, %s against %s: %s.", durabilityPhrase(d), clients, v, dim.Labels[0],
						strings.Join(parts, "; ")))
				}
			}
		}
	}
	return out
}

// sameBut finds the series of the same placement as p whose swept value
// of dimension i is v and whose other values are p's.
func sameBut(st *results.Study, p results.Placement, i int, v string) (results.Placement, bool) {
	want := slices.Clone(p.Settings)
	want[i] = v
	for _, q := range st.Placements {
		if q.Of == p.Of && slices.Equal(q.Settings, want) {
			return q, true
		}
	}
	return results.Placement{}, false
}

// verdict is Verdicts' sentence for durability d, "" when the study has no
// placement to compare. Series are compared with their own baseline (the
// baseline placement in the same swept combination): one clause per
// baseline.
func verdict(st *results.Study, a *stats.Analysis, d string, clients int) string {
	var baselines []string
	byBase := map[string][]results.Placement{}
	for _, p := range st.Placements {
		b := st.BaselineOf(p)
		if !slices.Contains(baselines, b) {
			baselines = append(baselines, b)
		}
		if !st.IsBaseline(p) {
			byBase[b] = append(byBase[b], p)
		}
	}
	var clauses []string
	for _, b := range baselines {
		if c := verdictClause(st, a, b, byBase[b], d, clients); c != "" {
			clauses = append(clauses, c)
		}
	}
	if len(clauses) == 0 {
		return ""
	}
	return fmt.Sprintf("%s, at %d clients, ", durabilityPhrase(d), clients) + strings.Join(clauses, "; ") + "."
}

// verdictClause compares placements with their baseline series base:
// "wal-ram delivers 2.10x (95% CI 1.90-2.30x, better) the throughput of
// all-disk; all-ram 2.40x (...)".
func verdictClause(st *results.Study, a *stats.Analysis, base string, ps []results.Placement, d string, clients int) string {
	var measured, missing []string
	noInterval := 0
	for _, p := range ps {
		g := a.Group(stats.Key{Series: p.Name, Durability: d, Clients: clients})
		switch {
		case g == nil:
			continue
		case g.N == 0:
			missing = append(missing, p.Name+": "+g.NoRunText())
			continue
		case g.Verdict == stats.NoInterval:
			noInterval = g.N
			measured = append(measured, fmt.Sprintf("%s %.2fx", p.Name, g.Ratio))
			continue
		}
		measured = append(measured, p.Name+" "+RatioText(g))
	}
	if len(measured) == 0 && len(missing) == 0 {
		return ""
	}
	if bg := a.Group(stats.Key{Series: base, Durability: d, Clients: clients}); bg != nil && bg.N == 0 {
		return fmt.Sprintf("there is nothing to compare: the baseline %s has %s", base, bg.NoRunText())
	}
	var s string
	if len(measured) > 0 {
		first := measured[0]
		if i := strings.Index(first, " "); i > 0 {
			first = first[:i] + " " + verb(st) + first[i:] + " the " + throughputNoun(st) + " of " + base
		}
		s = strings.Join(append([]string{first}, measured[1:]...), "; ")
		if noInterval > 0 {
			s += fmt.Sprintf(" (no confidence interval from %d repeat(s); use repeat: %d or more)", noInterval, stats.MinRepeats)
		}
	}
	if len(missing) > 0 {
		gap := strings.Join(missing, "; ") + ", nothing to compare"
		if s == "" {
			s = gap
		} else {
			s += "; " + gap
		}
	}
	return s
}

// durabilityVerdicts compares each further durability mode with the
// study's first on every placement (what FSYNC costs against LOG_ONLY),
// e.g. "At 128 clients, sync against async on each placement: ssd 0.35x
// (95% CI 0.33-0.37x, worse); ...". Placements that pin their own mode
// run the same in every row and are left out.
func durabilityVerdicts(st *results.Study, a *stats.Analysis, clients int) []string {
	if len(st.Durability) < 2 {
		return nil
	}
	ref := st.Durability[0]
	var out []string
	for _, d := range st.Durability[1:] {
		var parts []string
		for _, p := range st.Placements {
			if p.Durability != "" {
				continue
			}
			g := a.Group(stats.Key{Series: p.Name, Durability: d, Clients: clients})
			base := a.Group(stats.Key{Series: p.Name, Durability: ref, Clients: clients})
			if g == nil || base == nil {
				continue
			}
			parts = append(parts, p.Name+" "+versusText(g, base, d, ref))
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("At %d clients, durability %s against %s on each placement: %s.", clients, d, ref, strings.Join(parts, "; ")))
		}
	}
	return out
}

// versusText is g's ratio to base (the same placement in durability mode
// ref), or which of the two has no ok run and why.
func versusText(g, base *stats.Group, d, ref string) string {
	var missing []string
	for _, side := range []struct {
		g    *stats.Group
		mode string
	}{{g, d}, {base, ref}} {
		if side.g.N == 0 {
			missing = append(missing, side.mode+": "+side.g.NoRunText())
		}
	}
	if len(missing) > 0 {
		return "(" + strings.Join(missing, "; ") + "), nothing to compare"
	}
	return RatioText(stats.Versus(g, base))
}

// RatioText renders a group's ratio to the baseline with its CI and verdict;
// for a group with nothing to compare, why.
func RatioText(g *stats.Group) string {
	switch g.Verdict {
	case stats.NoData:
		if g.N == 0 {
			return g.NoRunText() + ", nothing to compare"
		}
		return "nothing to compare: the baseline has no ok run"
	case stats.NoInterval:
		return fmt.Sprintf("%.2fx (no interval: %d repeat(s); use repeat: %d or more)", g.Ratio, g.N, stats.MinRepeats)
	case stats.IsBaseline:
		if g.N == 0 {
			return "baseline, " + g.NoRunText()
		}
		return "1.00x (baseline)"
	}
	return fmt.Sprintf("%.2fx (95%% CI %.2f-%.2fx, %s)", g.Ratio, g.RatioCI[0], g.RatioCI[1], g.Verdict)
}

// NotDurableNotes names the tiers whose figures are not durable or emulated.
func NotDurableNotes(st *results.Study) []string {
	var out []string
	for _, n := range sortedTierNames(st) {
		t := st.Tiers[n]
		if !t.Durable {
			out = append(out, fmt.Sprintf("Tier %s (%s, %s) is not durable: %s.", n, t.Path, t.FSType, t.Note))
		}
		if t.Emulated {
			out = append(out, fmt.Sprintf("Tier %s is emulated: its speed is injected, not measured hardware.", n))
		}
	}
	return out
}

// ProbeText summarises a tier's stored fio figures in one line.
func ProbeText(p *results.Probe) string {
	if p == nil || p.Tier.Fio == nil {
		return "not probed"
	}
	f := p.Tier.Fio
	return fmt.Sprintf("fsync p50 %s, sync ceiling %.0f/s, 4k randwrite %.0f IOPS (qd32), seq write %.0f MB/s (%s)",
		hist.FormatMicros(f.FsyncLat.P50), f.SyncCeilingPerS, f.RandWriteQD32.IOPS, f.SeqWriteMBps, p.TakenAt.UTC().Format("2006-01-02"))
}

// BottleneckText is a run's bottleneck sentence, or "-".
func BottleneckText(b *results.Bottleneck) string {
	if b == nil {
		return "-"
	}
	return b.Text
}

// EvidenceText lists the figures a bottleneck sentence rests on, by name in
// order, e.g. "flush_await_ms=0.07 flushes_per_s=4922", or "-".
func EvidenceText(b *results.Bottleneck) string {
	if b == nil || len(b.Evidence) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(b.Evidence))
	for _, k := range slices.Sorted(maps.Keys(b.Evidence)) {
		parts = append(parts, k+"="+strconv.FormatFloat(b.Evidence[k], 'f', evidenceDecimals(b.Evidence[k]), 64))
	}
	return strings.Join(parts, " ")
}

// evidenceDecimals keeps three significant figures for small values
// (latencies in ms) and none for large or whole ones (rates, counts).
func evidenceDecimals(v float64) int {
	switch a := math.Abs(v); {
	case a == math.Trunc(a) || a >= 100:
		return 0
	case a >= 10:
		return 1
	case a >= 1:
		return 2
	}
	return 3
}

// VerifiedText says what invariant check held after a run, or "-".
func VerifiedText(r results.Run) string {
	if !r.Verified {
		return "-"
	}
	if r.Verification == "" {
		return "yes"
	}
	return "yes: " + r.Verification
}

// throughputNoun names what the verdicts compare: "throughput", or the
// workload's own figure ("tpmC", "elapsed time per query set").
func throughputNoun(st *results.Study) string {
	if st.Metric != nil {
		return st.Metric.Name
	}
	return "throughput"
}

// verb says what a series does with the figure: delivers a rate, takes a
// time.
func verb(st *results.Study) string {
	if st.HigherIsBetter() {
		return "delivers"
	}
	return "takes"
}

// baselineShort names the baseline in a header or an axis: the placement,
// or "baseline" when each swept combination has its own.
func baselineShort(st *results.Study) string {
	if len(st.Dims()) > 0 {
		return "baseline"
	}
	return st.Baseline
}

// BuffersText says how the engine's own cache served the run's page
// requests, "99.9% hits, 16 reads", or "-" for engines without counters:
// the proof of a cold or warm start.
func BuffersText(r results.Run) string {
	if r.Telemetry == nil || r.Telemetry.Engine.Buffers == nil {
		return "-"
	}
	b := r.Telemetry.Engine.Buffers
	return fmt.Sprintf("%.1f%% hits, %d reads", b.HitPct, b.Reads)
}
