// Package telemetry samples what the machine was doing while a run was
// measured: per-tier disk figures, host CPU, the engine process and the
// load generator's CPU. A throughput number alone cannot tell a saturated
// device from a CPU-bound engine, a load generator eating the server's CPU
// or a noisy neighbour (steal); these per-second samples can, and
// the run's summary is what `show` prints next to its results. Each
// reading's samples can also be handed out as they are taken
// (Config.OnSample, reading.go), for a live view.
//
// Everything is read from procfs (Linux only), so a run needs no extra tools
// and no privileges. Sampling happens in one goroutine off the workload's
// hot path, and a source that cannot be read is recorded as an error in the
// report rather than failing the run.
package telemetry

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/tierbench/tierbench/host/procfs"
)

// Config names what to watch.
type Config struct {
	// Tiers maps a tier name to its block device as tier.Info.Device gives
	// it ("/dev/vda", "/dev/loop3", "/dev/mapper/x"). A source that is not a
	// /dev path ("tmpfs", "overlay", "") has no device: the tier is reported
	// with Device "" and no samples.
	Tiers map[string]string
	// PID of the engine process to watch (0 = none; for the in-process
	// engine pass os.Getpid()). Its threads and those of its child
	// processes are also sampled for sync waits (see SyncWait).
	PID int
	// EnginePIDs are the engine's other processes, when it is several that
	// are not PID's children (Ceph's daemons): their threads count as the
	// engine's in TreeCPUPct and the sync waits.
	EnginePIDs []int
	// Components maps each engine component to its folder, so that sync
	// waits are told apart by the file being synced (the WAL's fsyncs from
	// the data's). Without it every wait counts as OtherComponent.
	Components map[string]string
	// LoadName and LoadPIDs name the load generator and its processes
	// when sampling starts: tierbench's own (os.Getpid()) for its driver,
	// a tool's or a client JVM's. Processes started later are added with
	// AddLoad. A PID equal to PID means driver and engine share a process.
	LoadName string
	LoadPIDs []int
	// LoadThreads are threads of this process (tierbench's lanes) whose
	// CPU is the load generator's, each read alone (procfs.ThreadPath).
	LoadThreads []int
	// Interval between samples; 0 means one second.
	Interval time.Duration
	// Others, when set, also follows what every other process on the host
	// took (others.go): a run measured here, not on a cluster or against
	// a server tierbench did not start.
	Others bool
	// OnSample, if set, is handed each reading's new samples as it is
	// taken, from the sampler's goroutine (reading.go): a live view of
	// the window. It must return quickly.
	OnSample func(Reading)
}

// DiskSample is one interval's figures for a tier's device. Rates are per
// second over the interval ending at T; MB means MiB (2^20 bytes), as in
// iostat -m.
type DiskSample struct {
	// T is seconds since Start, at the end of the interval.
	T float64 `json:"t_s"`
	DiskRates
}

// DiskRates are a device's figures over an interval or a whole window.
type DiskRates struct {
	ReadIOPS  float64 `json:"read_iops"`
	WriteIOPS float64 `json:"write_iops"`
	ReadMBps  float64 `json:"read_mbps"`
	WriteMBps float64 `json:"write_mbps"`
	// AwaitMs is the mean time a read or write took, queueing included.
	AwaitMs float64 `json:"await_ms"`
	// ReadAwaitMs and WriteAwaitMs split it by direction (iostat's r_await
	// and w_await): a commit waits for writes, and a read-heavy interval must
	// not make its writes look fast.
	ReadAwaitMs  float64 `json:"read_await_ms"`
	WriteAwaitMs float64 `json:"write_await_ms"`
	// UtilPct is the share of time the device had I/O in flight, capped at
	// 100 (clock skew between the kernel's ticks and ours can overshoot).
	UtilPct float64 `json:"util_pct"`
	// FlushesPerS is cache-flush requests completed per second: what fsync
	// costs the device. 0 on kernels before 5.5, which do not count them.
	FlushesPerS float64 `json:"flushes_per_s"`
	// FlushAwaitMs is the mean time a flush request took (diskstats field
	// 20 over field 19; iostat's f_await); 0 when none completed.
	FlushAwaitMs float64 `json:"flush_await_ms"`
}

