// Package results owns tierbench's results: the records of studies and runs,
// their SQLite store, and the JSON shape `show` prints; FromDriver turns
// what the driver measured into a run's record and histograms (of each
// phase, and of each second: intervals.go), and AddEvents places the
// engine's events on its timeline (events.go). It is the only package
// that knows the schema.
package results

import (
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tier"
)

// Study statuses.
const (
	StudyRunning     = "running"
	StudyDone        = "done"
	StudyInterrupted = "interrupted"
)

// Run statuses.
const (
	RunOK          = "ok"
	RunFailed      = "failed"
	RunInterrupted = "interrupted"
)

// Study is one study's record. Its JSON is the `study` object of `show`.
type Study struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Engine     string     `json:"engine"`
	Workload   string     `json:"workload"`
	Baseline   string     `json:"baseline"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// ResumedAt lists when `run --resume` took up the study again.
	ResumedAt []time.Time          `json:"resumed_at,omitempty"`
	Status    string               `json:"status"`
	Env       hostenv.Env          `json:"env"`
	Tiers     map[string]tier.Info `json:"tiers"`
	// SLO, when set, makes this a capacity study (capacity.go): each
	// placement's figure is the highest open-loop rate meeting it, found by
	// Search; NeedOpsS asks for the cheapest placement carrying that rate,
	// Costs price the placements, and Dropped are those the search left.
	SLO      *SLO      `json:"slo,omitempty"`
	NeedOpsS float64   `json:"need_ops_s,omitempty"`
	Search   *Search   `json:"search,omitempty"`
	Costs    *Costs    `json:"costs,omitempty"`
	Dropped  []Dropped `json:"dropped,omitempty"`
	// Placements in the study's order, each component -> tier.
	Placements     []Placement       `json:"placements"`
	Durability     []string          `json:"durability"`
	Clients        []int             `json:"clients"`
	WorkloadParams map[string]string `json:"workload_params"`
	Options        map[string]string `json:"options,omitempty"`
	// Axes are the engine options the study swept, each a dimension of
	// its matrix; Caches the cache states it measured (two make an axis).
	Axes   []Axis   `json:"axes,omitempty"`
	Caches []string `json:"caches,omitempty"`
	// Crashes are the crash kinds the runs injected (two or more make an
	// axis); none for a study without crash runs.
	Crashes []string `json:"crashes,omitempty"`
	// Roles are what each of the engine's components holds, as its engine
	// declared them (engine.Component.Role); studies stored before roles
	// have none, and RoleOf answers by their components' names.
	Roles map[string]engine.Role `json:"roles,omitempty"`
	// Metric is the workload's own throughput figure (TPC-C's tpmC), when
	// it has one; statistics, charts and verdicts then use it for ops/s.
	Metric *Metric `json:"metric,omitempty"`
	// WarmupS is each run's warmup, or under WarmupRule its most.
	WarmupS    float64     `json:"warmup_s"`
	WarmupRule *WarmupRule `json:"warmup_rule,omitempty"`
	DurationS  float64     `json:"duration_s"`
	// Repeat is the rounds a fixed study runs (repeat: 3), or the most an
	// adaptive one may run (RepeatPlan.Max).
	Repeat int `json:"repeat"`
	// RepeatPlan is an adaptive study's rule (repeat: {min, max, until,
	// budget}); nil for a fixed number of rounds.
	RepeatPlan *RepeatPlan `json:"repeat_plan,omitempty"`
	// Rounds is how many rounds ran, and StopReason why no more did
	// (StopFixed, StopConverged, StopMax, StopBudget, StopInterrupted).
	Rounds     int    `json:"rounds,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	// Decided are the blocks an adaptive study stopped running once every
	// comparison touching them was decided, with the round after which;
	// later rounds ran only the others.
	Decided []DecidedBlock `json:"decided,omitempty"`
	// SearchRounds are a capacity study's rounds of searches as they ran:
	// how many searches and steps each took, how many engines it opened
	// (fewer than steps where the engine stays open across a search's
	// steps) and its wall time, from its first step's start to its last
	// engine's close.
	SearchRounds []SearchRound `json:"search_rounds,omitempty"`
	// HalfWidthReached is the widest paired 95% CI half-width of the
	// study's comparisons with a baseline (a fraction, beside
	// RepeatPlan.Until), and Multiplicity the guard its verdicts were
	// judged under: both computed when the study is shown, never stored.
	HalfWidthReached *float64 `json:"half_width_reached,omitempty"`
	Multiplicity     string   `json:"multiplicity,omitempty"`
	// Order is OrderRounds (each round's blocks of one durability and
	// client count, and the compared cells within each, in an order drawn
	// from OrderSeed), OrderShuffled (studies stored before whole rounds
	// were shuffled: only within each block) or OrderFixed (the study's
	// own order); studies stored before shuffling have none, and ran fixed.
	Order     string `json:"order,omitempty"`
	OrderSeed uint64 `json:"order_seed,omitempty"`
	// Margin is the equivalence margin m: a ratio whose 90% CI lies within
	// [1/(1+m), 1+m] is equivalent. 0 in studies stored before margins
	// (EquivalenceMargin gives the default).
	Margin     float64 `json:"margin,omitempty"`
	TargetRate float64 `json:"target_rate,omitempty"`
	// TargetRates are the rates of a target_rate axis, each a swept
	// value (RateDim); TargetRate is then the first.
	TargetRates []float64 `json:"target_rates,omitempty"`
	// MaxOps ends each run's measured window after that many operations.
	MaxOps        int64  `json:"max_ops,omitempty"`
	Arrival       string `json:"arrival,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	// Drivers are the load generators the study ran: "builtin" (tierbench's
	// own) and standard tools such as "pgbench".
	Drivers []string `json:"drivers"`
	// Target is the external server measured (password removed), when
	// tierbench started none; its placements are then as the user gave them.
	Target string `json:"target,omitempty"`
	// Platform says where the runs ran when not on this machine: the
	// Kubernetes cluster (context and server) and namespace.
	Platform string `json:"platform,omitempty"`
	// Probes are the fio figures of the tiers' storage, by tier name, where
	// the study probed them or found a recent stored probe.
	Probes map[string]*Probe `json:"probes,omitempty"`
	// Source is the study file as given.
	Source string `json:"source"`

	// view, in a SeriesView, keeps the swept dimensions, whose runs are
	// already series of their own.
	view []Dim
}

// WarmupRule is a steady-state warmup (warmup: {steady, window, max}):
// each run's measured window starts once every second's throughput over
// the last WindowS lies within Steady (a fraction) of their mean, or after the
// study's WarmupS, its most.
type WarmupRule struct {
	Steady  float64 `json:"steady"`
	WindowS float64 `json:"window_s"`
	// AfterTheFact says each run's window was chosen once it was over,
	// by MSER-5 on its 200 ms series (Run.Truncation), the rule judged
	// after the cut; studies stored before ended their warmups live.
	AfterTheFact bool `json:"after_the_fact,omitempty"`
}

// RepeatPlan is an adaptive study's rule: whole rounds from Min on, until
// every comparison with a baseline has a 95% CI half-width of at most
// Until, or Max rounds, or the next round would pass Budget.
type RepeatPlan struct {
	Min     int     `json:"min"`
	Max     int     `json:"max"`
	Until   float64 `json:"until"`
	BudgetS float64 `json:"budget_s,omitempty"`
}

// Truncation is MSER-5's judgment of one run's interval series, warmup
// and measured window together: where the transient ended (AtS, seconds
// from the first operation, at most the warmup's most), the share of the
// series after it (MeasuredShare), whether the series after it stays
// within the study's steady band (SteadyAfter, under a steady-state
// warmup) and whether MSER's point lay at the warmup's most (Bounded:
// the transient may have lasted longer).
type Truncation struct {
	AtS           float64 `json:"at_s"`
	MeasuredShare float64 `json:"measured_share"`
	SteadyAfter   *bool   `json:"steady_after,omitempty"`
	Bounded       bool    `json:"bounded,omitempty"`
	// Chosen says the cut chose the run's measured window (a steady-state
	// warmup's run without a crash), rather than being judged beside a
	// window chosen live.
	Chosen bool `json:"chosen,omitempty"`
}

// ArrivalCheck is what the check of an open-loop run's send times found
// on a bounded sample of the gaps between each client's actual sends in
// the measured window: for poisson, the Anderson-Darling statistic
// against an exponential of the gaps' own mean and its p value; for
// constant, the median of |gap - interval|/interval. OK is false when
// the sends were not the process asked (p < 0.05, or a median off by more
// than half the interval), and Why then says so.
type ArrivalCheck struct {
	Process       string   `json:"process"`
	Gaps          int      `json:"gaps"`
	MeanGapUs     float64  `json:"mean_gap_us"`
	IntendedGapUs float64  `json:"intended_gap_us"`
	A2            *float64 `json:"a2,omitempty"`
	P             *float64 `json:"p,omitempty"`
	Spread        *float64 `json:"spread,omitempty"`
	OK            bool     `json:"ok"`
	Why           string   `json:"why,omitempty"`
}

// DecidedBlock is a durability x client-count block whose comparisons
// were all decided (better, worse, equivalent or within until) after
// AfterRound rounds.
type DecidedBlock struct {
	Durability string `json:"durability"`
	Clients    int    `json:"clients"`
	AfterRound int    `json:"after_round"`
}

// Why an adaptive (or fixed) study stopped running rounds.
const (
	StopFixed       = "fixed"       // repeat: N ran its N rounds
	StopConverged   = "converged"   // every comparison reached until
	StopMax         = "max"         // max rounds ran
	StopBudget      = "budget"      // the next round would pass the budget
	StopInterrupted = "interrupted" // Ctrl-C or a kill
)

// Round orders.
const (
	OrderRounds   = "shuffled-rounds"
	OrderShuffled = "shuffled"
	OrderFixed    = "fixed"
)

// RoleOf is what component c holds: as its engine declared it, or for a
// study stored before roles, by the names the engines gave their
// components then.
func (s *Study) RoleOf(c string) engine.Role {
	if r, ok := s.Roles[c]; ok {
		return r
	}
	return legacyRoles[c]
}

// legacyRoles are the roles of the components of studies stored before
// engines declared them, by name.
var legacyRoles = map[string]engine.Role{
	"wal": engine.RoleCommitLog, "redo": engine.RoleCommitLog, "journal": engine.RoleCommitLog,
	"data": engine.RoleData, "persistence": engine.RoleData,
}

// ComponentWith is the component of run r's placement that holds role,
// and its tier; with several, the first by name.
func (s *Study) ComponentWith(r Run, role engine.Role) (component, tier string, ok bool) {
	for _, c := range slices.Sorted(maps.Keys(r.Components)) {
		if s.RoleOf(c) == role {
			return c, r.Components[c], true
		}
	}
	return "", "", false
}

// DefaultMargin is the equivalence margin of a study that sets none: 5%.
const DefaultMargin = 0.05

// EquivalenceMargin is the study's margin, DefaultMargin when it set none.
func (s *Study) EquivalenceMargin() float64 {
	if s.Margin > 0 {
		return s.Margin
	}
	return DefaultMargin
}

// RoundsRun is how many rounds the study ran: Rounds where recorded,
// else its fixed Repeat.
func (s *Study) RoundsRun() int {
	if s.Rounds > 0 {
		return s.Rounds
	}
	return s.Repeat
}

// Metric is a workload's headline throughput: one op's rate, as its
// standard reports it (tpmC counts committed New-Orders per minute), rather
// than all ops per second.
type Metric struct {
	// Name is the figure's unit as users know it: "tpmC".
	Name string `json:"name"`
	// Op is the op counted.
	Op string `json:"op"`
	// PerMinute counts per minute rather than per second.
	PerMinute bool `json:"per_minute,omitempty"`
	// PerOp is how many units one op counts for (docs per bulk); 0 is one.
	PerOp float64 `json:"per_op,omitempty"`
	// Elapsed makes the figure a time, not a rate: the seconds one pass
	// over the workload's ops takes (each op once, the sum of their mean
	// service times: a query set's elapsed time). Lower is better.
	Elapsed bool `json:"elapsed,omitempty"`
}

// Throughput returns run r's throughput in the study's figure: its
// metric's op rate when the workload has one, else all ops per second. An
// elapsed-time figure is NaN when some op never ran in the window: the
// pass was not whole.
func (s *Study) Throughput(r Run) float64 {
	m := s.Metric
	if m == nil || s.SLO != nil {
		// A capacity study's figure is the rate its searches found.
		return r.ThroughputOpsS
	}
	if m.Elapsed {
		// A pass is whole only if every op ran in the window.
		var sum float64
		for _, o := range r.ByOp {
			if o.Ops == 0 {
				return math.NaN()
			}
			sum += o.ServiceTime.Mean / 1e6
		}
		return sum
	}
	if r.DurationS <= 0 {
		return 0
	}
	v := float64(r.ByOp[m.Op].Ops) / r.DurationS
	if m.PerMinute {
		v *= 60
	}
	if m.PerOp > 0 {
		v *= m.PerOp
	}
	return v
}

// HigherIsBetter says which way the study's figure improves: up for a
// rate, down for an elapsed time.
func (s *Study) HigherIsBetter() bool { return s.Metric == nil || s.SLO != nil || !s.Metric.Elapsed }

// ThroughputUnit names what Throughput returns: "tpmC" or "ops/s".
func (s *Study) ThroughputUnit() string {
	if s.Metric == nil || s.SLO != nil {
		return "ops/s"
	}
	return s.Metric.Name
}

// Axis is an engine option a study swept: its values in normal form (as
// the engine got them) and as the study wrote them.
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	Labels []string `json:"labels"`
}

// Placement is a named component -> tier map.
type Placement struct {
	Name       string            `json:"name"`
	Components map[string]string `json:"components"`
	// Baseline, Settings and Of are set on series (Study.Series), never
	// stored: the series compared with, its value of each swept dimension
	// (Study.Dims), and the placement (or placement/driver) it is a
	// combination of.
	Baseline string   `json:"-"`
	Settings []string `json:"-"`
	Of       string   `json:"-"`
	// Durability, when set, is the mode the placement runs in in every
	// durability row (an in-memory reference).
	Durability string `json:"durability,omitempty"`
}

// CrashRun reports whether series p ran with a crash (its swept crash
// value is not none): its window ends at the crash and its clients keep a
// record of their writes, so its throughput is no figure to compare; the
// crash trade-off says what the crash cost.
func (p Placement) CrashRun() bool {
	return slices.ContainsFunc(p.Settings, func(s string) bool {
		return strings.HasPrefix(s, CrashDim+"=") && s != CrashDim+"=none"
	})
}

// Run is one run's record. Its JSON is an element of `runs` in `show`.
type Run struct {
	ID         string            `json:"id"`
	StudyID    string            `json:"study_id"`
	Seq        int               `json:"seq"`
	Placement  string            `json:"placement"`
	Components map[string]string `json:"components"`
	Durability string            `json:"durability"`
	// AppliedDurability is the mode the engine ran in when the placement
	// pins its own (an in-memory reference in every durability row).
	AppliedDurability string `json:"applied_durability,omitempty"`
	Clients           int    `json:"clients"`
	Repeat            int    `json:"repeat"`
	// Driver is the load generator: "builtin" or a standard tool's name.
	Driver string `json:"driver"`
	// Options are the engine options the study set for this run, swept
	// ones included, in normal form (defaults: tierbench engines).
	Options map[string]string `json:"options,omitempty"`
	// Cache is the cache state measured: warm, or cold (engine restarted
	// with the page cache dropped, no warmup).
	Cache         string    `json:"cache,omitempty"`
	Status        string    `json:"status"`
	Error         string    `json:"error"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	EngineVersion string    `json:"engine_version,omitempty"`
	// Dirs are the run folders each component used (removed after the run
	// unless --keep).
	Dirs map[string]string `json:"dirs,omitempty"`

	LoadRecords int64   `json:"load_records"`
	LoadS       float64 `json:"load_s"`
	// LoadCopied is true when the run started from a copy of the data set
	// an earlier run of the study loaded (a workload loaded once per
	// study); LoadS is then the copy's time.
	LoadCopied bool `json:"load_copied,omitempty"`
	// EngineKeptFrom, on a capacity search's step, is the run id of the
	// step that opened the engine this step drove: the search kept it
	// open, on its folders and loaded data, across its steps
	// (engine.StepKeeper), so this step opened, loaded and closed
	// nothing. Empty when the step opened its own engine.
	EngineKeptFrom string `json:"engine_kept_from,omitempty"`
	// EndedEarly, on a capacity search's step, says when and why it ended
	// before its time: its operations past the objective already made it
	// miss however the rest went (capacity.CertainMiss), or it was a
	// probe that passed (Probe). Empty when it ran its course.
	EndedEarly string `json:"ended_early,omitempty"`
	// Probe is true for a capacity search's probe that passed: a step of
	// its cold ramp that ended once the operations of its window so far
	// (after its transient's cut) met the objective (capacity.ProbePassed). It steered the search up; no
	// capacity rests on it alone.
	Probe bool `json:"probe,omitempty"`
	// WarmupS is the warmup the run took: the study's, or under a
	// steady-state rule until its throughput was steady, WarmupSteady
	// then saying whether it was (false: the rule's most ran out).
	WarmupS      float64 `json:"warmup_s"`
	WarmupSteady *bool   `json:"warmup_steady,omitempty"`
	// Truncation is where MSER-5 puts the end of the run's transient,
	// judged after the fact on its interval series from the first
	// operation; absent from a load generator that reports no series.
	Truncation *Truncation `json:"truncation,omitempty"`
	// DurationS is the measured window's actual length.
	DurationS float64 `json:"duration_s"`
	Ops       int64   `json:"ops"`
	Errors    int64   `json:"errors"`
	Late      int64   `json:"late_ops"`
	OpenLoop  bool    `json:"open_loop"`
	// TargetRate is the rate a capacity study's search step asked for
	// (total ops/s); 0 in other studies, whose rate is the study's.
	TargetRate float64 `json:"target_rate,omitempty"`
	// Footprint is the bytes each component's folder held at the end of
	// the run (blocks allocated), what its tier is priced by.
	Footprint map[string]int64 `json:"footprint_bytes,omitempty"`
	// Lanes is how many goroutines tierbench's driver ran the clients on,
	// pgbench -j style (driver/lane); 0 means a goroutine per client.
	Lanes          int     `json:"lanes,omitempty"`
	ThroughputOpsS float64 `json:"throughput_ops_s"`
	// Latency is from the intended start in open loop, from the actual start
	// in closed loop; ServiceTime always from the actual start.
	Latency hist.Summary `json:"latency_us"`
	// LatencyCI is, for a capacity search's step, the 95% interval of each
	// latency percentile a latency objective may bound (hist.PercentileCI),
	// keyed p50, p90, p95, p99, p99.9; a percentile its operations are too
	// few for has none. Steps stored before it have none at all.
	LatencyCI map[string]hist.CI `json:"latency_ci95_us,omitempty"`
	// Arrivals is the check of an open-loop run's actual send times
	// (driver.CheckArrivals); nil in closed loop, from a load generator
	// that does not say, or in runs stored before it.
	Arrivals    *ArrivalCheck        `json:"arrivals,omitempty"`
	ServiceTime hist.Summary         `json:"service_time_us"`
	ByOp        map[string]OpSummary `json:"by_op"`
	Timeline    []Interval           `json:"timeline"`
	// Events are what the engine did on its own during the run
	// (checkpoints, flushes, compactions: engine.Eventer) and a crash
	// run's crash and recovery, on the timeline's clock; none for an
	// engine that tells none, or a run stored before they were kept.
	Events []Event `json:"events,omitempty"`
	// Bottleneck names the run's likely limit (see Bottleneck).
	Bottleneck *Bottleneck `json:"bottleneck,omitempty"`
	// Verified is true when the workload checked an invariant of the data
	// after the run and it held; Verification says what was checked ("sum
	// of balances = 10000000 over 100000 accounts"). A check that fails
	// fails the run instead.
	Verified     bool   `json:"verified,omitempty"`
	Verification string `json:"verification,omitempty"`
	// Crash is what a crash run did and found; nil for a run without one.
	Crash *Crash `json:"crash,omitempty"`
	// Disturbed is true when other processes took more of the host over
	// the measured window than telemetry's thresholds allow; DisturbedBy
	// says what they took and who (telemetry.OthersSummary.Disturbed).
	// The run's figures stand, marked.
	Disturbed   bool   `json:"disturbed,omitempty"`
	DisturbedBy string `json:"disturbed_by,omitempty"`
	// Caveats are what the engine saw in the run that changes what was
	// measured without failing it (engine.Caveater).
	Caveats []string `json:"caveats,omitempty"`
	// Telemetry summarises the measured window's device, host and engine
	// figures; TelemetryTimeline holds its per-second samples.
	Telemetry         *telemetry.Summary `json:"telemetry,omitempty"`
	TelemetryTimeline *telemetry.Report  `json:"telemetry_timeline,omitempty"`
}

