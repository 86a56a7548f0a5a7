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

// HeadlineClients picks the client count a chart of one client count
// shows: want if the study has it, else the largest client count.
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

// Verdicts answers the study's question, one sentence per comparison,
// each summarising every client count (or only clients, when it is not 0):
// "With synced commits, wal-ram delivers 7.60x [7.10-8.20] the throughput
// of all-disk at 1 client, falling to 1.50x [1.40-1.60] at 64 clients:
// better at every client count." Ratios are paired by round with their
// 95% CIs, and the verdict words are stats' four. A side without an ok run
// is named with why, never given a ratio.
func Verdicts(st *results.Study, a *stats.Analysis, clients int) []string {
	cs := st.Clients
	if clients != 0 {
		cs = []int{clients}
	}
	var out []string
	for _, d := range st.Durability {
		out = append(out, baselineVerdicts(st, a, d, cs)...)
	}
	out = append(out, durabilityVerdicts(st, a, cs)...)
	return append(out, sweepVerdicts(st, a, cs)...)
}

// baselineVerdicts compares each series with its baseline in durability d.
func baselineVerdicts(st *results.Study, a *stats.Analysis, d string, cs []int) []string {
	var out []string
	for _, p := range st.Placements {
		if st.IsBaseline(p) {
			continue
		}
		base := st.BaselineOf(p)
		var pts []atCount
		for _, c := range cs {
			g := a.Group(stats.Key{Series: p.Name, Durability: d, Clients: c})
			if g != nil {
				pts = append(pts, atCount{clients: c, cmp: g, base: a.Group(stats.Key{Series: base, Durability: d, Clients: c})})
			}
		}
		if len(pts) == 0 {
			continue
		}
		prefix := durabilityPhrase(d) + ", "
		if baselineNeverRan(pts) {
			out = append(out, fmt.Sprintf("%s%s: there is nothing to compare: the baseline %s has %s.", prefix, p.Name, base, pts[0].base.NoRunText()))
			continue
		}
		out = append(out, prefix+p.Name+" "+span(pts, verb(st)+" ", " the "+throughputNoun(st)+" of "+base)+".")
	}
	return out
}

// baselineNeverRan is true when the baseline has no ok run at any of pts'
// client counts.
func baselineNeverRan(pts []atCount) bool {
	for _, p := range pts {
		if p.base != nil && p.base.N > 0 {
			return false
		}
	}
	return pts[0].base != nil
}

// durabilityVerdicts compares each further durability mode with the
// study's first on every placement (what FSYNC costs against LOG_ONLY):
// "Durability sync against async, on each placement: ssd 0.35x
// [0.33-0.37] at 1 client, ...: worse at every client count; ...".
// Placements that pin their own mode run the same in every row and are
// left out.
func durabilityVerdicts(st *results.Study, a *stats.Analysis, cs []int) []string {
	if len(st.Durability) < 2 {
		return nil
	}
	ref := st.Durability[0]
	var out []string
	for _, d := range st.Durability[1:] {
		var parts []string
		for _, p := range st.Placements {
			if p.Durability != "" || p.CrashRun() {
				continue
			}
			if pts := versusPoints(a, cs, stats.Key{Series: p.Name, Durability: d}, stats.Key{Series: p.Name, Durability: ref}); len(pts) > 0 {
				parts = append(parts, p.Name+" "+span(pts, "", ""))
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("Durability %s against %s, on each placement: %s.", d, ref, strings.Join(parts, "; ")))
		}
	}
	return out
}