// HostSample is one interval's CPU split, in percent of all CPUs' time.
type HostSample struct {
	T float64 `json:"t_s"`
	// CPUUserPct includes nice (and guest time, which the kernel folds in).
	CPUUserPct float64 `json:"cpu_user_pct"`
	// CPUSysPct includes hard and soft interrupt time.
	CPUSysPct    float64 `json:"cpu_sys_pct"`
	CPUIowaitPct float64 `json:"cpu_iowait_pct"`
	// CPUStealPct is time a hypervisor ran someone else: a noisy neighbour.
	CPUStealPct float64 `json:"cpu_steal_pct"`
}

// EngineSample is one interval's figures for the engine process.
type EngineSample struct {
	T float64 `json:"t_s"`
	// RSSBytes is the resident set at the end of the interval.
	RSSBytes uint64 `json:"rss_bytes"`
	// CPUPct is user+system time in percent of one core, like top: a
	// multi-threaded engine can exceed 100.
	CPUPct float64 `json:"cpu_pct"`
}

// Report is everything a Sampler saw.
type Report struct {
	// Tiers holds each tier's samples; tiers on the same device share them,
	// and a tier without a device has an empty list.
	Tiers   map[string][]DiskSample `json:"tiers"`
	Host    []HostSample            `json:"host"`
	Engine  []EngineSample          `json:"engine"`
	Summary Summary                 `json:"summary"`
	// Errors lists sources that could not be read, each once with how often.
	Errors []string `json:"errors,omitempty"`
}

// Summary is what `show --format json` prints per run as runs[].telemetry.
// Rates are means over the whole sampled window, computed from the first
// and last counters (not an average of per-second averages, which would
// weight quiet and busy seconds alike for await).
type Summary struct {
	Tiers  map[string]TierSummary `json:"tiers"`
	Host   HostSummary            `json:"host"`
	Engine EngineSummary          `json:"engine"`
	// LoadGen is the load generator's CPU; absent in runs stored before
	// it was sampled.
	LoadGen *LoadGenSummary `json:"load_generator,omitempty"`
	// Memory is the engine's memory cgroup over the measured window, in a
	// run with a memory limit (the study's memory setting); absent otherwise.
	Memory *MemorySummary `json:"memory,omitempty"`
	// Others is what processes other than tierbench's took from the host
	// (Config.Others); absent when not followed.
	Others *OthersSummary `json:"others,omitempty"`
	// SyncWait is, by component (and OtherComponent), the share of the
	// window the engine's threads spent in fsync and its kin; absent when
	// no engine process was watched.
	SyncWait map[string]SyncWait `json:"sync_wait,omitempty"`
	// SyncSamples is how many samples SyncWait rests on.
	SyncSamples int `json:"sync_samples,omitempty"`
	// Errors repeats Report.Errors so that a stored summary with zeros can
	// be told apart from one whose source was unreadable.
	Errors []string `json:"errors,omitempty"`
	// Source is SourceKubelet for a run on a cluster, whose figures are
	// the pods' CPU and memory from the kubelets' summary API only (no
	// host CPU split, device I/O or fsync waits); empty for this machine's
	// sampler.
	Source string `json:"source,omitempty"`
}

// SourceKubelet marks a Summary of a run on a Kubernetes cluster.
const SourceKubelet = "kubelet"

// TierSummary is a tier's disk figures over the window.
type TierSummary struct {
	// Device is the kernel's name for it ("vda", "loop3", "dm-0"), "" when
	// the tier has no block device (tmpfs) or it could not be resolved.
	Device string `json:"device"`
	DiskRates
}

// HostSummary is the host's CPU split over the window; see HostSample.
type HostSummary struct {
	CPUUserPct   float64 `json:"cpu_user_pct"`
	CPUSysPct    float64 `json:"cpu_sys_pct"`
	CPUIowaitPct float64 `json:"cpu_iowait_pct"`
	CPUStealPct  float64 `json:"cpu_steal_pct"`
}

// EngineSummary is the engine's peak memory and mean CPU over the window.
type EngineSummary struct {
	RSSBytesMax uint64  `json:"rss_bytes_max"`
	CPUPct      float64 `json:"cpu_pct"`
	// TreeCPUPct is the CPU time of the engine process and its child
	// processes (PostgreSQL's backends), in percent of one core, from the
	// scheduler's per-thread figures; 0 when not sampled.
	TreeCPUPct float64 `json:"tree_cpu_pct,omitempty"`
	// CPUWaitPct is the time those threads were ready to run but waited
	// for a CPU, in percent of one thread: the engine's share of CPU
	// contention, whoever holds the CPUs.
	CPUWaitPct float64 `json:"cpu_wait_pct,omitempty"`
	// Buffers are the engine's own buffer-cache counters over the window,
	// for engines that keep them (PostgreSQL, MariaDB).
	Buffers *BufferSummary `json:"buffers,omitempty"`
}

