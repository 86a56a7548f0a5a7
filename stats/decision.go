package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/capacity"
	"github.com/tierbench/tierbench/results"
)

// A capacity study ends in a decision, per block (durability x clients):
// each series' capacity and monthly cost, the frontier of series no other
// dominates, and, given a need, the cheapest series whose capacity meets
// it.
//
// The rule of dominance: series A dominates B when A costs less and B's
// capacity is not shown better than A's (their paired comparison is not
// "better"), or when they cost the same and B's capacity is shown worse.
// A series that costs more must prove its worth to stay on the frontier.
// Without prices every series costs the same. The pairs of a block are
// judged together, Holm over them (frontier.go), apart from the study's
// family: the chance that two equal capacities are told apart anywhere in
// the block is at most Alpha.

// CapacityEntry is a series' capacity in a block: an element of `capacity`
// in `show --format json`.
type CapacityEntry struct {
	Series     string `json:"placement"`
	Durability string `json:"durability"`
	Clients    int    `json:"clients"`
	// OpsS is the geometric mean of the rounds' capacities, the figure
	// CI95 is the 95% t interval of (on logs).
	OpsS float64     `json:"ops_s"`
	CI95 *[2]float64 `json:"ci95"`
	// AtLeast is true when some round's capacity is only a lower bound.
	AtLeast bool `json:"at_least,omitempty"`
	Rounds  int  `json:"rounds"`
	Steps   int  `json:"steps"`
	// Ratio, RatioCI95 and Verdict compare it with its baseline's, paired
	// by round and guarded with the study's other comparisons; RatioCI95
	// is the adjusted interval that matches the verdict, at
	// RatioCILevel, RatioCI95PerComparison the comparison's own.
	Ratio                  float64     `json:"ratio"`
	RatioCI95              *[2]float64 `json:"ratio_ci95"`
	RatioCILevel           float64     `json:"ratio_ci_level,omitempty"`
	RatioCI95PerComparison *[2]float64 `json:"ratio_ci95_per_comparison,omitempty"`
	Verdict                string      `json:"verdict"`
	// CostPerMonth is nil when the study priced nothing.
	CostPerMonth      *float64 `json:"cost_per_month"`
	CostPerMillionOps *float64 `json:"cost_per_million_ops,omitempty"`
	CostParts         []string `json:"cost_parts,omitempty"`
	Unpriced          []string `json:"unpriced_tiers,omitempty"`
	// MeetsNeed is "yes" (it carries the need in at least NeedCoverage
	// of rounds, at NeedConfidence: need.go), "no" (its rounds say it
	// misses it more often) or "may" (NeedWhy says what would decide);
	// empty without a need. NeedBoundOpsS is its lower tolerance bound,
	// NeedMoreRounds about how many more rounds would decide a "may".
	MeetsNeed      string   `json:"meets_need,omitempty"`
	NeedWhy        string   `json:"need_why,omitempty"`
	NeedBoundOpsS  *float64 `json:"need_bound_ops_s,omitempty"`
	NeedConfidence float64  `json:"need_confidence,omitempty"`
	NeedMoreRounds int      `json:"need_more_rounds,omitempty"`
	// Dropped says after which round the search stopped running it.
	Dropped string `json:"dropped,omitempty"`

	group *Group
}

// Domination is a series on no frontier, and the one that dominates it.
type Domination struct {
	Series     string `json:"placement"`
	Durability string `json:"durability"`
	Clients    int    `json:"clients"`
	By         string `json:"by"`
	Why        string `json:"why"`
	// Clear is true when its capacity's paired CI lies wholly below the
	// other's: the search stops running it (runner's racing).
	Clear bool `json:"-"`
}

// Frontier is a block's series that no other dominates, cheapest first.
type Frontier struct {
	Durability string   `json:"durability"`
	Clients    int      `json:"clients"`
	Series     []string `json:"placements"`
}

