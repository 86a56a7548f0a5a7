package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/driver/stream"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/workload"
)

// A run on a cluster (platform: kubernetes) has the same record as a run
// here; its phases differ: apply the run's objects (a claim per placed
// component from its tier's storage class, the engine's pod, the load
// generator's Job running tierbench drive, which loads and drives), wait
// for the engine to be ready, read the Job's pod log into the driver's
// result, and remove every object.

// DefaultVolumeSize is a claim's size when the study does not set one
// and the workload gives no estimate for the component.
const DefaultVolumeSize = 2 << 30

// clusterTimeout bounds each wait on the cluster: the engine's pod to be
// scheduled, pull its image and pass its readiness probe; the Job's pod
// to appear and start.
const clusterTimeout = 5 * time.Minute

// podLifetime bounds the load generator's pod (its load and its run): a
// pod still running after a day is stuck, and the run fails.
const podLifetime = 24 * time.Hour

// connectCluster reaches the study's cluster and checks its namespace
// and storage classes; the tiers are recorded as the classes they are.
func (s *studyRun) connectCluster(ctx context.Context) error {
	k := s.st.Kubernetes
	c, err := kube.Connect(k.Kubeconfig, k.Context)
	if err != nil {
		return err
	}
	if err := c.Check(ctx, k.Namespace, s.st.StorageClasses()); err != nil {
		return err
	}
	s.rec.Tiers = map[string]tier.Info{}
	for _, t := range s.st.Tiers {
		sc, _ := tier.ClassOf(t.Spec)
		s.rec.Tiers[t.Name] = tier.Info{Name: t.Name, Path: fmt.Sprintf("storage class %s (%s)", sc.Class, sc.VolumeMode),
			Note: "a storage class of the cluster, not probed by tierbench: its durability is the class's"}
	}
	s.cluster = c
	s.rec.Platform = fmt.Sprintf("kubernetes: %s, namespace %s", c.Where, k.Namespace)
	return nil
}

// clusterRun is what a run on a cluster made, for its removal.
type clusterRun struct {
	spec   kube.RunSpec
	forget func() error  // the ledger's record of its objects
	engine []*watchedPod // the engine's pods and their nodes, once ready
	// driver is the load generator's Job, created once the engine is
	// ready (a load generator that starts first fails to connect).
	driver kube.Object
}

// performOnCluster carries out one run on the study's cluster.
func (r *run) performOnCluster(ctx context.Context) {
	defer r.close(ctx)
	defer r.removeFromCluster(ctx)
	for _, phase := range []func(context.Context) error{r.applyOnCluster, r.engineReadyOnCluster, r.driveOnCluster} {
		if err := phase(ctx); err != nil {
			r.fail(ctx, err)
			return
		}
	}
	r.judge(ctx)
}

// runSpec is the run's objects' description (see RunSpec).
func (r *run) runSpec() (kube.RunSpec, error) {
	durability := r.cell.Placement.DurabilityIn(r.cell.Durability)
	if durability != r.cell.Durability {
		r.rec.AppliedDurability = string(durability)
	}
	w, err := r.wspec.BuildFrom(r.params)
	if err != nil {
		return kube.RunSpec{}, err
	}
	r.w = w
	return RunSpec(r.st, r.eng, w, r.studyRun.rec.ID, r.rec.ID, r.cell)
}

