// Package stats turns a study's runs into answers: per group (series x
// durability x clients, a series being a placement, with its driver and
// swept option values and cache state when the study varied them) the
// median throughput and p99 over repeats with seeded bootstrap 95%
// confidence intervals and the coefficient of variation, and for every
// series that is not a baseline its throughput ratio to its baseline (the
// baseline placement in the same swept combination) with a 95% CI and a
// verdict. Throughput is the study's figure: ops/s, or the workload's own
// (tpmC, docs/s, or a query set's elapsed time, where lower is better).
// Fewer than MinRepeats repeats give no interval rather than a fake one.
package stats

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/tierbench/tierbench/results"
)

// Verdicts on a placement against the baseline.
const (
	Better     = "better"
	Worse      = "worse"
	Noise      = "within noise"
	IsBaseline = "baseline"
	NoInterval = "no interval"
	NoData     = "no data"
)

// MinRepeats is the fewest ok runs per group for which an interval is given.
const MinRepeats = 3

// Resamples is the number of bootstrap resamples.
const Resamples = 4000

// Seed makes every bootstrap reproducible: the same runs give the same CIs.
const Seed = 20261122

// Group is one placement x durability x clients cell over its repeats. Its
// JSON is an element of `groups` in `show --format json`.
type Group struct {
	// Series is the placement, or placement/driver when the study ran
	// several drivers (results.Study.Series). Its JSON name stays
	// "placement", as `show --format json` has always printed it.
	Series           string      `json:"placement"`
	Durability       string      `json:"durability"`
	Clients          int         `json:"clients"`
	N                int         `json:"n"`
	Failed           int         `json:"failed"`
	ThroughputMedian float64     `json:"throughput_median"`
	ThroughputCI     *[2]float64 `json:"throughput_ci95"`
	ThroughputCV     float64     `json:"throughput_cv"`
	P99Median        float64     `json:"p99_us_median"`
	P50Median        float64     `json:"p50_us_median"`
	Ratio            float64     `json:"ratio_vs_baseline"`
	RatioCI          *[2]float64 `json:"ratio_ci95"`
	Verdict          string      `json:"verdict"`
	// JournalWritesMedian and JournalFlushesMedian are the writes and
	// flushes per second on the journal's tier (JournalWrites), with a CI
	// of the writes; zero when not measured.
	JournalWritesMedian  float64     `json:"journal_writes_per_s_median,omitempty"`
	JournalWritesCI      *[2]float64 `json:"journal_writes_per_s_ci95,omitempty"`
	JournalFlushesMedian float64     `json:"journal_flushes_per_s_median,omitempty"`

	// Runs are the group's ok runs, in execution order.
	Runs []results.Run `json:"-"`
	// Failures are the errors of its runs that did not finish ok, in
	// execution order: why there is nothing to compare when N is 0.
	Failures []string `json:"-"`
	// throughputs are the ok runs' throughputs in the study's figure
	// (results.Study.Throughput), in Runs' order.
	throughputs []float64
	// lowerIsBetter is true when that figure is an elapsed time.
	lowerIsBetter bool
	// base is the group this one is compared with; nil for a baseline.
	base *Group
}

// LoadPerOp is the load generator's CPU per operation (µs) of each ok run
// that recorded one.
func (g *Group) LoadPerOp() []float64 {
	var v []float64
	for _, r := range g.Runs {
		if t := r.Telemetry; t != nil && t.LoadGen != nil && t.LoadGen.CPUUsPerOp > 0 {
			v = append(v, t.LoadGen.CPUUsPerOp)
		}
	}
	return v
}

// LoadPerOpRatio compares the load generator's CPU per operation with the
// baseline group's (two drivers on the same server: which costs it more
// CPU per transaction): the ratio of the medians and, from MinRepeats runs
// on each side, its bootstrap 95% CI. ok is false for a baseline group or
// without figures on both sides.
func (g *Group) LoadPerOpRatio() (ratio float64, ci *[2]float64, ok bool) {
	if g.base == nil {
		return 0, nil, false
	}
	mine, theirs := g.LoadPerOp(), g.base.LoadPerOp()
	if len(mine) == 0 || len(theirs) == 0 {
		return 0, nil, false
	}
	ratio = Median(mine) / Median(theirs)
	if len(mine) >= MinRepeats && len(theirs) >= MinRepeats {
		lo, hi := BootstrapRatioCI(rngFor("loadperop", g.Key()), mine, theirs)
		ci = &[2]float64{lo, hi}
	}
	return ratio, ci, true
}