// sweepVerdicts compares, for each swept dimension, each further value
// with the dimension's first, the rest held equal, on every placement:
// "With synced commits, heap=4g against heap=1g: all-sata 1.10x [...] at
// 1 client, ...; all-pmem ..." and "warm against cold: ...". This is the
// question of a cache or heap sweep (how much does a bigger cache buy?),
// which the baseline comparison, made within one combination, leaves out.
// The crash dimension is left out: a crash run's window ends at its crash
// and its clients keep a record of their writes, so its throughput is not
// what the crash costs (the crash trade-off, crash.go, says that).
func sweepVerdicts(st *results.Study, a *stats.Analysis, cs []int) []string {
	var out []string
	for _, d := range st.Durability {
		for i, dim := range st.Dims() {
			if dim.Name == results.CrashDim {
				continue
			}
			for _, v := range dim.Labels[1:] {
				var parts []string
				for _, p := range st.Placements {
					if len(p.Settings) <= i || p.Settings[i] != v {
						continue
					}
					q, ok := stats.SameBut(st.Placements, p, i, dim.Labels[0])
					if !ok {
						continue
					}
					pts := versusPoints(a, cs, stats.Key{Series: p.Name, Durability: d}, stats.Key{Series: q.Name, Durability: d})
					if len(pts) == 0 {
						continue
					}
					name := strings.Join(append([]string{p.Of}, slices.Delete(slices.Clone(p.Settings), i, i+1)...), " ")
					parts = append(parts, name+" "+span(pts, "", ""))
				}
				if len(parts) > 0 {
					out = append(out, fmt.Sprintf("%s, %s against %s: %s.", durabilityPhrase(d), v, dim.Labels[0], strings.Join(parts, "; ")))
				}
			}
		}
	}
	return out
}

// versusPoints compares the groups of key g with those of key base (their
// Clients unset) at each client count: the study's judged comparison
// (stats.Analysis.Versus), or, for a pair outside its family, one paired
// by round without the family's guard.
func versusPoints(a *stats.Analysis, cs []int, g, base stats.Key) []atCount {
	var pts []atCount
	for _, c := range cs {
		g.Clients, base.Clients = c, c
		gg, bg := a.Group(g), a.Group(base)
		if gg == nil || bg == nil {
			continue
		}
		cmp := gg
		if gg.N > 0 && bg.N > 0 {
			if cmp = a.Versus(g, base); cmp == nil {
				cmp = stats.Versus(gg, bg)
			}
		}
		pts = append(pts, atCount{clients: c, cmp: cmp, base: bg})
	}
	return pts
}

// atCount is one client count's comparison: cmp holds the ratio to base
// (the analysis' own group for a baseline comparison, a stats.Versus copy
// otherwise).
type atCount struct {
	clients   int
	cmp, base *stats.Group
}

// span summarises a comparison across client counts: the ratio at the
// first and the last (and where the effect is largest, when that is
// neither), each with its 95% CI, then the verdicts: "2.10x [1.90-2.30]
// at 1 client, falling to 1.20x [1.10-1.30] at 64 clients: better at
// every client count". verb goes before the first ratio and of after it
// ("delivers 2.10x [...] the throughput of all-disk at 1 client"). Client
// counts where a side has no ok run are named with why.
func span(pts []atCount, verb, of string) string {
	var ok []atCount
	var gaps []string
	for _, p := range pts {
		switch {
		case p.cmp.N == 0:
			gaps = append(gaps, fmt.Sprintf("at %s: %s", clientsText(p.clients), p.cmp.NoRunText()))
		case p.base == nil || p.base.N == 0:
			name := "the baseline"
			if p.base != nil {
				name += " " + p.base.Series + " has " + p.base.NoRunText()
			}
			gaps = append(gaps, fmt.Sprintf("at %s: %s", clientsText(p.clients), name))
		case p.cmp.Ratio == 0:
			gaps = append(gaps, fmt.Sprintf("at %s: no round has an ok run of both sides", clientsText(p.clients)))
		default:
			ok = append(ok, p)
		}
	}
	// Where no client count has an interval (one round), the reason is
	// said once rather than after every ratio.
	ratio, why := ratioCI, ""
	if len(ok) > 0 && !slices.ContainsFunc(ok, func(p atCount) bool { return p.cmp.RatioCI != nil }) {
		ratio = func(g *stats.Group) string { return fmt.Sprintf("%.2fx", g.Ratio) }
		why = " " + noInterval(ok[0].cmp)
	}
	var s string
	switch len(ok) {
	case 0:
	case 1:
		s = fmt.Sprintf("%s%s%s at %s: %s%s", verb, ratio(ok[0].cmp), of, clientsText(ok[0].clients), ok[0].cmp.Verdict, why)
	default:
		first, last := ok[0], ok[len(ok)-1]
		dir := "rising to"
		if last.cmp.Ratio < first.cmp.Ratio {
			dir = "falling to"
		}
		s = fmt.Sprintf("%s%s%s at %s, %s %s at %s", verb, ratio(first.cmp), of, clientsText(first.clients), dir, ratio(last.cmp), clientsText(last.clients))
		if top := largest(ok); top != first && top != last {
			s += fmt.Sprintf(" (largest: %s at %s)", ratio(top.cmp), clientsText(top.clients))
		}
		s += ": " + verdictsAcross(ok) + why
	}
	if len(gaps) > 0 {
		gap := strings.Join(gaps, "; ") + ", nothing to compare"
		if s == "" {
			return gap
		}
		s += "; " + gap
	}
	return s
}