// RunSpec describes the objects of one cell of st on its cluster: the
// engine's container as its adapter makes it for the cell's durability
// and options, a claim per component it mounts from its tier's storage
// class, and the load generator: tierbench drive's command, or the
// engine's own client for workload w. The runner and `tierbench render`
// both make a run's objects from it.
func RunSpec(st *study.Study, eng engine.Engine, w workload.Workload, studyID, runID string, cell study.Cell) (kube.RunSpec, error) {
	k := st.Kubernetes
	cz, ok := eng.(engine.Containerizer)
	if !ok || k == nil {
		return kube.RunSpec{}, fmt.Errorf("engine %s cannot run on a cluster", st.Engine)
	}
	spec := kube.RunSpec{Study: studyID, Run: runID, Namespace: k.Namespace, Engine: st.Engine, Image: k.Image}
	opts, err := st.EngineOptions(eng.Spec(), cell.Variant)
	if err != nil {
		return kube.RunSpec{}, err
	}
	cfg := engine.ContainerConfig{Durability: cell.Placement.DurabilityIn(cell.Durability),
		Options: opts, Image: k.EngineImage, Placement: cell.Placement.Components,
		Name: spec.EngineService()}
	ctr, err := cz.Container(cfg)
	if err != nil {
		return kube.RunSpec{}, err
	}
	ctr.MemoryLimit = cell.Variant.Memory // the run setting memory; 0: none
	if ctr.MemoryLimit == 0 {
		need, _ := eng.Spec().MemoryNeedOf(opts)
		ctr.MemoryRequest = need / int64(max(1, ctr.Nodes))
	}
	spec.Server = ctr
	for _, comp := range slices.Sorted(maps.Keys(cell.Placement.Components)) {
		if _, mounted := ctr.Mounts[comp]; !mounted {
			continue
		}
		tierName := cell.Placement.Components[comp]
		t, _ := st.Tier(tierName)
		sc, _ := tier.ClassOf(t.Spec)
		spec.Claims = append(spec.Claims, kube.Claim{Component: comp, Tier: tierName, Class: sc.Class,
			VolumeMode: sc.VolumeMode, Size: volumeSize(st, comp)})
	}
	if cc, ok := eng.(engine.ClientContainerizer); ok {
		cw, ok := w.(engine.CacheWorkload)
		if !ok {
			return kube.RunSpec{}, fmt.Errorf("engine %s runs its workloads in its own client, which does not run workload %s", st.Engine, st.Workload.Name)
		}
		work, preload := cw.CacheWork()
		client, err := cc.ClientContainer(cfg, engine.ClientRun{Work: work, Preload: preload, Clients: cell.Clients,
			Warmup: st.WarmupIn(cell), Duration: st.Duration})
		if err != nil {
			return kube.RunSpec{}, err
		}
		spec.Client = &client
		return spec, nil
	}
	spec.Drive = []string{"--workload", st.Workload.Name}
	for _, name := range slices.Sorted(maps.Keys(st.Workload.Params)) {
		spec.Drive = append(spec.Drive, "--set", name+"="+st.Workload.Params[name])
	}
	// The durability and the engine's options, as the study gave them,
	// reach the client too, which resolves them as its Config: an engine
	// whose client applies them (opensearch's index settings) reads them
	// there.
	spec.Drive = append(spec.Drive, "--durability", string(cfg.Durability))
	given := st.EngineOptionsIn(cell.Variant)
	for _, name := range slices.Sorted(maps.Keys(given)) {
		spec.Drive = append(spec.Drive, "--option", name+"="+given[name])
	}
	spec.Drive = append(spec.Drive, "--load", "--loaders", fmt.Sprint(loaders(cell.Clients)),
		"--clients", fmt.Sprint(cell.Clients), "--warmup", st.WarmupIn(cell).String(), "--duration", st.Duration.String())
	return spec, nil
}

// volumeSize is a component's claim: the study's volume_size, else for
// the data set's component four times the workload's estimate (indexes,
// free space, the engine's own files), else DefaultVolumeSize.
func volumeSize(st *study.Study, component string) int64 {
	if n := st.Kubernetes.VolumeSize; n > 0 {
		return n
	}
	if component == st.DataComponent && st.Workload.EstimatedBytes > 0 {
		return max(4*st.Workload.EstimatedBytes, DefaultVolumeSize)
	}
	return DefaultVolumeSize
}

// applyOnCluster creates the run's objects: the ledger first (so a kill
// -9 leaves a record), then its anchor, which owns the rest.
func (r *run) applyOnCluster(ctx context.Context) error {
	spec, err := r.runSpec()
	if err != nil {
		return err
	}
	password, err := secrets.New()
	if err != nil {
		return err
	}
	c, ns := r.cluster, spec.Namespace
	forget, err := c.Record(r.opt.Ledger, ns, spec.Selector())
	if err != nil {
		return err
	}
	r.onCluster = &clusterRun{spec: spec, forget: forget}
	r.opt.Progress.Live(r.label + " creating the run's objects on the cluster...")
	anchor := spec.Anchor()
	uid, err := c.Create(ctx, ns, anchor, false)
	if err != nil {
		return err
	}
	for _, o := range spec.Objects(password) {
		kube.SetOwner(o, anchor, uid)
		if o.Kind() == "Job" {
			r.onCluster.driver = o
			continue
		}
		if _, err := c.Create(ctx, ns, o, false); err != nil {
			return err
		}
	}
	for _, cl := range spec.Claims {
		names := spec.ClaimNames(cl.Component)
		r.rec.Caveats = append(r.rec.Caveats, fmt.Sprintf("%s on %s %s of storage class %s (%s, %s each)",
			cl.Component, plural(len(names), "claim"), strings.Join(names, ", "), cl.Class, cl.VolumeMode, humanize.IBytes(uint64(cl.Size))))
	}
	return nil
}