// NoRunText says why a group has no ok run, for sentences that would
// otherwise compare it: "no ok run (2 failed: tier tiny full)", or "not
// run" when no run of it was stored (an interrupted study).
func (g *Group) NoRunText() string {
	return NoRunText(g.Failures)
}

// NoRunText says why a set of runs with the given failure errors has no ok
// run (see Group.NoRunText).
func NoRunText(failures []string) string {
	if len(failures) == 0 {
		return "not run"
	}
	first := shortError(failures[0])
	same := true
	for _, f := range failures[1:] {
		same = same && shortError(f) == first
	}
	if same {
		return fmt.Sprintf("no ok run (%d failed: %s)", len(failures), first)
	}
	return fmt.Sprintf("no ok run (%d failed; the first: %s)", len(failures), first)
}

// maxErrorText bounds a failure's error in a sentence; the whole error is
// in the run's record and the failed-runs list.
const maxErrorText = 120

// shortError is an error on one line, cut to maxErrorText characters.
func shortError(e string) string {
	e = strings.Join(strings.Fields(e), " ")
	if e == "" {
		return "no error recorded"
	}
	if r := []rune(e); len(r) > maxErrorText {
		return string(r[:maxErrorText-1]) + "…"
	}
	return e
}

// Key identifies a group.
type Key struct {
	Series     string // the placement, or placement/driver
	Durability string
	Clients    int
}

// Key returns the group's key.
func (g *Group) Key() Key { return Key{g.Series, g.Durability, g.Clients} }

// Throughputs returns the group's per-run throughputs, in the study's
// figure: ops/s, or the workload's own (tpmC).
func (g *Group) Throughputs() []float64 { return g.throughputs }

// Analysis is a study's groups in report order: durability, clients, then
// placement in the study's order.
type Analysis struct {
	Groups []*Group
	index  map[Key]*Group
}

// Group finds a group.
func (a *Analysis) Group(k Key) *Group { return a.index[k] }

// Analyze computes every group of st from its runs.
func Analyze(st *results.Study, runs []results.Run) *Analysis {
	a := &Analysis{index: map[Key]*Group{}}
	baselineOf := map[string]string{}
	for _, p := range st.Series() {
		baselineOf[p.Name] = st.BaselineOf(p)
	}
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			for _, p := range st.Series() {
				g := &Group{Series: p.Name, Durability: d, Clients: c, lowerIsBetter: !st.HigherIsBetter()}
				a.Groups = append(a.Groups, g)
				a.index[g.Key()] = g
			}
		}
	}
	for _, r := range runs {
		g := a.index[Key{st.SeriesOf(r), r.Durability, r.Clients}]
		if g == nil {
			continue
		}
		tp := st.Throughput(r)
		switch {
		case r.Status == results.RunOK && math.IsNaN(tp):
			// An elapsed time over an incomplete pass is no figure.
			g.Failed++
			g.Failures = append(g.Failures, "not every op ran in the measured window: raise duration above one pass")
		case r.Status == results.RunOK:
			g.Runs = append(g.Runs, r)
			g.throughputs = append(g.throughputs, tp)
		default:
			g.Failed++
			g.Failures = append(g.Failures, r.Error)
		}
	}
	for _, g := range a.Groups {
		summarize(g)
	}
	for _, g := range a.Groups {
		b := baselineOf[g.Series]
		if g.Series != b {
			g.base = a.index[Key{b, g.Durability, g.Clients}]
		}
		compareWithBaseline(g, a.index[Key{b, g.Durability, g.Clients}], g.Series == b)
	}
	return a
}

func summarize(g *Group) {
	g.N = len(g.Runs)
	if g.N == 0 {
		return
	}
	tp := g.Throughputs()
	g.ThroughputMedian = Median(tp)
	g.ThroughputCV = CV(tp)
	p99 := make([]float64, g.N)
	p50 := make([]float64, g.N)
	for i, r := range g.Runs {
		p99[i], p50[i] = r.Latency.P99, r.Latency.P50
	}
	g.P99Median, g.P50Median = Median(p99), Median(p50)
	journal(g)
	if g.N >= MinRepeats {
		lo, hi := BootstrapCI(rngFor("tp", g.Key()), tp, Median)
		g.ThroughputCI = &[2]float64{lo, hi}
	}
}