// OpSummary is one op type's figures in the measured window.
type OpSummary struct {
	Ops         int64        `json:"ops"`
	Errors      int64        `json:"errors"`
	Latency     hist.Summary `json:"latency_us"`
	ServiceTime hist.Summary `json:"service_time_us"`
}

// Interval is one second of a run (warmup included, tagged).
type Interval struct {
	T      float64 `json:"t_s"`
	Length float64 `json:"length_s"`
	Phase  string  `json:"phase"`
	Ops    int64   `json:"ops"`
	OpsS   float64 `json:"ops_s"`
	Errors int64   `json:"errors"`
	Late   int64   `json:"late"`
	P50us  float64 `json:"p50_us"`
	P99us  float64 `json:"p99_us"`
}

// Histogram kinds and phases as stored.
const (
	KindLatency = "latency"
	KindService = "service"
	// OpAll is the merge of every op type.
	OpAll = "all"
)

// Histogram is one encoded HDR histogram (nanoseconds) of a run: of a
// whole phase, or, with Interval set, of one interval of it.
type Histogram struct {
	Op      string
	Kind    string // latency | service
	Phase   string // measured | warmup
	Encoded []byte
	// Interval places the histogram in one tick of the run (intervals.go);
	// nil for a phase's histogram.
	Interval *Span
}

