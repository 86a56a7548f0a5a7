package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
)

// answerLines is the study's answer, first in `show`, at the end of `run`
// and on the report's first screen: one line per question (each placement
// against its baseline in each durability mode, each durability trade-off,
// each swept value), each with its ratio, CI and verdict and, in the same
// sentence, what changes what a reader should do: the tier is not
// durable, what a power loss cost there, p99 rose while throughput did.
// Then, once, what qualifies every line: the precision asked and not
// reached, disturbed runs, a warmup that never settled, and how many
// comparisons the verdicts were guarded over. st and runs are the series
// view (results.SeriesView); crashes the trade-off (CrashCosts).
func answerLines(st *results.Study, a *stats.Analysis, runs []results.Run, crashes []CrashCost) []string {
	cs := st.Clients
	var out []string
	if d := stats.Decide(st, a, runs); d != nil {
		out = decisionLines(st, d)
	}
	for _, d := range st.Durability {
		for _, p := range st.Placements {
			if st.IsBaseline(p) || p.CrashRun() {
				continue
			}
			if line := placementAnswer(st, a, p, d, cs, crashes); line != "" {
				out = append(out, line)
			}
		}
	}
	out = append(out, durabilityVerdicts(st, a, cs)...)
	out = append(out, sweepVerdicts(st, a, cs)...)
	if len(out) == 0 {
		out = append(out, onlyBaselineAnswer(st, a))
	}
	return append(out, qualifications(st, a, runs)...)
}

// placementAnswer is one placement's line in durability d: its
// baselineVerdicts sentence, then what it risks and what it costs in
// tail latency.
func placementAnswer(st *results.Study, a *stats.Analysis, p results.Placement, d string, cs []int, crashes []CrashCost) string {
	base := st.BaselineOf(p)
	var pts []atCount
	for _, c := range cs {
		if g := a.Group(stats.Key{Series: p.Name, Durability: d, Clients: c}); g != nil {
			pts = append(pts, atCount{clients: c, cmp: g, base: a.Group(stats.Key{Series: base, Durability: d, Clients: c})})
		}
	}
	if len(pts) == 0 {
		return ""
	}
	prefix := durabilityPhrase(d) + ", "
	name, baseName := shownName(p.Name), shownName(base)
	if baselineNeverRan(pts) {
		return fmt.Sprintf("%s%s: there is nothing to compare: the baseline %s has %s.", prefix, name, baseName, pts[0].base.NoRunText())
	}
	line := prefix + name + " " + span(pts, verb(st)+" ", " the "+throughputNoun(st)+" of "+baseName)
	var also []string
	if nd := notDurableText(st, p); nd != "" {
		also = append(also, nd)
	}
	if c := powerLossText(p, d, crashes); c != "" {
		also = append(also, c)
	}
	if t := tailText(pts); t != "" {
		also = append(also, t)
	}
	if len(also) > 0 {
		line += "; " + strings.Join(also, "; ")
	}
	return line + "."
}

// shownName is a series' name as the answer says it: without its
// " crash=none", which every compared series of a crash study has (the
// crash runs are the trade-off's, not compared).
func shownName(series string) string {
	return strings.Replace(series, " "+results.CrashDim+"=none", "", 1)
}

// shownLabel is a comparison's label without the " crash=none" of its
// series (shownName).
func shownLabel(label string) string {
	return strings.ReplaceAll(label, " "+results.CrashDim+"=none", "")
}

// notDurableText names the components of p on tiers that are not
// durable: "not durable: its wal is on ram (tmpfs), which a power cut
// empties". A persistent-memory-like tier says what its durability rests
// on.
func notDurableText(st *results.Study, p results.Placement) string {
	var lost, pmem []string
	for _, c := range slices.Sorted(maps.Keys(p.Components)) {
		t, ok := st.Tiers[p.Components[c]]
		switch {
		case !ok:
		case !t.Durable:
			lost = append(lost, fmt.Sprintf("its %s is on %s (%s)", c, p.Components[c], t.FSType))
		case t.LayerDurable:
			pmem = append(pmem, fmt.Sprintf("its %s is on %s, RAM made durable by tierbench's power-loss layer", c, p.Components[c]))
		}
	}
	var parts []string
	if len(lost) > 0 {
		parts = append(parts, "not durable: "+strings.Join(lost, " and ")+", which a power cut empties")
	}
	if len(pmem) > 0 {
		parts = append(parts, strings.Join(pmem, " and ")+" (emulated)")
	}
	return strings.Join(parts, "; ")
}

