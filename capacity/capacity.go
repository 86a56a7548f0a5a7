// Package capacity holds the rules of a capacity study (slo: in a study
// file): whether an open-loop run met a latency objective, when a step has
// missed it however the rest of it goes (so it can end), when a probe of a
// cold search's climb has seen enough to go on up (so it can end too,
// though no capacity rests on it), the next rate a search tries, a
// search's capacity from its steps, and what a placement costs a month.
// Each rule is a function of stored runs alone, so the runner steers its
// search, and show judges old studies, by the same code.
//
// A run meets the objective when its latency at the percentile, measured
// from each operation's intended start, is within the bound, its errors
// within theirs, and it achieved at least MinAchieved of the rate it was
// asked for. The percentile is one order statistic of a short window, so
// a step that recorded its interval (results.Run.LatencyCI) meets the
// bound only when the interval's upper end is within it, misses it only
// when the lower end is beyond, and is unsure otherwise. Unsure, the
// step saw the percentile about at the bound, so the search looks a
// resolution either side of it rather than judging the rate again, and
// ends with the round's capacity at its rate once a met rate lies a
// resolution below and a miss a resolution above (Next,
// Found.EstimateOpsS); a step still unsure after a repeat counts as not
// met. A step
// of Poisson arrivals whose actual sends failed their check
// (results.Run.Arrivals: not exponential gaps by Anderson-Darling) is not
// trusted as met either: it was measured under another load than the one
// asked, perhaps a smoother one (a busy client sends late, so short gaps
// go missing), so it is unsure the same way, and repeated. Constant
// arrivals' spread is reported, not judged: any departure from even
// spacing is a burstier load than the one asked, which a step met under
// it only makes harder, and a client too busy to keep up already shows
// in the rate achieved and in latency from the intended start.
//
// When a step misses while the study's clients were busy
// (each has one operation in flight) and the engine's mean service time
// (from each operation's actual start) stayed near what it was at the
// search's lowest rate, the engine was not contended: operations waited
// for a free client. The load generator could not hold the rate, the step is
// generator-bound, and the capacity it caps is only a lower bound: more
// clients would measure further.
package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
)

// Percentiles are the latency percentiles an objective may bound.
var Percentiles = []string{"p50", "p90", "p95", "p99", "p99.9"}

// At is a summary's latency (µs) at one of Percentiles; ok is false for
// another name.
func At(s hist.Summary, percentile string) (float64, bool) {
	switch percentile {
	case "p50":
		return s.P50, true
	case "p90":
		return s.P90, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "p99.9":
		return s.P999, true
	}
	return 0, false
}

// MinAchieved is the share of its target rate a run must achieve to meet
// an objective: below it the engine fell behind its schedule, whatever
// the latency of the operations that did finish.
const MinAchieved = 0.9

// Outcome is what one search step found.
type Outcome struct {
	Met bool
	// Unsure is true when the percentile's 95% interval straddles the
	// bound, or the latency was within it but Poisson arrivals failed
	// their check: not met, and the search looks beside the rate or
	// repeats it once (Next).
	Unsure bool
	// AtBound is true for an unsure step whose percentile's interval
	// straddled the bound, its arrivals as asked: the step saw the
	// percentile at its rate about at the bound, so the capacity is about
	// there (Next looks a resolution either side of it rather than
	// repeating it). A step unsure for its arrivals alone tells no such
	// thing: its latency came from a smoother load than the one asked.
	AtBound bool
	// Arrivals says how the step's sends fared in their check ("arrivals
	// Poisson (A² = 0.61, p = 0.42)"), empty when none was made.
	Arrivals string
	// GeneratorBound is true when the step missed while the engine's
	// service time stayed flat (StepsOf): operations waited for a free
	// client; raise clients to measure further.
	GeneratorBound bool
	// Why says what failed, empty when met: "p99 31.2ms > 20ms".
	Why string
}