// BufferSummary is how the engine's page requests in the window were
// served: from its buffer cache (Hits) or read from below (Reads: the OS
// page cache or the device). It proves a cold run started cold.
type BufferSummary struct {
	Hits   int64   `json:"hits"`
	Reads  int64   `json:"reads"`
	HitPct float64 `json:"hit_pct"`
}

// NewBufferSummary is the change between two readings of cumulative
// counters.
func NewBufferSummary(hits0, reads0, hits1, reads1 int64) *BufferSummary {
	b := &BufferSummary{Hits: max(hits1-hits0, 0), Reads: max(reads1-reads0, 0)}
	if total := b.Hits + b.Reads; total > 0 {
		b.HitPct = 100 * float64(b.Hits) / float64(total)
	}
	return b
}

// Sampler reads the sources every Interval until Stop.
type Sampler struct {
	cfg      Config
	t0       time.Time
	clkTck   float64
	pageSize uint64

	tierDev map[string]string     // tier → kernel device name, "" = none
	disks   map[string]*diskState // kernel device name → state
	host    hostState
	engine  engineState
	load    *loadState
	others  *othersState // nil unless Config.Others
	errs    errorLog
	// lastAt is when the latest reading was taken: the window's end.
	lastAt time.Duration

	sync     *syncSampler // nil without an engine PID
	syncStop chan struct{}
	syncDone chan struct{}

	stopCh   chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	report   *Report
}

type diskState struct {
	first, last diskReading
	have        bool
	samples     []DiskSample
}

type diskReading struct {
	at time.Duration
	c  diskCounters
}

type hostState struct {
	first, last cpuReading
	have        bool
	samples     []HostSample
}

type cpuReading struct {
	at time.Duration
	c  cpuCounters
}

type engineState struct {
	first, last procReading
	have        bool
	rssMax      uint64
	samples     []EngineSample
}

type procReading struct {
	at time.Duration
	p  procfs.Stat
}

// Start takes a first reading of every source, then samples every
// Interval in its own goroutine until Stop is called or ctx ends (one of
// the two must happen, or the goroutine lives on). It fails only on a bad
// Config or an ended ctx; unreadable sources end up in the report's Errors
// so that telemetry never costs a run its results.
func Start(ctx context.Context, cfg Config) (*Sampler, error) {
	if cfg.Interval < 0 {
		return nil, fmt.Errorf("telemetry: interval %v is negative", cfg.Interval)
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.PID < 0 {
		return nil, fmt.Errorf("telemetry: pid %d is negative", cfg.PID)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("telemetry: not started: %w", err)
	}
	s := &Sampler{
		cfg:      cfg,
		clkTck:   float64(clockTicks()),
		pageSize: uint64(pageSize()),
		tierDev:  make(map[string]string, len(cfg.Tiers)),
		disks:    make(map[string]*diskState),
		stopCh:   make(chan struct{}),
		done:     make(chan struct{}),
		errs:     errorLog{count: make(map[string]int)},
		load:     newLoadState(cfg.LoadName, cfg.LoadPIDs, cfg.LoadThreads),
	}
	s.resolveTiers()
	if cfg.Others {
		roots := append([]int{os.Getpid(), cfg.PID}, cfg.EnginePIDs...)
		s.others = newOthersState(append(roots, cfg.LoadPIDs...))
	}
	s.t0 = time.Now()
	s.read(false)
	go s.loop(ctx)
	if cfg.PID > 0 {
		s.sync = newSyncSampler(cfg.PID, cfg.EnginePIDs, cfg.Components)
		s.syncStop, s.syncDone = make(chan struct{}), make(chan struct{})
		go s.sync.run(ctx, s.syncStop, s.syncDone)
	}
	return s, nil
}

// resolveTiers maps each tier's device to its /proc/diskstats name once, so
// the per-tick work is one file read and map lookups.
func (s *Sampler) resolveTiers() {
	if len(s.cfg.Tiers) == 0 {
		return
	}
	text, err := readProc(diskstatsPath)
	var stats map[string]diskEntry
	if err == nil {
		stats, err = parseDiskstats(text)
	}
	if err != nil {
		s.errs.add(fmt.Errorf("resolve tier devices: %w", err))
	}
	for _, tier := range slices.Sorted(maps.Keys(s.cfg.Tiers)) {
		dev := s.cfg.Tiers[tier]
		if stats == nil {
			s.tierDev[tier] = ""
			continue
		}
		name, err := resolveDevice(dev, stats)
		if err != nil {
			s.errs.add(fmt.Errorf("tier %s: %w", tier, err))
		}
		s.tierDev[tier] = name
		if name != "" && s.disks[name] == nil {
			s.disks[name] = &diskState{}
		}
	}
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stopCh:
			return
		case <-tick.C:
			s.read(false)
		}
	}
}