// powerLossText says what a power loss cost placement p in durability d,
// over the client counts the study crashed it at: "on a power loss it
// lost nothing acknowledged (6 runs)", "... lost every acknowledged
// write", "... did not come back".
func powerLossText(p results.Placement, d string, crashes []CrashCost) string {
	s := powerLossOnly(p, d, crashes)
	if s == "" {
		return ""
	}
	return s + corruptText(p, d, crashes)
}

// corruptText says in how many power cuts of placement p in durability d
// the engine's own check found its state corrupt: ", corrupt in k of N
// cuts", "" when it checked none.
func corruptText(p results.Placement, d string, crashes []CrashCost) string {
	name, set := studyPlacement(p), results.WithoutCrash(p.Settings)
	var corrupt, checked int
	for _, c := range crashes {
		if k, _ := engine.FindCrash(c.Kind); c.Placement == name && c.Settings == set && c.Durability == d && k.Machine {
			corrupt += c.Corrupt
			checked += c.CorruptChecked
		}
	}
	if checked == 0 {
		return ""
	}
	return fmt.Sprintf("; corrupt in %d of %d cuts", corrupt, checked)
}

// studyPlacement is the study's name of series p's placement.
func studyPlacement(p results.Placement) string {
	if p.Of != "" {
		return p.Of
	}
	return p.Name
}

// powerLossOnly is powerLossText without the corruption.
func powerLossOnly(p results.Placement, d string, crashes []CrashCost) string {
	name, set := studyPlacement(p), results.WithoutCrash(p.Settings)
	var runs, checked, inconsistent int
	var lost, acked float64
	all, unit := true, "writes"
	for _, c := range crashes {
		if k, _ := engine.FindCrash(c.Kind); c.Placement != name || c.Settings != set || c.Durability != d || !k.Machine {
			continue
		}
		runs += c.Crashed
		checked += c.Checked
		inconsistent += len(c.Inconsistent)
		for i := range c.Lost {
			lost += c.Lost[i]
			acked += c.Acked[i]
		}
		all = all && c.lostAll()
		if c.Unit != "" {
			unit = c.Unit
		}
	}
	switch {
	case runs == 0:
		return ""
	case inconsistent == runs:
		return fmt.Sprintf("on a power loss the database did not come back (%d of %d runs)", inconsistent, runs)
	case checked == 0:
		return fmt.Sprintf("a power loss was survived in %d of %d runs, its acknowledged writes not checked", runs-inconsistent, runs)
	case lost == 0 && inconsistent == 0:
		return fmt.Sprintf("on a power loss nothing acknowledged was lost (%d runs)", checked)
	case all:
		return fmt.Sprintf("on a power loss every acknowledged write of the window was lost (%d runs)", checked)
	}
	s := fmt.Sprintf("on a power loss %s of %s acknowledged %s were lost (%d runs)", figure(lost), figure(acked), unit, checked)
	if inconsistent > 0 {
		s += fmt.Sprintf(", %d did not come back", inconsistent)
	}
	return s
}

// tailText says where the throughput was better but the median p99 over
// rounds was worse than the baseline's by more than a tenth (not a judged
// comparison: said so), or "".
func tailText(pts []atCount) string {
	var worse []string
	for _, p := range pts {
		if p.cmp.Verdict != stats.Better || p.base == nil || p.base.N == 0 || p.cmp.P99Median <= 1.1*p.base.P99Median {
			continue
		}
		worse = append(worse, fmt.Sprintf("%s at %s against %s", hist.FormatMicros(p.cmp.P99Median), clientsText(p.clients), hist.FormatMicros(p.base.P99Median)))
	}
	if len(worse) == 0 {
		return ""
	}
	return "but its p99 is higher: " + strings.Join(worse, ", ") + " (medians over rounds, not judged)"
}