// Judge says whether run r met slo at its target rate.
func Judge(slo results.SLO, r results.Run) Outcome {
	if r.Status != results.RunOK {
		return Outcome{Why: "run failed"}
	}
	if r.Ops == 0 {
		return Outcome{Why: "no operation finished"}
	}
	bound := slo.BoundUs
	lat, _ := At(r.Latency, slo.Percentile)
	errorsOK := true
	var why string
	if slo.Errors != nil {
		if share := float64(r.Errors) / float64(r.Ops+r.Errors); share > *slo.Errors {
			errorsOK = false
			why = fmt.Sprintf("errors %.2f%% > %.2f%%", share*100, *slo.Errors*100)
		}
	}
	achieved := r.ThroughputOpsS
	behind := r.TargetRate > 0 && achieved < MinAchieved*r.TargetRate
	ci, hasCI := r.LatencyCI[slo.Percentile]
	judged := r.LatencyCI != nil // a step stored with intervals
	arrivals := ArrivalsText(r.Arrivals)
	badArrivals := r.Arrivals != nil && !r.Arrivals.OK && r.Arrivals.Process == "poisson"
	switch {
	case !errorsOK:
		return Outcome{Why: why}
	case hasCI && ci.Lo > bound:
		return Outcome{Why: fmt.Sprintf("%s %s %s > %s", slo.Percentile, hist.FormatMicros(lat), ciText(ci), hist.FormatMicros(bound))}
	case !judged && lat > bound:
		return Outcome{Why: fmt.Sprintf("%s %s > %s", slo.Percentile, hist.FormatMicros(lat), hist.FormatMicros(bound))}
	case behind:
		return Outcome{Why: fmt.Sprintf("achieved %.0f of %.0f ops/s", achieved, r.TargetRate)}
	case judged && (!hasCI || ci.Open):
		// A repeat of the same length would be as short: not met, and
		// the reason says what would tell.
		return Outcome{Why: fmt.Sprintf("%s %s from %d operations, too few to show it within %s: raise duration",
			slo.Percentile, hist.FormatMicros(lat), r.Ops, hist.FormatMicros(bound))}
	case hasCI && ci.Hi > bound:
		why := fmt.Sprintf("%s %s, its 95%% interval %s straddles %s", slo.Percentile, hist.FormatMicros(lat), ciText(ci), hist.FormatMicros(bound))
		if badArrivals {
			why += ", and " + r.Arrivals.Why
		}
		return Outcome{Unsure: true, AtBound: !badArrivals, Why: why, Arrivals: arrivals}
	case badArrivals:
		within := fmt.Sprintf("%s %s", slo.Percentile, hist.FormatMicros(lat))
		if hasCI {
			within += " " + ciText(ci)
		}
		return Outcome{Unsure: true, Arrivals: arrivals,
			Why: fmt.Sprintf("%s within %s, but %s", within, hist.FormatMicros(bound), r.Arrivals.Why)}
	}
	return Outcome{Met: true, Arrivals: arrivals}
}

// CertainMiss says whether a step's operations so far, h (their latency
// from the intended start, in the part of the step its transient's cut
// cannot reach), already make the step miss slo however the rest of it
// goes: the lower end of its percentile's interval lies above the bound
// for any window of at most n operations that holds them
// (hist.CertainlyAbove), so Judge will find it missed on the window it
// ends with. Such a step ends there (driver.Config.EndWhen): past its
// capacity, an open loop's queue only grows, and waiting out the step
// tells nothing more. No step is ended as met: the operations still to
// come could miss.
func CertainMiss(slo results.SLO, h *hdr.Histogram, n int64) bool {
	q, ok := quantile(slo.Percentile)
	return ok && hist.CertainlyAbove(h, q, slo.BoundUs, n)
}

// ProbeLeast is the least a probe of a step lasting span runs before it
// may pass (ProbePassed): 2 s, or a quarter of a shorter step.
func ProbeLeast(span time.Duration) time.Duration {
	return min(2*time.Second, span/4)
}

