// Package study reads a study file (YAML), checks it against the engines and
// workloads tierbench knows, and expands it into the matrix of runs.
//
// Parsing collects every problem, each with its line number and a fix, so a
// user sees all mistakes at once; nothing else in tierbench runs until the
// study is valid.
package study

import (
	"slices"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

// Study is a validated study file.
type Study struct {
	Name   string
	Engine string
	// Tiers in declaration order.
	Tiers []Tier
	// Placements in declaration order.
	Placements []Placement
	Baseline   string
	Durability []engine.Durability
	Workload   Workload
	Clients    []int
	// Warmup is how long each run warms up: exactly, or with Steady at
	// most.
	Warmup time.Duration
	// Steady, when set, has each run's window chosen after the fact, where
	// MSER-5 cuts its transient, and judged steady on the same series
	// (warmup: {steady: 5%, window: 3s, max: 60s}).
	Steady   *Steady
	Duration time.Duration
	// Repeat is the rounds to run: a fixed count, or with Adaptive the most
	// that may run (its max).
	Repeat int
	// Adaptive, when set, stops early once the answer is clear (repeat:
	// {min, max, until, budget}).
	Adaptive *Adaptive
	// Order is the order of each round's compared cells (order:).
	Order Order
	// Margin is the equivalence margin (margin:, a fraction); 0 is
	// results.DefaultMargin.
	Margin float64
	// TargetRate is the total ops/s in open loop; 0 means closed loop.
	// With a list (target_rate: [1000, 2000]), TargetRates holds each,
	// an axis of the matrix, and TargetRate the first.
	TargetRate  float64
	TargetRates []float64
	// MaxOps, when set, ends each run's measured window after that many
	// operations, or its duration, whichever comes first.
	MaxOps int64
	// Arrival is one of driver.ArrivalNames(): "constant" or "poisson"
	// (open loop only).
	Arrival string
	// Options are what the study's options: give, validated against the
	// engine's Spec, in normal form: the engine's options and the run
	// setting Memory, as the record keeps them; those given a list of
	// values are Axes instead.
	Options map[string]string
	// Axes are the options swept, each one more dimension of the matrix.
	Axes []Axis
	// Probe says whether to characterise the tiers with fio: ProbeCached
	// (the default) uses a recent stored probe if one exists.
	Probe string
	// Caches are the cache states measured, CacheWarm (measure after the
	// warmup) and/or CacheCold (restart the engine with the page cache
	// dropped right before measuring, no warmup); two make an axis.
	Caches []string
	// Crashes are the crash kinds (CrashNone, CrashProcess, CrashPower)
	// the runs inject in their measured window; two or more make an axis.
	// Empty means none.
	Crashes []string
	// CrashNodes, when above 0, makes a process crash kill that many of
	// a multi-node engine's nodes instead of all of them (crash: {kind:
	// process, nodes: n}).
	CrashNodes int
	// Drivers are the load generators to run, each one more axis of the
	// matrix: tool.Builtin (tierbench's own) and standard tools (pgbench).
	Drivers []string
	// Target is the URL of an external server tierbench connects to instead
	// of starting one; placements are then labels and nothing is placed.
	Target string
	// Kubernetes, when set, is the cluster the study runs on (platform:
	// kubernetes): its tiers are storage classes there.
	Kubernetes *Kubernetes
	// SLO, when set, makes this a capacity study (slo.go): each round
	// searches every placement's capacity under it, with Search's steps;
	// Need is the rate the decision asks for (0: none) and Costs price
	// the placements (nil: unpriced).
	SLO    *results.SLO
	Search results.Search
	Need   float64
	Costs  *results.Costs
	// Source is the study file's text, stored with the results.
	Source string
	// File names the study file in problems found after parsing.
	File string
	// DataComponent is the engine's component that holds the data set (its
	// first: data, or Ignite's persistence), whose tier must hold the
	// workload's data.
	DataComponent string
}

// Probe modes.
const (
	ProbeOff    = "off"
	ProbeCached = "cached"
	ProbeQuick  = "quick"
	ProbeFull   = "full"
)

// ProbeModes lists the values of `probe:`.
var ProbeModes = []string{ProbeCached, ProbeQuick, ProbeFull, ProbeOff}

// Cache states.
const (
	CacheWarm = "warm"
	CacheCold = "cold"
)

// CacheModes lists the values of `cache:`.
var CacheModes = []string{CacheWarm, CacheCold}

// Tier is a named folder that run folders are created under: an existing
// folder (Path), or storage tierbench provisions for the study (Tmpfs,
// Loop, Pmem, Rbd), whose Path is known once it is mounted.
type Tier struct {
	// Spec is what package tier makes of it: its name, its path (the real
	// folder: symlinks are followed once, when the study is read), what
	// tierbench provisions for it and what it emulates.
	tier.Spec
	// Given keeps the path as written when it differs from Path.
	Given string
	// Line is where the tier is declared in the study file.
	Line int
}

// Size is the capacity tierbench gives a tmpfs, loop or rbd tier, and its kind
// for messages; 0 for tiers whose size is the machine's (folders, PMEM).
func (t Tier) Size() (int64, string) {
	if t.Kind == nil || t.Kind.Bytes() == 0 {
		return 0, ""
	}
	return t.Kind.Bytes(), t.Kind.Key()
}

// Placement maps every engine component to a tier name.
type Placement struct {
	Name       string
	Components map[string]string
	// Durability, when set, is the mode this placement runs in whatever the
	// durability row (an in-memory reference: durability: memory places
	// nothing and is compared with every row).
	Durability engine.Durability
}

// TierNames are the tiers p puts components on, each once, sorted.
func (p Placement) TierNames() []string {
	var out []string
	for _, t := range p.Components {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// DurabilityIn returns the mode a run of p in durability row d applies.
func (p Placement) DurabilityIn(d engine.Durability) engine.Durability {
	if p.Durability != "" {
		return p.Durability
	}
	return d
}

// Workload names a workload and its overrides.
type Workload struct {
	Name   string
	Params map[string]string
	// EstimatedBytes is a lower bound of the data set the load writes, 0
	// when the workload does not say (see Sizer).
	EstimatedBytes int64
	// Metric is the workload's own throughput figure, nil for ops/s.
	Metric *workload.Metric
}

// Catalog is what validation needs to know about engines and workloads,
// and the Ceph that rbd tiers' clusters are made of (their components and
// options).
type Catalog interface {
	EngineSpec(name string) (engine.Spec, bool)
	EngineNames() []string
	Workload(name string) (workload.Spec, bool)
	WorkloadNames() []string
	Tool(name string) (tool.Tool, bool)
	ToolNames() []string
	Ceph() rbdtier.Ceph
}

// TierSpecs are the study's tiers as package tier takes them.
func (s *Study) TierSpecs() []tier.Spec {
	out := make([]tier.Spec, len(s.Tiers))
	for i, t := range s.Tiers {
		out[i] = t.Spec
	}
	return out
}

// Tier returns the tier with the given name.
func (s *Study) Tier(name string) (Tier, bool) {
	for _, t := range s.Tiers {
		if t.Name == name {
			return t, true
		}
	}
	return Tier{}, false
}

// Cell is one run of the matrix.
type Cell struct {
	// Seq numbers cells from 1 in execution order.
	Seq        int
	Placement  Placement
	Durability engine.Durability
	Clients    int
	// Driver is tool.Builtin or a standard tool's name.
	Driver string
	// Variant is the cell's swept option values and cache state.
	Variant Variant
	// Repeat counts from 1.
	Repeat int
	// Rate is a capacity search step's open-loop rate (total ops/s); 0
	// runs at the study's target_rate, or closed loop.
	Rate float64
}

// drivers returns the study's drivers, tierbench's own when none is named.
func (s *Study) drivers() []string {
	if len(s.Drivers) == 0 {
		return []string{tool.Builtin}
	}
	return s.Drivers
}