// onlyBaselineAnswer is the answer of a study that compares nothing: its
// one placement's figure at each durability and client count.
func onlyBaselineAnswer(st *results.Study, a *stats.Analysis) string {
	var parts []string
	for _, g := range a.Groups {
		if g.N == 0 {
			parts = append(parts, fmt.Sprintf("%s %s at %s: %s", g.Series, g.Durability, clientsText(g.Clients), g.NoRunText()))
			continue
		}
		ci := ""
		if g.ThroughputCI != nil {
			ci = fmt.Sprintf(" [%s-%s]", figure(g.ThroughputCI[0]), figure(g.ThroughputCI[1]))
		}
		parts = append(parts, fmt.Sprintf("%s %s at %s: %s%s %s", g.Series, g.Durability, clientsText(g.Clients), figure(g.ThroughputMedian), ci, st.ThroughputUnit()))
	}
	return "Nothing is compared (one placement): " + strings.Join(parts, "; ") + "."
}

// qualifications are the lines under the answer that qualify all of it.
func qualifications(st *results.Study, a *stats.Analysis, runs []results.Run) []string {
	var out []string
	if p := precisionText(st, a, runs); p != "" {
		out = append(out, p)
	}
	if d := decidedText(st); d != "" {
		out = append(out, d)
	}
	if d := disturbedText(st, runs); d != "" {
		out = append(out, d)
	}
	if w := warmupText(st, runs); w != "" {
		out = append(out, w)
	}
	if t := timeText(st, runs); t != "" {
		out = append(out, t)
	}
	if f := familyText(a); f != "" {
		out = append(out, f)
	}
	return out
}

// precisionText says, for an adaptive study that stopped short of the
// precision it asked, how far it got and what reaching it would take.
func precisionText(st *results.Study, a *stats.Analysis, runs []results.Run) string {
	plan := st.RepeatPlan
	if plan == nil {
		return ""
	}
	w := stats.Widest(a)
	if !w.Found || w.HalfWidth <= plan.Until || st.StopReason == results.StopConverged {
		return "" // converged: every comparison decided, or within until
	}
	asked := pctText1(plan.Until)
	s := fmt.Sprintf("Precision NOT reached: ±%s was asked; ", asked)
	if math.IsInf(w.HalfWidth, 1) {
		s += fmt.Sprintf("%s has no interval yet (%d paired rounds)", shownLabel(w.Label), w.Pairs)
	} else {
		s += fmt.Sprintf("the widest 95%% CI is ±%s (%s) after %d rounds", pctText1(w.HalfWidth), shownLabel(w.Label), st.RoundsRun())
	}
	s += stopText(st)
	if more := stats.RoundsToReachAt(stats.LooksOf(st), w.HalfWidth, w.Pairs, plan.Until); more > 0 {
		s += fmt.Sprintf("; about %d more round%s", more, plural(more))
		if per := roundTime(runs, st.RoundsRun()); per > 0 {
			s += fmt.Sprintf(" (about %s)", minutes(per*float64(more)))
		}
		s += " would reach it"
	}
	return s + "."
}

// decidedText says after how many rounds each block an adaptive study
// stopped was decided (results.Study.Decided), and that the estimates of
// a block stopped early lean away from 1: it stopped because they looked
// decided.
func decidedText(st *results.Study) string {
	if st.RepeatPlan == nil || len(st.Decided) == 0 {
		return ""
	}
	var parts []string
	early := false
	for _, d := range st.Decided {
		parts = append(parts, fmt.Sprintf("%s at %s after %d round%s", d.Durability, clientsText(d.Clients), d.AfterRound, plural(d.AfterRound)))
		early = early || d.AfterRound < st.RoundsRun()
	}
	s := "Decided: " + strings.Join(parts, "; ")
	if open := len(st.Durability)*len(st.Clients) - len(st.Decided); open > 0 {
		s += fmt.Sprintf("; %d block%s still open after %d rounds", open, plural(open), st.RoundsRun())
	}
	if early {
		s += ". A block decided before the last round ran no further rounds; its ratios lean a little away from 1 (it stopped when they looked decided), its verdicts keep their 5%"
	}
	return s + "."
}

// stopText is why an adaptive study stopped, for the precision line.
func stopText(st *results.Study) string {
	switch st.StopReason {
	case results.StopBudget:
		return ", stopped by its time budget"
	case results.StopMax:
		return ", its most rounds"
	case results.StopInterrupted:
		return ", interrupted"
	}
	return ""
}

// roundTime is the mean seconds a round took, from the runs' own start
// and end (setup and load included).
func roundTime(runs []results.Run, rounds int) float64 {
	if rounds == 0 {
		return 0
	}
	total := 0.0
	for _, r := range runs {
		if !r.FinishedAt.IsZero() && r.FinishedAt.After(r.StartedAt) {
			total += r.FinishedAt.Sub(r.StartedAt).Seconds()
		}
	}
	return total / float64(rounds)
}