// ProbeLook is what a probe has seen when it looks: the operations of its
// window (the intervals after the cut MSER-5 would give its series so far,
// driver.TruncateLatency, at most its warmup's most), and how long the
// window and the step so far lasted.
type ProbeLook struct {
	// Latency is every operation of the window, from its intended start.
	Latency *hdr.Histogram
	// Errors are the window's failed operations.
	Errors int64
	// Window is how long the window lasted; Elapsed is the step so far.
	Window, Elapsed time.Duration
}

// ProbePassed says whether a probe passes at look: from least on
// (ProbeLeast) since the step began, its window (the operations after its
// transient's cut, as the step's own window would be cut: a kept engine's
// first fifth of a second after a change of rate is often a burst of slow
// operations that would hold a probe's percentile past the bound for most
// of a step) holds enough operations for its percentile's 95% interval to
// close and has the percentile itself within ProbeMargin of the bound,
// its errors within the objective's share, and the operations finished keep up with
// MinAchieved of the rate over the window. A probe that passes ends
// (driver.Config.EndWhen) and steers the search up. It is not a met
// step: it judged its point estimate, not the interval's upper end (a
// tail near the bound even far below capacity, as a checkpoint's spikes
// give, would keep that open for most of the step), it looked after every
// interval, and a short window just past capacity may pass where a full
// one's queue would have grown. So no capacity rests on a probe's rate
// alone: Next confirms it with a full step, Capacity counts full steps
// only. Past capacity by more than a little, an open loop's queue puts
// its operations past the bound within a second and its latency only
// grows, which no cut of the start takes away, and the probe does not
// pass.
func ProbePassed(slo results.SLO, rate float64, look ProbeLook, least time.Duration) bool {
	h := look.Latency
	if h == nil || look.Elapsed < least || look.Window <= 0 {
		return false
	}
	n := h.TotalCount()
	if n == 0 || float64(n) < MinAchieved*rate*look.Window.Seconds() {
		return false
	}
	if slo.Errors != nil && float64(look.Errors)/float64(n+look.Errors) > *slo.Errors {
		return false
	}
	q, ok := quantile(slo.Percentile)
	if !ok {
		return false
	}
	ci, ok := hist.PercentileCI(h, q)
	return ok && !ci.Open && float64(h.ValueAtQuantile(q))/1e3 <= ProbeMargin*slo.BoundUs
}

// ProbeMargin is the share of the objective's bound a probe's percentile
// must be within to pass. A probe's window of 2 s sees fewer of the
// engine's periodic stalls (checkpoints, bursts of WAL flushes) than a
// full step's 10 s, so near capacity its percentile reads low: in the seed
// capacity study, probes that passed read p99 8.7-14.8 ms at rates where
// full steps then read 30-46 ms (bound 20 ms), and each such pass cost its
// search a confirmation that missed and the bisection above it, 20-35 s.
// Far below capacity probes read 4.4-10.8 ms there (all-gp3's at 400
// ops/s, two thirds of its capacity, 8.6-10.8 ms: half the bound held one
// of them back for a full step). Within 60% of the bound, a probe is held
// back where it read 13.5 or 14.8 ms, and passes where it read up to
// 12 ms; nearer the bound it runs on as a full step, which the search
// needs about there anyway.
const ProbeMargin = 0.6

// Probing says whether a search's step at rate, after steps, is a probe:
// the search climbs from a cold start (no earlier round's capacity), has
// met every rate it tried, and has not tried this one. Climbing, a step
// only tells the search to go on up: far below the capacity it meets the
// objective in its first seconds, and a full window would only confirm
// it. A step that decides the bracket, or repeats a rate, runs in full.
func Probing(warm bool, steps []Step, rate float64) bool {
	if warm {
		return false
	}
	for _, st := range steps {
		if !st.Met || st.Rate == rate {
			return false
		}
	}
	return true
}

// quantile is a percentile's name as a number: "p99.9" is 99.9.
func quantile(percentile string) (float64, bool) {
	if !slices.Contains(Percentiles, percentile) {
		return 0, false
	}
	q, err := strconv.ParseFloat(strings.TrimPrefix(percentile, "p"), 64)
	return q, err == nil
}

