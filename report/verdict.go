package report

import (
	"fmt"
	"strings"

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
// all-disk; all-ram 2.40x (95% CI 2.20-2.60x)."
func Verdicts(st *results.Study, a *stats.Analysis, clients int) []string {
	var out []string
	for _, d := range st.Durability {
		var parts []string
		noInterval := 0
		for _, p := range st.Placements {
			if p.Name == st.Baseline {
				continue
			}
			g := a.Group(stats.Key{Placement: p.Name, Durability: d, Clients: clients})
			if g == nil {
				continue
			}
			text := RatioText(g)
			if g.Verdict == stats.NoInterval {
				noInterval = g.N
				text = fmt.Sprintf("%.2fx", g.Ratio)
			}
			parts = append(parts, p.Name+" "+text)
		}
		if len(parts) == 0 {
			continue
		}
		first := parts[0]
		if i := strings.Index(first, " "); i > 0 {
			first = first[:i] + " delivers" + first[i:] + " the throughput of " + st.Baseline
		}
		s := fmt.Sprintf("%s, at %d clients, %s", durabilityPhrase(d), clients, first)
		if len(parts) > 1 {
			s += "; " + strings.Join(parts[1:], "; ")
		}
		if noInterval > 0 {
			s += fmt.Sprintf(" (no confidence interval from %d repeat(s); use repeat: %d or more)", noInterval, stats.MinRepeats)
		}
		out = append(out, s+".")
	}
	return append(out, durabilityVerdicts(st, a, clients)...)
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
			g := a.Group(stats.Key{Placement: p.Name, Durability: d, Clients: clients})
			base := a.Group(stats.Key{Placement: p.Name, Durability: ref, Clients: clients})
			if g == nil || base == nil {
				continue
			}
			parts = append(parts, p.Name+" "+RatioText(stats.Versus(g, base)))
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("At %d clients, durability %s against %s on each placement: %s.", clients, d, ref, strings.Join(parts, "; ")))
		}
	}
	return out
}

// RatioText renders a group's ratio to the baseline with its CI and verdict.
func RatioText(g *stats.Group) string {
	switch g.Verdict {
	case stats.NoData:
		if g.Failed > 0 {
			return "failed"
		}
		return "not measured"
	case stats.NoInterval:
		return fmt.Sprintf("%.2fx (no interval: %d repeat(s); use repeat: %d or more)", g.Ratio, g.N, stats.MinRepeats)
	case stats.IsBaseline:
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
		FormatMicros(f.FsyncLat.P50), f.SyncCeilingPerS, f.RandWriteQD32.IOPS, f.SeqWriteMBps, p.TakenAt.UTC().Format("2006-01-02"))
}

// BottleneckText is a run's bottleneck sentence, or "-".
func BottleneckText(b *results.Bottleneck) string {
	if b == nil {
		return "-"
	}
	return b.Text
}