// engineReadyOnCluster waits for the engine's pods to pass their
// readiness probes, and says where they run.
func (r *run) engineReadyOnCluster(ctx context.Context) error {
	spec := r.onCluster.spec
	var where []string
	nodes := map[string]bool{}
	for _, pod := range spec.EnginePods() {
		r.opt.Progress.Live(r.label + " waiting for the engine's pod " + pod + "...")
		node, err := r.cluster.WaitReady(ctx, spec.Namespace, pod, clusterTimeout)
		if err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		r.onCluster.engine = append(r.onCluster.engine, &watchedPod{node: node, name: pod})
		where = append(where, pod+" on node "+node)
		nodes[node] = true
	}
	r.rec.EngineVersion = spec.Server.Image + " (image)"
	placed := "engine pod " + where[0]
	if len(where) > 1 {
		placed = fmt.Sprintf("engine pods %s (%d pods on %s)", strings.Join(where, ", "), len(where), plural(len(nodes), "node"))
	}
	r.rec.Caveats = append(r.rec.Caveats, placed+"; telemetry on a cluster is the pods' CPU and memory from the kubelets' summary API (cAdvisor, refreshed about every 10 s): no device I/O, flushes or fsync waits")
	return nil
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// driveOnCluster reads the load generator's pod log as it runs, through
// the same stream reader a local tierbench drive's output goes through,
// and waits for its pod's end.
func (r *run) driveOnCluster(ctx context.Context) error {
	spec, c, w := r.onCluster.spec, r.cluster, r.w
	if _, err := c.Create(ctx, spec.Namespace, r.onCluster.driver, false); err != nil {
		return fmt.Errorf("load generator: %w", err)
	}
	pod, err := c.PodOf(ctx, spec.Namespace, spec.Selector()+","+kube.LabelRole+"="+kube.RoleDriver, clusterTimeout)
	if err != nil {
		return fmt.Errorf("load generator: %w", err)
	}
	node, err := c.WaitStarted(ctx, spec.Namespace, pod, clusterTimeout)
	if err != nil {
		return fmt.Errorf("load generator: %w", err)
	}
	watch := &podWatch{c: c, ns: spec.Namespace, engine: r.onCluster.engine, load: &watchedPod{node: node, name: pod}}
	dcfg := driver.Config{Ops: w.Ops(), Warmup: r.st.WarmupIn(r.cell), Duration: r.st.Duration,
		OnTick: func(iv driver.Interval) {
			r.showInterval(iv)
			if iv.Phase == driver.Measured {
				watch.sample(ctx, false)
			}
		}}
	what := "tierbench drive"
	if spec.Client != nil {
		what = "the engine's client"
	}
	rd := stream.NewReader(what+" in pod "+pod, dcfg)
	runErr := r.followLog(ctx, pod, rd)
	// An engine killed under load fails its load generator too, whose
	// error says only that the engine went away: the engine's pod says
	// why, and comes first.
	if err := c.Down(ctx, spec.Namespace, spec.EnginePods()); err != nil {
		runErr = errors.Join(fmt.Errorf("engine went down during the run: %w", err), runErr)
	}
	watch.sample(ctx, true)
	r.rec.Telemetry = watch.summary(what)
	if used := watch.volumesUsed(); used != "" {
		r.rec.Caveats = append(r.rec.Caveats, "claims used at the window's end (kubelet): "+used)
	}
	r.res, err = rd.Result(runErr)
	if r.res != nil {
		var ferr error
		if r.hists, ferr = results.FromDriver(r.rec, r.res); ferr != nil {
			err = errors.Join(err, ferr)
		}
		r.rec.Telemetry.LoadGen.PerOp(r.rec.Ops)
	}
	return err
}

// podWatch reads the kubelets' figures of the run's pods (the engine's,
// the load generator's) over the measured window: the first reading when the
// window starts, the last one at most every sampleEvery and once more at
// the end (a finished pod may be gone from its kubelet's summary, so the
// last reading that worked counts).
type podWatch struct {
	c      *kube.Cluster
	ns     string
	engine []*watchedPod
	load   *watchedPod
	last   time.Time
	errs   []string
}

type watchedPod struct {
	node, name  string
	first, last *kube.PodStats
	maxWorking  uint64
}

// sampleEvery spaces the readings: cAdvisor refreshes its figures about
// every 10 seconds.
const sampleEvery = 5 * time.Second

func (w *podWatch) sample(ctx context.Context, final bool) {
	if !final && !w.last.IsZero() && time.Since(w.last) < sampleEvery {
		return
	}
	w.last = time.Now()
	for _, p := range append(slices.Clone(w.engine), w.load) {
		s, err := w.c.PodStats(ctx, p.node, w.ns, p.name)
		if err != nil {
			if p.last == nil && !slices.Contains(w.errs, err.Error()) {
				w.errs = append(w.errs, err.Error())
			}
			continue
		}
		if p.first == nil {
			p.first = &s
		}
		p.last = &s
		p.maxWorking = max(p.maxWorking, s.WorkingSetBytes)
	}
}

// summary is what the readings say: the engine's CPU and peak working
// set (summed over a cluster engine's pods), the load generator's CPU,
// and the readings that failed.
func (w *podWatch) summary(loadGen string) *telemetry.Summary {
	sum := &telemetry.Summary{Source: telemetry.SourceKubelet}
	read := 0
	for _, p := range w.engine {
		if p.first == nil {
			continue
		}
		sum.Engine.RSSBytesMax += p.maxWorking
		if pct, ok := kube.CPUPct(*p.first, *p.last); ok {
			sum.Engine.CPUPct += pct
			read++
		} else {
			w.errs = append(w.errs, "the CPU of engine pod "+p.name+": the kubelet did not refresh it within the window")
		}
	}
	if read > 0 && read < len(w.engine) {
		w.errs = append(w.errs, fmt.Sprintf("the engine's CPU is that of %d of its %d pods", read, len(w.engine)))
	}
	if load := w.load; load.first != nil {
		if pct, ok := kube.CPUPct(*load.first, *load.last); ok {
			sum.LoadGen = &telemetry.LoadGenSummary{Name: loadGen, CPUPct: pct,
				CPUSeconds: float64(load.last.CPUCoreNanoSeconds-load.first.CPUCoreNanoSeconds) / 1e9}
		}
	}
	sum.Errors = w.errs
	return sum
}

// volumesUsed says what the engine's claims held at the last reading
// ("" when no kubelet said).
func (w *podWatch) volumesUsed() string {
	var out []string
	for _, p := range w.engine {
		if p.last == nil {
			continue
		}
		for _, claim := range slices.Sorted(maps.Keys(p.last.VolumeUsedBytes)) {
			out = append(out, claim+" "+humanize.IBytes(p.last.VolumeUsedBytes[claim]))
		}
	}
	return strings.Join(out, ", ")
}

// logGrace is how long a log is read after its pod ended: a kubelet ends
// the stream itself; the wait covers one that does not (kwok's).
const logGrace = 10 * time.Second

// followLog reads the load generator's pod log into rd as it is written,
// until the run's last line, or until its pod ended and logGrace passed;
// it returns the pod's failure (its exit) or the log's.
func (r *run) followLog(ctx context.Context, pod string, rd *stream.Reader) error {
	c, ns := r.cluster, r.onCluster.spec.Namespace
	logCtx, stop := context.WithCancel(ctx)
	defer stop()
	ended := make(chan error, 1)
	go func() {
		ended <- c.WaitEnded(logCtx, ns, pod, podLifetime)
		time.AfterFunc(logGrace, stop)
	}()
	log, err := c.Logs(logCtx, ns, pod, kube.DriverContainer)
	if err != nil {
		return fmt.Errorf("load generator: %w", err)
	}
	defer log.Close()
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for !rd.Done() && sc.Scan() {
		if n, ok := stream.LoadedRecords(sc.Bytes()); ok {
			r.rec.LoadRecords = n
		}
		rd.Line(sc.Bytes())
	}
	podErr := <-ended
	if err := ctx.Err(); err != nil {
		return err
	}
	if podErr != nil {
		return fmt.Errorf("load generator: %w", podErr)
	}
	// After the pod's end and the grace, the log was cut on purpose: what
	// the stream lacks then is the reader's to say.
	if err := sc.Err(); err != nil && !rd.Done() && logCtx.Err() == nil {
		return fmt.Errorf("load generator: read the log of pod %s: %w", pod, err)
	}
	return nil
}

// removeFromCluster deletes every object of the run and waits until they
// are gone; a run whose objects stay is failed, and the ledger keeps them
// for cleanup.
func (r *run) removeFromCluster(ctx context.Context) {
	cr := r.onCluster
	if cr == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := r.cluster.Remove(ctx, cr.spec.Namespace, cr.spec.Selector()); err != nil {
		r.opt.Progress.Line(fmt.Sprintf("%s warning: %v; tierbench cleanup removes them", r.label, err))
		if r.rec.Status == results.RunOK {
			r.fail(ctx, err)
		}
		return
	}
	if err := cr.forget(); err != nil {
		r.opt.Progress.Line(fmt.Sprintf("%s warning: %v", r.label, err))
	}
}