// MostOps bounds the operations a step at rate (ops/s) sends over span:
// the schedule's, five standard deviations over it for Poisson arrivals,
// and one more per client for the schedules' ends.
func MostOps(rate float64, span time.Duration, clients int) int64 {
	want := rate * span.Seconds()
	return int64(math.Ceil(want+5*math.Sqrt(want))) + int64(clients)
}

// ArrivalsText says how a step's sends fared in their check: its Why
// when they failed, else "arrivals Poisson (A² = 0.61, p = 0.42)" or
// "arrivals evenly spaced (median gap 3% off 1ms)"; empty without a check.
func ArrivalsText(a *results.ArrivalCheck) string {
	switch {
	case a == nil:
		return ""
	case !a.OK:
		return a.Why
	case a.A2 != nil && a.P != nil:
		return fmt.Sprintf("arrivals Poisson (A² = %.2f, p = %.2g)", *a.A2, *a.P)
	case a.Spread != nil:
		return fmt.Sprintf("arrivals evenly spaced (median gap %.0f%% off %s)", *a.Spread*100, hist.FormatMicros(a.IntendedGapUs))
	}
	return ""
}

// ciText prints a percentile's interval: "[25.00ms-40.00ms]", or
// "[25.00ms-open]" without an upper end.
func ciText(ci hist.CI) string {
	if ci.Open {
		return fmt.Sprintf("[%s-open]", hist.FormatMicros(ci.Lo))
	}
	return fmt.Sprintf("[%s-%s]", hist.FormatMicros(ci.Lo), hist.FormatMicros(ci.Hi))
}

// Tries is how many steps a search runs at one rate: an unsure step is
// repeated once, and the last step at a rate decides it.
const Tries = 2

// FlatService is how much the engine's mean service time may grow over
// its value at a search's lowest rate for a missed step to count as
// generator-bound: within it the engine shows no contention.
const FlatService = 1.5

// BusyClients is the share of the time the clients must have had an
// operation in flight (achieved rate x mean service time / clients) for
// a missed step to count as generator-bound: below it a free client was
// there to start each operation, and the miss is the engine's tail.
const BusyClients = 0.8

// Step is one search step: the rate asked and what it found.
type Step struct {
	Rate float64
	Outcome
	// Probe is true for a probe that passed (ProbePassed): Met steers
	// the search up, but no capacity rests on it alone.
	Probe bool
}

// Ramp factors: a search with no earlier capacity doubles its rate; one
// starting from an earlier round's capacity first steps by one
// resolution (its start lies within half a resolution of the truth when
// the truth held still, so that one step closes the bracket), then by
// warmFactor, so a truth that moved is bracketed in one or two more steps.
const coldFactor = 2.0

// warmFactor is the step of a search that starts from an earlier capacity
// once its first step away from the start did not close the bracket: 10%,
// or one resolution when that is coarser. Rounds on a shared machine
// differ by 10-25%, which steps of 10% walk over in one or two, each
// closing the bracket as it misses; a step of two resolutions, as before,
// overshoots a move of one or two at 10% resolution and needs a
// bisection after. In a seeded simulation (stats' TestWarmSearchSteps),
// with a round's truth moved from the round before's by the 42 moves the
// seed capacity study measured (0.84x to 1.96x, most within ±16%), a warm
// search at 10% resolution took 2.80 steps on average, against 3.07 with
// steps of two resolutions; at 20%, 2.26 against 2.41; at 5% the steps
// are the same, 10%, and so are the 3.87 steps.
func warmFactor(resolution float64) float64 { return 1 + max(resolution, 0.10) }

