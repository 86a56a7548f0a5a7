// Package livemetrics serves what a running study is doing and measuring
// for Prometheus to scrape (`tierbench run --metrics ADDR`), in the
// Prometheus text format or OpenMetrics, as the scraper asks: each op's
// operations, errors and latency per tick of the driver, which run of the
// matrix is running and in which phase, how many runs are done, and the
// host and tier telemetry the run's sampler reads over the measured
// window. Every series carries the run's cell (study, placement,
// durability, clients, round); the series of a run are dropped when the
// next run starts, so a long study does not pile up series.
//
// Metrics is the state (the runner's live observer and a
// prometheus.Collector that reports it at each scrape); server.go binds
// and serves it, on loopback unless told otherwise.
package livemetrics

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
)

// Buckets are the latency histogram's upper bounds in seconds: 1, 2.5 and
// 5 per decade from 1 µs to 10 s, which spans an in-memory engine's
// microseconds and a synced commit's milliseconds to a stalled second.
var Buckets = []float64{
	1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4,
	1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// PhasePreparing is a run's phase before its driver's first tick: the
// engine opening, the load, a cold restart.
const PhasePreparing = "preparing"

// cellLabels are on every series of a run.
var cellLabels = []string{"study", "placement", "durability", "clients", "round"}

func labels(extra ...string) []string { return append(append([]string{}, cellLabels...), extra...) }

var (
	descInfo = prometheus.NewDesc("tierbench_run_info",
		"The run now running: its cell, phase (preparing, warmup, measured), study id, engine and workload; always 1.",
		labels("phase", "study_id", "engine", "workload"), nil)
	descDone = prometheus.NewDesc("tierbench_study_runs_done",
		"Runs of the study done (stored, ok or failed).", []string{"study", "study_id"}, nil)
	descPlanned = prometheus.NewDesc("tierbench_study_runs_planned",
		"Runs the study plans (an adaptive study's plan grows as its rounds go).", []string{"study", "study_id"}, nil)
	descOps = prometheus.NewDesc("tierbench_ops_total",
		"Operations completed, by op and phase.", labels("phase", "op"), nil)
	descErrors = prometheus.NewDesc("tierbench_errors_total",
		"Operations failed, by op and phase (a load generator that does not split them counts them against the first op).", labels("phase", "op"), nil)
	descLatency = prometheus.NewDesc("tierbench_latency_seconds",
		"Latency of completed operations (from the intended start in open loop), by op and phase, from the driver's HDR histograms.", labels("phase", "op"), nil)
	descHostCPU = prometheus.NewDesc("tierbench_host_cpu_percent",
		"The host's CPU in the last telemetry sample, in percent of all CPUs' time, by mode (user, system, iowait, steal).", labels("mode"), nil)
	descEngineCPU = prometheus.NewDesc("tierbench_engine_cpu_percent",
		"The engine process's CPU in the last telemetry sample, in percent of one core.", labels(), nil)
	descEngineRSS = prometheus.NewDesc("tierbench_engine_resident_bytes",
		"The engine process's resident memory at the last telemetry sample.", labels(), nil)
	descIOPS = prometheus.NewDesc("tierbench_tier_iops",
		"I/O requests per second on a tier's device in the last telemetry sample, by direction.", labels("tier", "device", "direction"), nil)
	descBytes = prometheus.NewDesc("tierbench_tier_bytes_per_second",
		"Bytes per second on a tier's device in the last telemetry sample, by direction.", labels("tier", "device", "direction"), nil)
	descAwait = prometheus.NewDesc("tierbench_tier_await_seconds",
		"Mean time a request took on a tier's device in the last telemetry sample (queueing included), by direction (read, write, flush).", labels("tier", "device", "direction"), nil)
	descFlushes = prometheus.NewDesc("tierbench_tier_flushes_per_second",
		"Cache flushes (what fsync costs the device) per second on a tier's device in the last telemetry sample.", labels("tier", "device"), nil)
	descUtil = prometheus.NewDesc("tierbench_tier_utilization_ratio",
		"Share of the last telemetry sample's time a tier's device had I/O in flight.", labels("tier", "device"), nil)
)

// Metrics is what a study is doing, as its runner tells it (it satisfies
// runner.Live); it reports it as Prometheus metrics (prometheus.Collector).
// Safe for concurrent use.
type Metrics struct {
	mu               sync.Mutex
	studyName, study string
	done, planned    int
	run              *runState
}

// runState is the running run's figures.
type runState struct {
	cell             []string
	phase            string
	engine, workload string
	figures          map[opKey]*opFigures
	keys             []opKey // in the order first seen
	tiers            map[string]telemetry.TierSample
	host             *telemetry.HostSample
	engineSample     *telemetry.EngineSample
}

type opKey struct{ phase, op string }

// opFigures are an op's counts in a phase, and its latency in Buckets
// (per bucket, not cumulative; the last is +Inf).
type opFigures struct {
	ok, errors uint64
	latency    bool // the load generator reports histograms
	count      uint64
	sum        float64
	buckets    []uint64
}

// New returns empty Metrics.
func New() *Metrics { return &Metrics{} }

// RunStarted is told a run of study st begins; series names it as show
// does (the placement, with its driver and swept options when the study
// has several). The previous run's series are dropped.
func (m *Metrics) RunStarted(st *results.Study, r *results.Run, series string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.studyName, m.study = st.Name, st.ID
	m.run = &runState{
		cell:  []string{st.Name, series, r.Durability, strconv.Itoa(r.Clients), strconv.Itoa(r.Repeat)},
		phase: PhasePreparing, engine: st.Engine, workload: st.Workload,
		figures: map[opKey]*opFigures{}, tiers: map[string]telemetry.TierSample{},
	}
}

// Runs is told how many of the study's runs are done, of how many planned.
func (m *Metrics) Runs(done, planned int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done, m.planned = done, planned
}

// Tick adds one tick of the run's driver: its phase, each op's operations
// and errors, and, where the driver lends them (iv.ByOp), its latency.
func (m *Metrics) Tick(ops []string, iv driver.Interval) {
	m.mu.Lock()
	defer m.mu.Unlock()
	run := m.run
	if run == nil {
		return
	}
	run.phase = string(iv.Phase)
	for i, op := range ops {
		f := run.op(string(iv.Phase), op)
		if i < len(iv.PerOpOK) {
			f.ok += uint64(iv.PerOpOK[i])
		}
		switch {
		case iv.PerOpErr != nil && i < len(iv.PerOpErr):
			f.errors += uint64(iv.PerOpErr[i])
		case iv.PerOpErr == nil && i == 0:
			f.errors += uint64(iv.Errors)
		}
		if i < len(iv.ByOp) && iv.ByOp[i] != nil {
			f.latency = true
			f.add(iv.ByOp[i])
		}
	}
}

// Sampled takes a telemetry reading of the measured window.
func (m *Metrics) Sampled(r telemetry.Reading) {
	m.mu.Lock()
	defer m.mu.Unlock()
	run := m.run
	if run == nil {
		return
	}
	for tier, x := range r.Tiers {
		run.tiers[tier] = x
	}
	if r.Host != nil {
		run.host = r.Host
	}
	if r.Engine != nil {
		run.engineSample = r.Engine
	}
}

// op is the figures of op in phase, made on first use.
func (run *runState) op(phase, op string) *opFigures {
	k := opKey{phase, op}
	f := run.figures[k]
	if f == nil {
		f = &opFigures{buckets: make([]uint64, len(Buckets)+1)}
		run.figures[k], run.keys = f, append(run.keys, k)
	}
	return f
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInfo, descDone, descPlanned, descOps, descErrors, descLatency, descHostCPU,
		descEngineCPU, descEngineRSS, descIOPS, descBytes, descAwait, descFlushes, descUtil} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the state as it is now.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.study != "" {
		ch <- prometheus.MustNewConstMetric(descDone, prometheus.GaugeValue, float64(m.done), m.studyName, m.study)
		ch <- prometheus.MustNewConstMetric(descPlanned, prometheus.GaugeValue, float64(m.planned), m.studyName, m.study)
	}
	run := m.run
	if run == nil {
		return
	}
	with := func(extra ...string) []string { return append(append([]string{}, run.cell...), extra...) }
	gauge := func(d *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, with(extra...)...)
	}
	gauge(descInfo, 1, run.phase, m.study, run.engine, run.workload)
	for _, k := range run.keys {
		f := run.figures[k]
		ch <- prometheus.MustNewConstMetric(descOps, prometheus.CounterValue, float64(f.ok), with(k.phase, k.op)...)
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(f.errors), with(k.phase, k.op)...)
		if f.latency {
			ch <- prometheus.MustNewConstHistogram(descLatency, f.count, f.sum, f.cumulative(), with(k.phase, k.op)...)
		}
	}
	if h := run.host; h != nil {
		for mode, v := range map[string]float64{"user": h.CPUUserPct, "system": h.CPUSysPct, "iowait": h.CPUIowaitPct, "steal": h.CPUStealPct} {
			gauge(descHostCPU, v, mode)
		}
	}
	if e := run.engineSample; e != nil {
		gauge(descEngineCPU, e.CPUPct)
		gauge(descEngineRSS, float64(e.RSSBytes))
	}
	const mib = 1 << 20
	for tier, x := range run.tiers {
		gauge(descIOPS, x.ReadIOPS, tier, x.Device, "read")
		gauge(descIOPS, x.WriteIOPS, tier, x.Device, "write")
		gauge(descBytes, x.ReadMBps*mib, tier, x.Device, "read")
		gauge(descBytes, x.WriteMBps*mib, tier, x.Device, "write")
		gauge(descAwait, x.ReadAwaitMs/1e3, tier, x.Device, "read")
		gauge(descAwait, x.WriteAwaitMs/1e3, tier, x.Device, "write")
		gauge(descAwait, x.FlushAwaitMs/1e3, tier, x.Device, "flush")
		gauge(descFlushes, x.FlushesPerS, tier, x.Device)
		gauge(descUtil, x.UtilPct/100, tier, x.Device)
	}
}