// Recommendation is a block's cheapest series meeting the need; Series is
// nil, with the reason, when none does or no need was given.
type Recommendation struct {
	Durability   string   `json:"durability"`
	Clients      int      `json:"clients"`
	Series       *string  `json:"placement"`
	CostPerMonth *float64 `json:"cost_per_month"`
	// CapacityOpsS is its mean capacity (geometric, over rounds);
	// LowerBoundOpsS what it carries in at least NeedCoverage of rounds
	// at Confidence.
	CapacityOpsS   float64  `json:"capacity_ops_s"`
	LowerBoundOpsS *float64 `json:"lower_bound_ops_s,omitempty"`
	Confidence     float64  `json:"confidence,omitempty"`
	Reason         string   `json:"reason"`
	// Cheaper says which cheaper placements may meet the need too, and
	// what would decide it: more rounds may recommend one of them.
	Cheaper string `json:"cheaper_may_meet,omitempty"`
}

// SearchTime compares the searches' time with a fixed-rate study of the
// same matrix: as many runs as searches, each as long as a step that
// opened its engine (a fixed-rate run opens, loads and closes its own).
type SearchTime struct {
	Steps           int     `json:"steps"`
	Searches        int     `json:"searches"`
	StepsS          float64 `json:"steps_s"`
	FixedRateRuns   int     `json:"fixed_rate_runs"`
	FixedRateS      float64 `json:"fixed_rate_s"`
	DroppedSearches int     `json:"searches_saved_by_dropping,omitempty"`
	MeanStepSeconds float64 `json:"mean_step_s"`
	StepsPerSearch  float64 `json:"steps_per_search"`
	// EngineStarts are the steps that opened (and loaded) their engine;
	// the others drove one their search kept open (Run.EngineKeptFrom).
	// MeanOpeningStepS is the mean wall time of those steps that ran
	// their course (of all of them when none did), what a fixed-rate run
	// costs, by which FixedRateS is reckoned.
	EngineStarts     int     `json:"engine_starts"`
	MeanOpeningStepS float64 `json:"mean_opening_step_s"`
	// BetweenStepsS is what a search spent besides its steps, on average:
	// its wall time less its steps', which is closing its engine (after
	// its last step, where a fixed-rate run closes its own within the
	// run) and the round's bookkeeping between steps, which a fixed-rate
	// study has between its runs too. Each fixed-rate run is charged it
	// (FixedRateS): without it the fixed-rate study came out 7% shorter
	// than one run beside it (2m35s reckoned, 2m48s run, in the seed
	// capacity study). 0 without the wall time.
	BetweenStepsS float64 `json:"between_steps_s,omitempty"`
	// WallS is the searches' wall time as the study record has it
	// (results.Study.SearchRounds: first step to last engine closed, every
	// round), 0 for studies stored before it.
	WallS float64 `json:"wall_s,omitempty"`
}

// Decision is a capacity study's answer.
type Decision struct {
	Capacity        []*CapacityEntry
	Frontiers       []Frontier
	Recommendations []Recommendation
	Dominated       []Domination
	Time            SearchTime
}

// DecideRuns is the decision of a stored capacity study.
func DecideRuns(st *results.Study, runs []results.Run) *Decision {
	view, viewRuns := results.SeriesView(st, runs)
	return Decide(view, Analyze(view, viewRuns), viewRuns)
}