// Bottleneck is a run's likely limit, from its telemetry and the probed
// ceilings of its tiers. It is computed when results are shown (stats.
// Attribute), so a better attribution applies to old studies too; studies
// stored before that carry the one computed when they ran.
type Bottleneck struct {
	Kind              string  `json:"kind"` // fsync | iops | bandwidth | cpu | none
	Tier              string  `json:"tier,omitempty"`
	FractionOfCeiling float64 `json:"fraction_of_ceiling,omitempty"`
	Text              string  `json:"text"`
	// Evidence are the figures the sentence rests on, named with their
	// unit (flushes_per_s, flush_await_ms, wal_sync_wait_pct, cpu_busy_pct,
	// sync_ceiling_per_s, ...), so a reader can check it.
	Evidence map[string]float64 `json:"evidence,omitempty"`
}

// DriverOf returns a run's driver; runs stored before drivers were
// recorded were all tierbench's own.
func (r Run) DriverOf() string {
	if r.Driver == "" {
		return BuiltinDriver
	}
	return r.Driver
}

// BuiltinDriver names tierbench's own driver.
const BuiltinDriver = "builtin"

// CrashKind is the crash a run injected: its Crash's kind, or none.
func (r Run) CrashKind() string {
	if r.Crash == nil {
		return "none"
	}
	return r.Crash.Kind
}

