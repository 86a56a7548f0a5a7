package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/workload"
)

// studyRun is a study being carried out: what every run shares.
type studyRun struct {
	st    *study.Study
	opt   Options
	eng   engine.Engine
	wspec workload.Spec
	// params are the workload's parameters, resolved once: the record's
	// effective parameters, and what each run's workload is built from.
	params setting.Values
	rec    *results.Study
	// done holds the cells that already have an ok run (resume).
	done map[int]bool
	// lastSeq is the highest seq stored: a capacity study's steps take
	// the next ones.
	lastSeq int
	ws      *tier.Workspace
	// forget drops the study's record from the ledger.
	forget func()
	// loadOnce is true for a workload.LoadedOnce workload (never on a
	// target server, whose data is the user's); snapshots are its loaded
	// data sets, by snapshotKey.
	loadOnce  bool
	snapshots map[string]snapshot
	// cluster is the study's cluster (platform: kubernetes), whose
	// storage classes are its tiers: it has no workspace.
	cluster *kube.Cluster
}

// prepare finds the study's engine and workload, refuses to start over a
// killed tierbench's leftovers, makes the study's workspace (provisioned
// tiers, scratch folder), probes the tiers, and stores the study record as
// running. end undoes what it made.
func prepare(ctx context.Context, st *study.Study, opt Options) (s *studyRun, err error) {
	s = &studyRun{st: st, opt: opt, forget: func() {}, snapshots: map[string]snapshot{}}
	var ok bool
	if s.eng, ok = opt.Catalog.Engine(st.Engine); !ok {
		return nil, fmt.Errorf("unknown engine %q", st.Engine)
	}
	if s.wspec, ok = opt.Catalog.Workload(st.Workload.Name); !ok {
		return nil, fmt.Errorf("unknown workload %q", st.Workload.Name)
	}
	if s.params, err = s.wspec.Resolve(st.Workload.Params); err != nil {
		return nil, err
	}
	// Each run builds its own instance, since a workload carries per-run
	// state (the insert counter); this one says whether it loads once.
	w0, err := s.wspec.BuildFrom(s.params)
	if err != nil {
		return nil, err
	}
	_, once := w0.(workload.LoadedOnce)
	s.loadOnce = once && st.Target == ""
	if opt.Ledger != nil {
		left, err := opt.Ledger.Leftovers()
		if err != nil {
			return nil, err
		}
		if len(left) > 0 {
			return nil, &LeftoversError{Resources: left}
		}
	}
	s.rec = newStudyRecord(st, s.params.Map())
	if opt.Resume != nil {
		if s.rec, s.done, err = resumed(ctx, opt.Store, opt.Resume); err != nil {
			return nil, err
		}
	}
	if s.rec.Roles == nil {
		// What each component holds, as the engine declares it: the
		// analysis reads roles, not component names.
		s.rec.Roles = map[string]engine.Role{}
		for _, c := range s.eng.Spec().Components {
			s.rec.Roles[c.Name] = c.Role
		}
	}
	if st.Kubernetes != nil {
		if err := s.connectCluster(ctx); err != nil {
			return nil, err
		}
	} else {
		wc := tier.WorkspaceConfig{Ledger: opt.Ledger, Tag: s.rec.ID}
		if s.ws, err = wc.Open(ctx, st.TierSpecs()...); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			s.end()
			s = nil
		}
	}()
	if s.ws != nil {
		s.rec.Tiers = s.ws.Tiers()
		if s.rec.Probes, err = probeTiers(ctx, st.Probe, s.ws.Made(), s.rec.Tiers, opt.Store, opt); err != nil {
			return s, err
		}
	}
	// The ledger's record comes first: a kill after the record is stored
	// as running must leave cleanup a record to mark it interrupted by.
	if s.forget, err = recordStudy(opt.Ledger, opt.Store, s.rec.ID); err != nil {
		s.forget = func() {}
		return s, err
	}
	if err := opt.Store.PutStudy(context.WithoutCancel(ctx), s.rec); err != nil {
		return s, err
	}
	for _, t := range st.Tiers {
		switch info := s.rec.Tiers[t.Name]; {
		case t.Abilities().OnCluster:
			opt.Progress.Line(fmt.Sprintf("note: tier %s (%s) is not probed, and reports show it as not durable: %s", t.Name, info.Path, info.Note))
		case !info.Durable:
			opt.Progress.Line(fmt.Sprintf("note: tier %s (%s) is not durable: %s", t.Name, info.Path, info.Note))
		case info.LayerDurable:
			opt.Progress.Line(fmt.Sprintf("note: tier %s (%s) is emulated, %s", t.Name, info.Path, s.ws.Stack(t.Name).Note))
		}
	}
	if s.ws != nil {
		for _, w := range s.ws.Warnings() {
			opt.Progress.Line("warning: " + w)
		}
	}
	return s, nil
}