// Stop ends sampling, takes a last reading and returns the report. It may
// be called more than once (and after ctx ended); later calls return the
// same report.
func (s *Sampler) Stop() *Report {
	s.stopOnce.Do(func() {
		close(s.stopCh)
		<-s.done
		if s.sync != nil {
			close(s.syncStop)
			<-s.syncDone
		}
		s.read(true)
		s.report = s.build()
	})
	return s.report
}

// read takes one reading of every source. The final reading (from Stop)
// always counts for the summary, but makes a sample only if it covers at
// least a tenth of an interval: a few milliseconds' window would turn one
// I/O into thousands per second.
func (s *Sampler) read(final bool) {
	minSpan := time.Duration(0)
	if final {
		minSpan = s.cfg.Interval / 10
	}
	before := s.marks()
	if len(s.disks) > 0 {
		s.readDisks(minSpan)
	}
	s.readHost(minSpan)
	if s.cfg.PID > 0 {
		s.readEngine(minSpan)
	}
	if s.cfg.OnSample != nil {
		if r, any := s.newSince(before); any {
			s.cfg.OnSample(r)
		}
	}
	s.readLoad()
	if s.others != nil {
		if err := s.others.read(s.since()); err != nil {
			s.errs.add(err)
		}
	}
	s.lastAt = s.since()
}

func (s *Sampler) since() time.Duration { return time.Since(s.t0) }

func (s *Sampler) readDisks(minSpan time.Duration) {
	text, err := readProc(diskstatsPath)
	at := s.since()
	var stats map[string]diskEntry
	if err == nil {
		stats, err = parseDiskstats(text)
	}
	if err != nil {
		s.errs.add(fmt.Errorf("disks: %w", err))
		return
	}
	for name, d := range s.disks {
		e, ok := stats[name]
		if !ok {
			s.errs.add(fmt.Errorf("disk %s: gone from %s", name, diskstatsPath))
			continue
		}
		cur := diskReading{at: at, c: e.c}
		if !d.have {
			d.first, d.last, d.have = cur, cur, true
			continue
		}
		if e.c.lessThan(d.last.c) {
			s.errs.add(fmt.Errorf("disk %s: counters went backwards (device re-attached?); figures spanning it are low", name))
		}
		if span := cur.at - d.last.at; span > 0 && span >= minSpan {
			d.samples = append(d.samples, DiskSample{T: cur.at.Seconds(), DiskRates: diskRates(d.last.c, cur.c, span)})
		}
		d.last = cur
	}
}

func (s *Sampler) readHost(minSpan time.Duration) {
	text, err := readProc(statPath)
	at := s.since()
	var c cpuCounters
	if err == nil {
		c, err = parseCPU(text)
	}
	if err != nil {
		s.errs.add(fmt.Errorf("host cpu: %w", err))
		return
	}
	cur := cpuReading{at: at, c: c}
	h := &s.host
	if !h.have {
		h.first, h.last, h.have = cur, cur, true
		return
	}
	if span := cur.at - h.last.at; span > 0 && span >= minSpan {
		smp := cpuShares(h.last.c, cur.c)
		smp.T = cur.at.Seconds()
		h.samples = append(h.samples, smp)
	}
	h.last = cur
}

func (s *Sampler) readEngine(minSpan time.Duration) {
	path := fmt.Sprintf("/proc/%d/stat", s.cfg.PID)
	text, err := readProc(path)
	at := s.since()
	var p procfs.Stat
	if err == nil {
		p, err = procfs.Parse(text)
	}
	if err != nil {
		s.errs.add(fmt.Errorf("engine pid %d: %w", s.cfg.PID, err))
		return
	}
	cur := procReading{at: at, p: p}
	e := &s.engine
	rss := p.RSSPages * s.pageSize
	if !e.have {
		e.rssMax = rss
		e.first, e.last, e.have = cur, cur, true
		return
	}
	if p.StartTicks != e.last.p.StartTicks {
		// The PID now names another process: its CPU time is not the engine's.
		s.errs.add(fmt.Errorf("engine pid %d: process was replaced (it exited and the pid was reused)", s.cfg.PID))
		return
	}
	e.rssMax = max(e.rssMax, rss)
	if span := cur.at - e.last.at; span > 0 && span >= minSpan {
		e.samples = append(e.samples, EngineSample{
			T:        cur.at.Seconds(),
			RSSBytes: rss,
			CPUPct:   cpuPct(e.last.p, p, span, s.clkTck),
		})
	}
	e.last = cur
}