// largest is the atCount whose ratio is furthest from 1 (either way).
func largest(pts []atCount) atCount {
	top := pts[0]
	for _, p := range pts[1:] {
		if math.Abs(math.Log(p.cmp.Ratio)) > math.Abs(math.Log(top.cmp.Ratio)) {
			top = p
		}
	}
	return top
}

// verdictsAcross says each verdict and where it holds: "better at every
// client count", or "better at 1, 4 and 16 clients, inconclusive at 64".
func verdictsAcross(pts []atCount) string {
	var order []string
	at := map[string][]string{}
	for _, p := range pts {
		v := p.cmp.Verdict
		if _, seen := at[v]; !seen {
			order = append(order, v)
		}
		at[v] = append(at[v], strconv.Itoa(p.clients))
	}
	if len(order) == 1 {
		return order[0] + " at every client count"
	}
	parts := make([]string, len(order))
	for i, v := range order {
		cs := at[v]
		list := cs[0]
		if len(cs) > 1 {
			list = strings.Join(cs[:len(cs)-1], ", ") + " and " + cs[len(cs)-1]
		}
		parts[i] = v + " at " + list
	}
	return strings.Join(parts, ", ")
}

// clientsText is "1 client" or "16 clients".
func clientsText(c int) string {
	if c == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", c)
}

// ratioCI is a ratio with its adjusted CI, "2.10x [1.90-2.30]", or with why
// it has none, "2.10x (no interval: 1 round)".
func ratioCI(g *stats.Group) string {
	if g.RatioCI == nil {
		return fmt.Sprintf("%.2fx %s", g.Ratio, noInterval(g))
	}
	return fmt.Sprintf("%.2fx [%.2f-%.2f]", g.Ratio, g.RatioCI[0], g.RatioCI[1])
}

// noInterval says why a ratio has no interval: "(no interval: 1 round;
// run 2 or more)".
func noInterval(g *stats.Group) string {
	if g.Why != "" {
		return "(no interval: " + g.Why + ")"
	}
	return fmt.Sprintf("(no interval: %d round%s; run %d or more)", g.Pairs, plural(g.Pairs), stats.MinRounds)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
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
	case stats.IsBaseline:
		if g.N == 0 {
			return "baseline, " + g.NoRunText()
		}
		return "1.00x (baseline)"
	}
	if g.RatioCI == nil {
		return ratioCI(g) + ", " + g.Verdict
	}
	return fmt.Sprintf("%.2fx (Holm-adjusted CI %.2f-%.2fx, %s)", g.Ratio, g.RatioCI[0], g.RatioCI[1], g.Verdict)
}