// Decide makes a capacity study's decision from its analysis (Analyze of
// the same study and runs, in series view); nil for another study.
func Decide(st *results.Study, a *Analysis, runs []results.Run) *Decision {
	if st.SLO == nil || st.Search == nil {
		return nil
	}
	d := &Decision{}
	dropped := map[Key]results.Dropped{}
	for _, x := range st.Dropped {
		dropped[Key{x.Series, x.Durability, x.Clients}] = x
	}
	steps := map[Key]int{}
	for _, r := range runs {
		steps[Key{r.Placement, r.Durability, r.Clients}]++
	}
	series := map[string]results.Placement{}
	for _, p := range st.Placements {
		series[p.Name] = p
	}
	for _, g := range a.Groups {
		e := &CapacityEntry{Series: g.Series, Durability: g.Durability, Clients: g.Clients, OpsS: geoMean(g.Throughputs()), CI95: g.ThroughputCI,
			Rounds: g.N, Steps: steps[g.Key()], Ratio: g.Ratio, RatioCI95: g.RatioCI, RatioCILevel: g.RatioCILevel,
			RatioCI95PerComparison: g.RatioCIPerComparison, Verdict: g.Verdict, group: g}
		for _, r := range g.Runs {
			e.AtLeast = e.AtLeast || slices.ContainsFunc(r.Caveats, func(c string) bool { return strings.HasPrefix(c, "capacity is at least") })
		}
		if pr, ok := capacity.PlacementCost(st.Costs, series[g.Series], runsOf(runs, g.Series)); ok {
			e.CostPerMonth, e.CostParts, e.Unpriced = &pr.PerMonth, pr.Parts, pr.Unpriced
			if per := capacity.PerMillionOps(pr.PerMonth, e.OpsS); per > 0 {
				e.CostPerMillionOps = &per
			}
		}
		if x, ok := dropped[g.Key()]; ok {
			e.Dropped = fmt.Sprintf("after round %d: %s's capacity is clearly above, at no more cost", x.AfterRound, x.By)
		}
		d.Capacity = append(d.Capacity, e)
	}
	for _, block := range blocksOf(d.Capacity) {
		d.decideBlock(st, block)
	}
	d.Time = searchTime(st, runs, d.Capacity)
	return d
}

// geoMean is the geometric mean of v's positive values, 0 for none.
func geoMean(v []float64) float64 {
	l := logs(v)
	if len(l) == 0 {
		return 0
	}
	return math.Exp(Mean(l))
}

// blocksOf groups entries by durability and clients, in the study's order.
func blocksOf(entries []*CapacityEntry) [][]*CapacityEntry {
	var out [][]*CapacityEntry
	at := map[[2]string]int{}
	for _, e := range entries {
		k := [2]string{e.Durability, fmt.Sprint(e.Clients)}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], e)
	}
	return out
}

// decideBlock finds a block's frontier and recommendation.
func (d *Decision) decideBlock(st *results.Study, block []*CapacityEntry) {
	dur, clients := block[0].Durability, block[0].Clients
	var measured []*CapacityEntry
	for _, e := range block {
		if e.group.N > 0 {
			measured = append(measured, e)
		}
	}
	rounds := make([]map[int]float64, len(measured))
	for i, e := range measured {
		rounds[i] = e.group.Rounds()
	}
	pairs := comparePairs(rounds, st.EquivalenceMargin())
	if st.NeedOpsS > 0 {
		judgeNeed(measured, st.NeedOpsS)
	}
	var frontier []*CapacityEntry
	for j, b := range measured {
		if dom, ok := dominated(st, j, measured, pairs); ok {
			d.Dominated = append(d.Dominated, dom)
			continue
		}
		frontier = append(frontier, b)
	}
	slices.SortStableFunc(frontier, func(x, y *CapacityEntry) int { return cmp.Compare(cost(x), cost(y)) })
	f := Frontier{Durability: dur, Clients: clients, Series: []string{}}
	for _, e := range frontier {
		f.Series = append(f.Series, e.Series)
	}
	d.Frontiers = append(d.Frontiers, f)
	d.Recommendations = append(d.Recommendations, recommend(st, dur, clients, measured))
}

// cost is an entry's monthly cost; 0 when unpriced (every series the same).
func cost(e *CapacityEntry) float64 {
	if e.CostPerMonth == nil {
		return 0
	}
	return *e.CostPerMonth
}