// end forgets the study in the ledger and undoes its workspace.
func (s *studyRun) end() {
	s.forget()
	if s.ws == nil {
		return
	}
	if err := s.ws.Close(); err != nil {
		s.opt.Progress.Line("warning: undo provisioned tiers: " + err.Error())
	}
}

// NewStudyID is a new study's id: when it started, and 6 random hex
// digits.
func NewStudyID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// RunID is the id of a study's run number seq.
func RunID(studyID string, seq int) string { return fmt.Sprintf("%s-%03d", studyID, seq) }

func newStudyRecord(st *study.Study, params map[string]string) *results.Study {
	now := time.Now().UTC()
	rec := &results.Study{
		ID:   NewStudyID(now),
		Name: st.Name, Engine: st.Engine, Workload: st.Workload.Name, Baseline: st.Baseline,
		StartedAt: now, Status: results.StudyRunning, Env: hostenv.Capture(),
		Clients: st.Clients, WorkloadParams: params, Options: st.Options,
		WarmupS: st.Warmup.Seconds(), DurationS: st.Duration.Seconds(), Repeat: st.Repeat,
		TargetRate: st.TargetRate, TargetRates: st.TargetRates, MaxOps: st.MaxOps, Source: st.Source, Drivers: st.Drivers,
	}
	if st.Target != "" {
		rec.Target = engine.RedactTarget(st.Target)
		rec.Source = engine.RedactTargetIn(st.Source, st.Target)
	}
	for _, a := range st.Axes {
		rec.Axes = append(rec.Axes, results.Axis{Name: a.Name, Values: a.Values, Labels: a.Labels})
	}
	rec.Caches = st.Caches
	rec.Crashes = st.Crashes
	rec.Order, rec.OrderSeed = results.OrderRounds, st.Order.Seed
	switch {
	case st.Order.Fixed:
		rec.Order, rec.OrderSeed = results.OrderFixed, 0
	case st.Order.BlocksInPlace:
		rec.Order = results.OrderShuffled
	}
	if st.Steady != nil {
		rec.WarmupRule = &results.WarmupRule{Steady: st.Steady.Band, WindowS: st.Steady.Window.Seconds(), AfterTheFact: true}
	}
	rec.Margin = st.Margin
	if rec.Margin == 0 {
		rec.Margin = results.DefaultMargin
	}
	if a := st.Adaptive; a != nil {
		rec.RepeatPlan = &results.RepeatPlan{Min: a.Min, Max: st.Repeat, Until: a.Until, BudgetS: a.Budget.Seconds()}
	}
	if m := st.Workload.Metric; m != nil {
		rec.Metric = &results.Metric{Name: m.Name, Op: m.Op, PerMinute: m.PerMinute, PerOp: m.PerOp(params), Elapsed: m.Elapsed}
	}
	if st.TargetRate > 0 || st.SLO != nil {
		rec.Arrival = st.Arrival
	}
	if st.SLO != nil {
		search := st.Search
		rec.SLO, rec.NeedOpsS, rec.Search, rec.Costs = st.SLO, st.Need, &search, st.Costs
	}
	for _, d := range st.Durability {
		rec.Durability = append(rec.Durability, string(d))
	}
	for _, p := range st.Placements {
		rec.Placements = append(rec.Placements, results.Placement{Name: p.Name, Components: p.Components, Durability: string(p.Durability)})
	}
	return rec
}