// MethodNote says how the figures and verdicts were computed, for every
// output that shows them.
func MethodNote(st *results.Study) string {
	return fmt.Sprintf("Figures are medians over %s; a figure's [brackets] are the 95%% t interval of its geometric mean (on logs), "+
		"which is near the median for steady runs but is not the median's interval. A ratio is paired, from %d rounds on: the geometric mean of the per-round ratios, which is what the verdict judges "+
		"and so differs a little from the ratio of the medians beside it. %s "+
		"Verdicts: better or worse when the difference is significant at 5%% after Holm's adjustment over every comparison the study judged, "+
		"equivalent when equivalence within ±%s is (two one-sided tests, adjusted alike), inconclusive otherwise. "+
		"A ratio's [brackets] are Holm-adjusted to match its verdict: each at the level Holm judged it (95%% simultaneous over the undecided ones), "+
		"so a bracket excludes 1 exactly when the verdict is better or worse; the JSON keeps each comparison's own 95%% CI (ratio_ci95_per_comparison). "+
		"Rounds that all give the same ratio decide nothing: no spread, no interval.",
		roundsText(st), stats.MinRounds, orderNote(st), strconv.FormatFloat(st.EquivalenceMargin()*100, 'f', -1, 64)+"%")
}

// orderNote says how each round's cells ran, and so which comparisons
// had their sides back to back.
func orderNote(st *results.Study) string {
	switch st.Order {
	case results.OrderRounds:
		return fmt.Sprintf("Each round ran in its own seeded order (seed %d): blocks of one durability mode and client count in a shuffled order, "+
			"the placements compared within a block back to back in a shuffled order; a durability mode's sides ran in the same round, not back to back.", st.OrderSeed)
	case results.OrderShuffled:
		return fmt.Sprintf("In each round the placements compared within a block of one durability mode and client count ran back to back in a seeded shuffled order (seed %d), "+
			"the blocks in the study's order: a durability comparison's sides ran in the same order every round, not back to back.", st.OrderSeed)
	}
	return "Every round ran in the study's order: cells that run later may be slower, a bias the pairing does not remove."
}

// orderText says how each round's cells were ordered, for the study's
// header line.
func orderText(st *results.Study) string {
	switch st.Order {
	case results.OrderRounds:
		return fmt.Sprintf("; whole rounds shuffled (order seed %d)", st.OrderSeed)
	case results.OrderShuffled:
		return fmt.Sprintf("; each block's compared cells shuffled (order seed %d)", st.OrderSeed)
	}
	return "; cells in the study's order in every round"
}

// roundsText says how many rounds ran, and why no more did.
func roundsText(st *results.Study) string {
	n := st.RoundsRun()
	s := fmt.Sprintf("%d round%s", n, plural(n))
	switch st.StopReason {
	case results.StopConverged:
		s += fmt.Sprintf(" (stopped when every ratio's 95%% CI was within ±%s)", strconv.FormatFloat(st.RepeatPlan.Until*100, 'f', -1, 64)+"%")
	case results.StopBudget:
		s += " (stopped by its time budget)"
	case results.StopMax:
		s += " (the most it could run)"
	}
	return s
}

// NotDurableNotes names the tiers whose figures are not durable or emulated.
func NotDurableNotes(st *results.Study) []string {
	var out []string
	for _, n := range sortedTierNames(st) {
		t := st.Tiers[n]
		if !t.Durable {
			out = append(out, fmt.Sprintf("Tier %s (%s, %s) is not durable: %s.", n, t.Path, t.FSType, t.Note))
		}
		switch {
		case t.LayerDurable:
			out = append(out, fmt.Sprintf("Tier %s is persistent-memory-like and emulated: RAM, durable only as far as tierbench's power-loss layer models it; its speed is the FUSE layer's, not persistent memory's.", n))
		case t.Emulated:
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
	if st.SLO != nil {
		return "capacity under " + stats.SLOText(st.SLO)
	}
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