// dominated finds a series that dominates entry j of the block (see the
// rule above and frontier.go), judged on the block's adjusted pairs.
func dominated(st *results.Study, j int, others []*CapacityEntry, pairs pairwise) (Domination, bool) {
	b := others[j]
	for i, a := range others {
		if i == j {
			continue
		}
		c := pairs.cmp[j][i]
		ok, clear := dominates(cost(a), cost(b), c)
		if !ok {
			continue
		}
		dom := Domination{Series: b.Series, Durability: b.Durability, Clients: b.Clients, By: a.Series, Clear: clear}
		capText := fmt.Sprintf("capacity is not shown better than %s's (%s, Holm over the block's %d pairs)", a.Series, c.Verdict, len(others)*(len(others)-1)/2)
		if shown := c.ShownCI(); shown != nil && (c.Verdict == Worse || c.Verdict == Equivalent) {
			capText = fmt.Sprintf("capacity %s [%s-%s] %s's: %s (adjusted %.1f%% interval, Holm over the block's %d pairs)", ratioText(c.Ratio), ratioText(shown[0]), ratioText(shown[1]),
				a.Series, c.Verdict, c.AdjustedLevel*100, len(others)*(len(others)-1)/2)
		}
		cheaper := cost(a) < cost(b)
		if cheaper && st.Costs != nil {
			dom.Why = fmt.Sprintf("%s costs %s more a month, and its %s", b.Series, capacity.Money(st.Costs, cost(b)-cost(a)), capText)
		} else {
			dom.Why = fmt.Sprintf("%s costs no less, and its %s", b.Series, capText)
		}
		return dom, true
	}
	return Domination{}, false
}

func ci(c *[2]float64, i int) float64 {
	if c == nil {
		return math.NaN()
	}
	return c[i]
}

// ratioText prints a ratio as the answer does: "2.4x".
func ratioText(r float64) string {
	if math.IsNaN(r) {
		return "?"
	}
	return fmt.Sprintf("%.2fx", r)
}

// recommend picks the cheapest series that carries the need in at least
// NeedCoverage of rounds (need.go), the larger capacity among equal costs.
func recommend(st *results.Study, dur string, clients int, measured []*CapacityEntry) Recommendation {
	rec := Recommendation{Durability: dur, Clients: clients}
	if st.NeedOpsS == 0 {
		rec.Reason = "no need given: the frontier is the answer"
		return rec
	}
	var yes, may []*CapacityEntry
	for _, e := range measured {
		switch e.MeetsNeed {
		case "yes":
			yes = append(yes, e)
		case "may":
			may = append(may, e)
		}
	}
	conf := 0.0
	if len(measured) > 0 {
		conf = measured[0].NeedConfidence
	}
	if len(measured) == 0 {
		rec.Reason = "no placement found a capacity in any round"
		return rec
	}
	if len(yes) == 0 {
		rec.Reason = fmt.Sprintf("no placement is shown to carry %.0f ops/s in at least %.0f%% of rounds (%.1f%% confidence each, Bonferroni over the %d candidates)",
			st.NeedOpsS, NeedCoverage*100, conf*100, len(measured))
		for _, e := range may {
			rec.Reason += fmt.Sprintf("; %s may: %s", e.Series, e.NeedWhy)
		}
		return rec
	}
	slices.SortStableFunc(yes, func(x, y *CapacityEntry) int {
		if c := cmp.Compare(cost(x), cost(y)); c != 0 {
			return c
		}
		return cmp.Compare(y.OpsS, x.OpsS)
	})
	best := yes[0]
	var cheaper []string
	for _, e := range may {
		if cost(e) < cost(best) {
			cheaper = append(cheaper, fmt.Sprintf("%s may: %s", e.Series, e.NeedWhy))
		}
	}
	rec.Cheaper = strings.Join(cheaper, "; ")
	rec.Series, rec.CostPerMonth, rec.CapacityOpsS, rec.LowerBoundOpsS = &best.Series, best.CostPerMonth, best.OpsS, best.NeedBoundOpsS
	rec.Confidence = conf
	meets := fmt.Sprintf("meets the need in at least %.0f%% of rounds (95%% confidence over the %d candidates: %.1f%% each): its lower tolerance bound is %.0f ops/s",
		NeedCoverage*100, len(measured), conf*100, *best.NeedBoundOpsS)
	switch {
	case st.Costs == nil:
		rec.Reason = meets + "; no costs were given, so none is cheaper and the one with the most capacity is chosen"
	case len(yes) == 1:
		rec.Reason = "the only placement that " + meets
	default:
		rec.Reason = fmt.Sprintf("the cheapest of %d placements shown to carry it; it %s", len(yes), meets)
	}
	return rec
}