// Start is where a round's search starts, given the steps its series took
// in the round before (none in the first round) and d, a uniform draw in
// [0, 1) of the study's seed. From a closed bracket (a met rate, a failed
// one a resolution above) it starts at the bracket's geometric middle,
// moved by (1+resolution)^(d-1/2): anywhere within half a resolution
// either side, so that when the truth held still the first step and the
// one a resolution beyond it bracket the truth, two steps a round. The
// round's estimate, the middle of the bracket it ends with, is then off
// the truth by a uniform share of a resolution drawn afresh each round,
// whatever the bracket before (its own error included): rounds stay
// independent draws around the truth, as their interval assumes, and do
// not agree to the grid point for having started there (see the runner's
// dither). From a lower bound only (the search's most met, or the step
// above failed in the clients) it starts up to a resolution above it; in
// the first round from the study's from, likewise. warm says the start
// came from an earlier round.
func Start(s results.Search, before []Step, d float64) (start float64, warm bool) {
	f := Capacity(s, before)
	switch {
	case f.OpsS > 0 && f.EstimateOpsS > f.OpsS:
		return f.EstimateOpsS * math.Pow(1+s.Resolution, d-0.5), true
	case f.OpsS > 0:
		return f.OpsS * (1 + s.Resolution*d), true
	}
	return s.FromOpsS * (1 + s.Resolution*d), false
}

// MinRate is the lowest rate a search tries: a placement that misses the
// objective there has no capacity.
const MinRate = 1.0

// Next is the rate a search tries after steps, in the order they ran:
// start first (Start: the study's from:, or near an earlier round's
// capacity when warm), then up by the ramp factor while the objective
// holds (down while it does not), then the geometric middle of the
// bracket until its ends are within the search's resolution.
//
// An unsure step at the bound (Outcome.AtBound) above every met rate saw
// the percentile at its rate about at the bound, so the capacity is about
// there: with nothing tried within a resolution above it, the search
// looks a resolution above (met: on from there; unsure too: up again;
// missed: the bracket's upper end is the unsure rate); with a miss a
// resolution above it (or above the highest of a run of them) and no met
// rate a resolution below, it looks a resolution below. Once a met rate
// lies a resolution below and a miss a resolution above, the bracket is
// closed and the round's estimate is the unsure rate (Capacity). Each
// look is a step the search needs anyway, where a repeat at the same rate
// only judged the rate again. Any other unsure step (unsure for its
// arrivals, or with a rate tried a resolution above it that did not miss)
// is run once more (Tries), unless it was the bracket's last bisection
// (lastBisection): either way its repeat went, the bracket would be
// within the resolution.
// more is false when the search is done. Only the steps decide, so a
// resumed search takes up where it stopped.
func Next(s results.Search, start float64, warm bool, steps []Step) (rate float64, more bool) {
	if len(steps) == 0 {
		return math.Min(start, s.MaxOpsS), true
	}
	lo, hi := Bracket(steps)
	closed := within(lo, hi, s.Resolution)
	last := steps[len(steps)-1]
	switch {
	case last.AtBound && last.Rate > lo && !triedAbove(steps, last.Rate, s.Resolution) && last.Rate < s.MaxOpsS:
		return math.Min(last.Rate*(1+s.Resolution), s.MaxOpsS), true // look just above
	case !closed && hi > 0 && lastAt(steps)[hi].AtBound && hi/(1+s.Resolution) >= MinRate:
		if top := unsureTop(steps, hi, s.Resolution); within(top, missAbove(steps, top), s.Resolution) {
			return hi / (1 + s.Resolution), true // look just below
		}
	}
	if last.Unsure && triesAt(steps, last.Rate) < Tries && !lastBisection(s, steps, last.Rate) {
		return last.Rate, true
	}
	factor := coldFactor
	switch {
	case warm && len(lastAt(steps)) == 1:
		factor = 1 + s.Resolution // the start's neighbour a resolution off
	case warm:
		factor = warmFactor(s.Resolution)
	}
	switch {
	case lo > 0 && lastAt(steps)[lo].Probe && (closed || (hi == 0 && lo >= s.MaxOpsS)):
		return lo, true // the capacity would rest on a probe: confirm it in full
	case lo == 0 && hi == 0:
		return 0, false
	case lo == 0: // nothing met yet: down
		if next := hi / factor; next >= MinRate {
			return next, true
		}
		return 0, false
	case hi == 0: // nothing failed above: up
		if lo >= s.MaxOpsS {
			return 0, false
		}
		return math.Min(lo*factor, s.MaxOpsS), true
	case closed:
		return 0, false
	}
	return math.Sqrt(lo * hi), true
}