func compareWithBaseline(g, base *Group, isBase bool) {
	switch {
	case isBase:
		g.Verdict = IsBaseline
		if g.N > 0 {
			g.Ratio = 1
		}
		return
	case g.N == 0 || base == nil || base.N == 0 || base.ThroughputMedian == 0:
		g.Verdict = NoData
		return
	}
	g.Ratio = g.ThroughputMedian / base.ThroughputMedian
	if g.N < MinRepeats || base.N < MinRepeats {
		g.Verdict = NoInterval
		return
	}
	lo, hi := BootstrapRatioCI(rngFor("ratio", g.Key()), g.Throughputs(), base.Throughputs())
	g.RatioCI = &[2]float64{lo, hi}
	g.Verdict = VerdictFor(lo, hi, !g.lowerIsBetter)
}

// VerdictFor judges a ratio CI: above 1 is better when higher is better.
func VerdictFor(lo, hi float64, higherIsBetter bool) string {
	switch {
	case lo > 1:
		if higherIsBetter {
			return Better
		}
		return Worse
	case hi < 1:
		if higherIsBetter {
			return Worse
		}
		return Better
	}
	return Noise
}

// rngFor seeds a generator from Seed and the group, so each group's
// bootstrap is reproducible and independent of report order.
func rngFor(what string, k Key) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(what + "\x00" + k.Series + "\x00" + k.Durability))
	return rand.New(rand.NewPCG(Seed, h.Sum64()^uint64(k.Clients)))
}

// Median of v (v is not modified). NaN for an empty slice.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Mean of v.
func Mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// CV is the sample standard deviation over the mean (0 for fewer than 2).
func CV(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := Mean(v)
	if m == 0 {
		return 0
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(v)-1)) / m
}

// BootstrapCI is the 95% percentile-bootstrap interval of stat over v.
func BootstrapCI(rng *rand.Rand, v []float64, stat func([]float64) float64) (lo, hi float64) {
	est := make([]float64, Resamples)
	buf := make([]float64, len(v))
	for i := range est {
		resample(rng, v, buf)
		est[i] = stat(buf)
	}
	return percentiles95(est)
}

// BootstrapRatioCI is the 95% percentile-bootstrap interval of
// median(a)/median(b), resampling a and b independently (their runs are
// independent repeats, not pairs).
func BootstrapRatioCI(rng *rand.Rand, a, b []float64) (lo, hi float64) {
	est := make([]float64, 0, Resamples)
	ba, bb := make([]float64, len(a)), make([]float64, len(b))
	for i := 0; i < Resamples; i++ {
		resample(rng, a, ba)
		resample(rng, b, bb)
		if d := Median(bb); d > 0 {
			est = append(est, Median(ba)/d)
		}
	}
	return percentiles95(est)
}

func resample(rng *rand.Rand, v, into []float64) {
	for i := range into {
		into[i] = v[rng.IntN(len(v))]
	}
}

func percentiles95(est []float64) (lo, hi float64) {
	if len(est) == 0 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(est)
	return quantile(est, 0.025), quantile(est, 0.975)
}

// quantile interpolates linearly in a sorted slice.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}

// MinSamplesFor is the fewest recorded operations for which a percentile is
// shown: the tail beyond it must hold at least one sample, so p99 needs 100,
// p99.9 needs 1,000 and p99.99 needs 10,000.
func MinSamplesFor(percentile float64) int64 {
	if percentile <= 50 {
		return 1
	}
	n := 1 / (1 - percentile/100)
	return int64(math.Ceil(n - 1e-6)) // 1/(1-0.999) is 1000.0000000000009 in floating point
}

// Versus returns a copy of g holding its ratio to other (the same placement
// in another durability mode, say) with a CI and verdict; g is unchanged.
func Versus(g, other *Group) *Group {
	c := *g
	c.Ratio, c.RatioCI, c.Verdict = 0, nil, ""
	compareWithBaseline(&c, other, false)
	return &c
}