// runsOf are the runs of one series.
func runsOf(runs []results.Run, series string) []results.Run {
	var out []results.Run
	for _, r := range runs {
		if r.Placement == series {
			out = append(out, r)
		}
	}
	return out
}

// searchTime sums the steps' wall time and sets it against a fixed-rate
// study of the same matrix: one run per search that ran or was dropped.
func searchTime(st *results.Study, runs []results.Run, entries []*CapacityEntry) SearchTime {
	t := SearchTime{}
	searches := map[[2]any]bool{}
	// A fixed-rate run is as long as a step that opened its engine and
	// ran its course: one that ended early (a miss, a probe) is shorter
	// than any fixed-rate run, and counted only when none ran its course.
	full, fullS, anyS := 0, 0.0, 0.0
	for _, r := range runs {
		if r.FinishedAt.IsZero() || r.StartedAt.IsZero() {
			continue
		}
		t.Steps++
		took := r.FinishedAt.Sub(r.StartedAt).Seconds()
		t.StepsS += took
		if r.EngineKeptFrom == "" {
			t.EngineStarts++
			if r.EndedEarly == "" {
				full++
				fullS += took
			}
			anyS += took
		}
		searches[[2]any{Key{r.Placement, r.Durability, r.Clients}, r.Repeat}] = true
	}
	t.Searches = len(searches)
	rounds := 0
	for _, r := range runs {
		rounds = max(rounds, r.Repeat)
	}
	t.FixedRateRuns = len(entries) * rounds
	t.DroppedSearches = t.FixedRateRuns - t.Searches
	if t.Steps > 0 {
		t.MeanStepSeconds = t.StepsS / float64(t.Steps)
	}
	switch {
	case full > 0:
		t.MeanOpeningStepS = fullS / float64(full)
	case t.EngineStarts > 0:
		t.MeanOpeningStepS = anyS / float64(t.EngineStarts)
	}
	for _, sr := range st.SearchRounds {
		t.WallS += sr.WallS
	}
	if t.WallS > t.StepsS && t.Searches > 0 {
		t.BetweenStepsS = (t.WallS - t.StepsS) / float64(t.Searches)
	}
	t.FixedRateS = (t.MeanOpeningStepS + t.BetweenStepsS) * float64(t.FixedRateRuns)
	if t.Searches > 0 {
		t.StepsPerSearch = float64(t.Steps) / float64(t.Searches)
	}
	return t
}

// TimeText says how long the search took against a fixed-rate study.
func (t SearchTime) TimeText() string {
	if t.Steps == 0 {
		return ""
	}
	took := t.StepsS
	if t.WallS > 0 {
		took = t.WallS
	}
	engines := ""
	if t.EngineStarts < t.Steps {
		engines = fmt.Sprintf(" on %d engines opened (the others kept open across their search's steps)", t.EngineStarts)
	}
	between := ""
	if t.BetweenStepsS > 0 {
		between = fmt.Sprintf(", and %.1fs a search spent closing its engine and between steps", t.BetweenStepsS)
	}
	s := fmt.Sprintf("The search ran %d steps (%.1f a search)%s in %s; a fixed-rate study of the same matrix is %d runs, about %s at the mean of %s of a step that opened its engine%s",
		t.Steps, t.StepsPerSearch, engines, dur(took), t.FixedRateRuns, dur(t.FixedRateS), dur(t.MeanOpeningStepS), between)
	if t.FixedRateS > 0 {
		s += fmt.Sprintf(" (%.1fx)", took/t.FixedRateS)
	}
	s += "."
	if t.DroppedSearches > 0 {
		s += fmt.Sprintf(" Dropping dominated placements saved %d searches.", t.DroppedSearches)
	}
	return s
}

func dur(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}