// within says whether lo and hi are both tried and a resolution apart at
// most, but for rounding.
func within(lo, hi, resolution float64) bool {
	return lo > 0 && hi > 0 && hi/lo <= (1+resolution)*(1+1e-9)
}

// lastBisection says whether a step at rate was the last bisection of its
// search's bracket: a met rate at most a resolution below it and a
// missed one at most two resolutions above that. An unsure step there
// needs no repeat: either way the repeat went, the bracket would close
// within the resolution, and the step has shown the truth about its rate.
// Without a miss above (as on a warm search's way up) it is repeated: a
// step unsure by a spike or a flat tail far below a capacity that moved
// up would otherwise end the search there.
func lastBisection(s results.Search, steps []Step, rate float64) bool {
	lo, above := 0.0, 0.0
	for _, st := range lastAt(steps) {
		switch {
		case st.Met && st.Rate < rate:
			lo = max(lo, st.Rate)
		case !st.Met && st.Rate > rate && (above == 0 || st.Rate < above):
			above = st.Rate
		}
	}
	return within(lo, rate, s.Resolution) && within(lo, above, (1+s.Resolution)*(1+s.Resolution)-1)
}

// Bracket is the highest rate that met the objective (lo) and the lowest
// that failed above it (hi); 0 when there is none. A failure below lo is
// noise the higher success outweighs. A rate tried more than once is
// judged by its last step.
func Bracket(steps []Step) (lo, hi float64) {
	decisive := lastAt(steps)
	for _, s := range decisive {
		if s.Met && s.Rate > lo {
			lo = s.Rate
		}
	}
	for _, s := range decisive {
		if !s.Met && s.Rate > lo && (hi == 0 || s.Rate < hi) {
			hi = s.Rate
		}
	}
	return lo, hi
}

// triedAbove says whether a rate within a resolution above rate was tried.
func triedAbove(steps []Step, rate, resolution float64) bool {
	for _, st := range steps {
		if st.Rate > rate && within(rate, st.Rate, resolution) {
			return true
		}
	}
	return false
}

// missAbove is the lowest rate above rate whose last step clearly missed.
func missAbove(steps []Step, rate float64) float64 {
	m := 0.0
	for _, st := range lastAt(steps) {
		if !st.Met && !st.Unsure && st.Rate > rate && (m == 0 || st.Rate < m) {
			m = st.Rate
		}
	}
	return m
}

// unsureTop is a bracket's unsure upper end hi, or the highest of a run
// of steps at the bound from hi up, each within a resolution of the one
// below it (as Next looks a resolution above a step at the bound): the
// capacity is about the highest rate still seen at the bound.
func unsureTop(steps []Step, hi, resolution float64) float64 {
	at := lastAt(steps)
	rates := make([]float64, 0, len(at))
	for r := range at {
		if r >= hi {
			rates = append(rates, r)
		}
	}
	slices.Sort(rates)
	top := hi
	for _, r := range rates[1:] {
		if !at[r].AtBound || !within(top, r, resolution) {
			break
		}
		top = r
	}
	return top
}

// lastAt is the last step at each rate tried.
func lastAt(steps []Step) map[float64]Step {
	out := map[float64]Step{}
	for _, s := range steps {
		out[s.Rate] = s
	}
	return out
}

// triesAt counts the full steps at rate.
func triesAt(steps []Step, rate float64) int {
	n := 0
	for _, s := range steps {
		if s.Rate == rate && !s.Probe {
			n++
		}
	}
	return n
}