// minutes prints seconds as "40 s" or "7 min".
func minutes(s float64) string {
	if s < 90 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.0f min", s/60)
}

// disturbedText says how many ok runs other processes disturbed, the
// worst, and what was done about them.
func disturbedText(st *results.Study, runs []results.Run) string {
	ok, n := 0, 0
	var worst *results.Run
	rounds := map[int]bool{}
	for i, r := range runs {
		if r.Status != results.RunOK {
			continue
		}
		ok++
		if !r.Disturbed {
			continue
		}
		n++
		rounds[r.Repeat] = true
		if worst == nil || othersPct(r) > othersPct(*worst) {
			worst = &runs[i]
		}
	}
	if n == 0 {
		return ""
	}
	s := fmt.Sprintf("%d of %d runs were DISTURBED by other processes (the worst, run %d: %s); their figures are kept, marked", n, ok, worst.Seq, worst.DisturbedBy)
	if plan := st.RepeatPlan; plan != nil {
		// Rounds past min ran in disturbed ones' place (runner's round plan),
		// unless the study had converged or its budget or max stopped it.
		switch again := min(len(rounds), plan.Min, max(st.RoundsRun()-plan.Min, 0)); {
		case again > 0:
			s += fmt.Sprintf("; %d more round%s ran in disturbed rounds' place", again, plural(again))
		default:
			s += "; no round could run in their place (" + strings.TrimPrefix(stopText(st), ", ") + ")"
		}
	}
	return s + "; a quiet machine gives figures that need no such caution."
}

// othersPct is the share of the host other processes took in run r.
func othersPct(r results.Run) float64 {
	if r.Telemetry == nil || r.Telemetry.Others == nil {
		return 0
	}
	return r.Telemetry.Others.HostPct
}

// warmupText says, under a steady-state warmup, how long the runs warmed
// up and how many never settled.
func warmupText(st *results.Study, runs []results.Run) string {
	rule := st.WarmupRule
	if rule == nil {
		return ""
	}
	var took []float64
	unsteady := 0
	for _, r := range runs {
		if r.Status != results.RunOK || r.WarmupSteady == nil {
			continue
		}
		took = append(took, r.WarmupS)
		if !*r.WarmupSteady {
			unsteady++
		}
	}
	if len(took) == 0 {
		return ""
	}
	if rule.AfterTheFact {
		s := fmt.Sprintf("Transients cut after the fact (MSER-5, at most %gs): %s-%s s (median %s s)",
			st.WarmupS, figure(slices.Min(took)), figure(slices.Max(took)), figure(stats.Median(took)))
		if unsteady > 0 {
			s += fmt.Sprintf("; %d of %d not within ±%s over the %gs after the cut", unsteady, len(took), pctText1(rule.Steady), rule.WindowS)
		}
		return s + "."
	}
	s := fmt.Sprintf("Warmup until each second's throughput stayed within ±%s over %gs: runs took %s-%s s (median %s s)",
		pctText1(rule.Steady), rule.WindowS, figure(slices.Min(took)), figure(slices.Max(took)), figure(stats.Median(took)))
	if unsteady > 0 {
		s += fmt.Sprintf("; %d of %d never steady within %gs, their windows measured a moving series", unsteady, len(took), st.WarmupS)
	}
	return s + "."
}

// familyText says once how many comparisons the verdicts were guarded
// over, and how.
func familyText(a *stats.Analysis) string {
	s := a.Summary()
	if s.Judged == 0 {
		return ""
	}
	var kinds []string
	for _, k := range []string{stats.KindPlacement, stats.KindDurability, stats.KindSweep, stats.KindLoadCPU} {
		if n := s.ByKind[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, kindName(k)))
		}
	}
	return fmt.Sprintf("%d comparisons judged (%s): better or worse means significant at 5%% after Holm's adjustment over all of them "+
		"(%d are; %d would be at 5%% each).", s.Judged, strings.Join(kinds, ", "), s.Decided, s.RawDecided)
}

// kindName names a kind of comparison for a reader.
func kindName(k string) string {
	switch k {
	case stats.KindLoadCPU:
		return "load generator CPU per op"
	case stats.KindSweep:
		return "swept value"
	}
	return k
}

// pctText1 prints a fraction as a percentage, "5%" or "54.9%".
func pctText1(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}