// build assembles the report once sampling has ended.
func (s *Sampler) build() *Report {
	r := &Report{
		Tiers:  make(map[string][]DiskSample, len(s.tierDev)),
		Host:   s.host.samples,
		Engine: s.engine.samples,
		Summary: Summary{
			Tiers: make(map[string]TierSummary, len(s.tierDev)),
		},
		Errors: s.errs.list(),
	}
	if r.Host == nil {
		r.Host = []HostSample{}
	}
	if r.Engine == nil {
		r.Engine = []EngineSample{}
	}
	for tier, name := range s.tierDev {
		ts := TierSummary{Device: name}
		samples := []DiskSample{}
		if d := s.disks[name]; d != nil && d.have {
			if d.samples != nil {
				samples = d.samples
			}
			ts.DiskRates = diskRates(d.first.c, d.last.c, d.last.at-d.first.at)
		}
		r.Tiers[tier] = samples
		r.Summary.Tiers[tier] = ts
	}
	if s.host.have {
		h := cpuShares(s.host.first.c, s.host.last.c)
		r.Summary.Host = HostSummary{CPUUserPct: h.CPUUserPct, CPUSysPct: h.CPUSysPct,
			CPUIowaitPct: h.CPUIowaitPct, CPUStealPct: h.CPUStealPct}
	}
	if e := &s.engine; e.have {
		r.Summary.Engine = EngineSummary{RSSBytesMax: e.rssMax,
			CPUPct: cpuPct(e.first.p, e.last.p, e.last.at-e.first.at, s.clkTck)}
	}
	var samplerCPU time.Duration
	if s.sync != nil {
		samplerCPU = s.sync.ownCPU
	}
	r.Summary.LoadGen = s.load.summary(s.lastAt, s.clkTck, s.cfg.PID, samplerCPU)
	if s.others != nil {
		r.Summary.Others = s.others.summary(s.clkTck)
	}
	if s.sync != nil {
		r.Summary.SyncWait, r.Summary.SyncSamples = s.sync.summary()
		r.Summary.Engine.TreeCPUPct, r.Summary.Engine.CPUWaitPct = s.sync.schedPcts()
		r.Errors = append(r.Errors, s.sync.errs.list()...)
	}
	r.Summary.Errors = r.Errors
	return r
}

// errorLog keeps each distinct error once, in first-seen order, with a
// count: a vanished engine process fails every tick and should not flood
// the report.
type errorLog struct {
	order []string
	count map[string]int
}

func (l *errorLog) add(err error) {
	msg := err.Error()
	if l.count[msg] == 0 {
		l.order = append(l.order, msg)
	}
	l.count[msg]++
}

func (l *errorLog) list() []string {
	if len(l.order) == 0 {
		return nil
	}
	out := make([]string, 0, len(l.order))
	for _, msg := range l.order {
		if n := l.count[msg]; n > 1 {
			msg = fmt.Sprintf("%s (%d times)", msg, n)
		}
		out = append(out, msg)
	}
	return out
}

// MemorySummary is what an engine's memory cgroup held and did over the
// measured window: how full its limit was, how much of it was page cache,
// and how often the engine had to go to the device for a page it had
// dropped (major faults) or was refused memory.
type MemorySummary struct {
	LimitBytes int64 `json:"limit_bytes"`
	// PeakBytes is the most the group held, page cache included.
	PeakBytes int64 `json:"peak_bytes"`
	// CacheBytes and AnonBytes are page cache and process memory at the
	// window's end.
	CacheBytes int64 `json:"cache_bytes"`
	AnonBytes  int64 `json:"anon_bytes"`
	// MajorFaultsPerS are page faults that read from a device.
	MajorFaultsPerS float64 `json:"major_faults_per_s"`
	// LimitHitsPerS is how often a charge hit the limit, so the kernel had
	// to reclaim (v1 memory.failcnt; v2 memory.events max).
	LimitHitsPerS float64 `json:"limit_hits_per_s"`
	// OOMKills are processes the kernel killed for the limit.
	OOMKills int64 `json:"oom_kills,omitempty"`
}