// Found is a finished search's capacity: the highest rate that met the
// objective, 0 when none did. AtLeast is true when the capacity is only a
// lower bound: the search reached its most, or the step above it failed in
// the clients rather than the engine.
type Found struct {
	OpsS    float64
	AtLeast bool
	// Above is why the next rate up did not count: the failed step's Why.
	Above string
	// EstimateOpsS is the round's capacity as a figure to average and
	// compare: the geometric middle of the final bracket [OpsS, the
	// failed rate above]. OpsS, the met end, is below the truth by up to
	// a resolution every round, a bias pairing does not cancel between
	// placements whose brackets fall differently; with the search's
	// dithered start the truth lies anywhere in the bracket, so its
	// middle is off by at most half the bracket either way, on average
	// not at all. A bracket whose failed end was unsure (its percentile's
	// interval straddled the bound) puts it at that end instead: that
	// step saw the percentile within its interval of the bound, so the
	// truth lies about there, not anywhere in the bracket, and the middle
	// would be low by half a bracket (TestUnsureEndIsTheEstimate); after a
	// run of such steps, each tried above the one before, at the highest
	// (unsureTop). A lower bound (AtLeast) or an open bracket keeps OpsS.
	EstimateOpsS float64
}

// Capacity is the capacity steps found, by their full steps: a probe
// that passed (Step.Probe) steered the search, and Next confirms in full
// a rate the capacity would rest on.
func Capacity(s results.Search, steps []Step) Found {
	lo, hi := Bracket(slices.DeleteFunc(slices.Clone(steps), func(st Step) bool { return st.Probe }))
	f := Found{OpsS: lo, EstimateOpsS: lo}
	if hi == 0 {
		f.AtLeast = lo > 0 && lo >= s.MaxOpsS
		if f.AtLeast {
			f.Above = fmt.Sprintf("the search's most, %.0f ops/s, met the objective", s.MaxOpsS)
		}
		return f
	}
	above := lastAt(steps)[hi]
	f.AtLeast = lo > 0 && above.GeneratorBound
	f.Above = fmt.Sprintf("%.0f ops/s: %s", hi, above.Why)
	switch {
	case lo == 0 || f.AtLeast:
	case above.Unsure:
		f.EstimateOpsS = unsureTop(steps, hi, s.Resolution)
	default:
		f.EstimateOpsS = math.Sqrt(lo * hi)
	}
	return f
}

// StepsOf judges one search's runs, in the order they ran, as its steps,
// marking the missed steps that are generator-bound: the engine's median
// service time within FlatService of the one at the search's lowest rate,
// errors within their bound.
func StepsOf(slo results.SLO, runs []results.Run) []Step {
	steps := make([]Step, 0, len(runs))
	var unloaded *results.Run
	for i, r := range runs {
		if r.TargetRate > 0 && r.Status == results.RunOK && r.ServiceTime.Mean > 0 && (unloaded == nil || r.TargetRate < unloaded.TargetRate) {
			unloaded = &runs[i]
		}
	}
	for _, r := range runs {
		if r.TargetRate == 0 {
			continue
		}
		if r.Probe {
			steps = append(steps, Step{Rate: r.TargetRate, Outcome: Outcome{Met: true}, Probe: true})
			continue
		}
		st := Step{Rate: r.TargetRate, Outcome: Judge(slo, r)}
		busy := 0.0
		if r.Clients > 0 {
			busy = r.ThroughputOpsS * r.ServiceTime.Mean / 1e6 / float64(r.Clients)
		}
		if !st.Met && !st.Unsure && unloaded != nil && r.Status == results.RunOK && !strings.HasPrefix(st.Why, "errors") && busy >= BusyClients &&
			r.ServiceTime.Mean > 0 && r.ServiceTime.Mean <= FlatService*unloaded.ServiceTime.Mean {
			st.GeneratorBound = true
			st.Why += fmt.Sprintf(", while the %d clients were busy %.0f%% of the time and the engine's mean service time stayed at %s (%s at %.0f ops/s): operations waited for a free client, not for the engine",
				r.Clients, busy*100, hist.FormatMicros(r.ServiceTime.Mean), hist.FormatMicros(unloaded.ServiceTime.Mean), unloaded.TargetRate)
		}
		steps = append(steps, st)
	}
	return steps
}