// Crash is a crash run's record: when the engine was crashed, how long it
// took to come back, and what of the acknowledged writes survived.
type Crash struct {
	// Kind is process or power (study.CrashKinds).
	Kind string `json:"kind"`
	// Nodes is how many of a multi-node engine's nodes a process crash
	// killed; 0: all of them.
	Nodes int `json:"nodes,omitempty"`
	// AtS is the crash moment, in seconds into the measured window.
	AtS float64 `json:"at_s"`
	// RecoveryS is from the restart's start command to the first
	// operation the restarted engine acknowledged; 0 when it did not
	// come back (Consistent is then false and Detail says why).
	RecoveryS float64 `json:"recovery_s"`
	// Checked says whether the workload checked its acknowledged writes
	// (a workload that writes nothing, or keeps no record, does not).
	Checked bool `json:"checked"`
	// LostAcked counts acknowledged writes missing after recovery, in the
	// workload's unit (Detail names it), out of Acked: those with an
	// acknowledged write to check (LostAcked == Acked: every one lost).
	LostAcked int64 `json:"lost_acked"`
	Acked     int64 `json:"acked,omitempty"`
	// LostWindowMS is the age, at the crash, of the oldest lost
	// acknowledged write: how far back the loss reaches.
	LostWindowMS float64 `json:"lost_window_ms"`
	// Consistent is false when the restarted engine did not open or the
	// workload's invariant broke: corruption, recorded as a finding of
	// the run, not as a failure of tierbench.
	Consistent bool `json:"consistent"`
	// Detail says what was checked and found, in words.
	Detail string `json:"detail,omitempty"`
	// Promised is true when the run's durability mode promises to keep
	// every acknowledged write through this kind of crash (the engine's
	// engine.Mode.Survives): a loss then contradicts the documentation.
	Promised bool `json:"promised"`
	// Replayed is what the restarted engine says it replayed ("replayed
	// 12 MiB of WAL in 0.15 s"), where it says it.
	Replayed string `json:"replayed,omitempty"`
	// Lost, for crash: power, is what the crash-capable layer rolled back
	// on the tiers (files, bytes, directory entries; for a reorder cut,
	// also the writes its full write log lost whole).
	Lost string `json:"lost,omitempty"`
	// Model is the power cut's model of what unsynced data survives
	// (engine.PowerModels: survive, torn, reorder; "" for plain power), Keep the
	// probability it kept each unit with, and Seed what drew the units:
	// derived from the study's order seed and the run's number, so a
	// resumed run draws the same.
	Model string  `json:"model,omitempty"`
	Keep  float64 `json:"keep,omitempty"`
	Seed  uint64  `json:"seed,omitempty"`
	// Unlogged is, for the reorder model, how many unsynced writes found
	// their tier's write log full (256 MiB) and were lost whole instead
	// of drawn.
	Unlogged int64 `json:"unlogged,omitempty"`
	// AtomicWriteB is, for the torn model, the smallest atomic-write unit
	// of the tiers the cut rolled back, in bytes.
	AtomicWriteB int64 `json:"atomic_write_b,omitempty"`
	// Corrupt is true when the engine's own check of its state after
	// recovery found damage (a checksum failure, a broken index), or the
	// engine could not start; CorruptDetail is the engine's message.
	Corrupt       bool   `json:"corrupt,omitempty"`
	CorruptDetail string `json:"corrupt_detail,omitempty"`
	// CorruptChecked says the engine's own check ran (engine.CorruptionChecker).
	CorruptChecked bool `json:"corrupt_checked,omitempty"`
}
