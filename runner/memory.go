package runner

import (
	"fmt"
	"sync"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/host/cgroupfs"
	"github.com/tierbench/tierbench/telemetry"
)

// The memory a run's engine may hold (the run setting memory, study.Memory,
// which a study writes among its options and no engine reads): a cgroup
// made before the engine opens, in which every process of it starts, sampled over the
// measured window, and removed when the run closes. A run whose engine the
// kernel kills for the limit fails saying so: that is a finding about the
// limit, not a crash of tierbench.

// memoryLimit makes the run's memory cgroup when its variant sets memory;
// the engine's processes start in it (engine.Config.Memory).
func (r *run) memoryLimit() error {
	limit := r.cell.Variant.Memory
	if limit == 0 || r.st.Target != "" || r.onCluster != nil {
		return nil
	}
	g, remove, err := r.ws.MemoryGroup(r.rec.ID, limit)
	if err != nil {
		return fmt.Errorf("memory limit %s: %w", humanize.IBytes(uint64(limit)), err)
	}
	r.memory, r.removeMemory, r.cfg.Memory = g, remove, g
	if r.loadsOnce() {
		// The data set was just copied (or loaded) outside the limit: its
		// pages are in the page cache, charged elsewhere, and the engine
		// would read them from there free of its limit. Dropped, they
		// come in through the engine, charged to it.
		return DropCaches()
	}
	return nil
}

// memoryWatch samples the run's memory cgroup over the measured window.
type memoryWatch struct {
	g     *cgroupfs.MemoryGroup
	mu    sync.Mutex
	start cgroupfs.MemoryStats
	at    time.Time
	timer *time.Timer
	begin func()
}

// watchMemory starts sampling once warmup is over: the peak is reset
// then, and stop reads the window's figures.
func (r *run) watchMemory(warmup time.Duration) *memoryWatch {
	if r.memory == nil {
		return nil
	}
	m := &memoryWatch{g: r.memory}
	m.begin = func() {
		_ = m.g.ResetPeak()
		s, err := m.g.Stats()
		m.mu.Lock()
		defer m.mu.Unlock()
		if err == nil {
			m.start, m.at = s, time.Now()
		}
	}
	if warmup <= 0 {
		m.begin()
	} else {
		m.timer = time.AfterFunc(warmup, m.begin)
	}
	return m
}

// measureNow starts the window now, when the driver found the run steady
// before the warmup's most.
func (m *memoryWatch) measureNow() {
	if m == nil || m.timer == nil || !m.timer.Stop() {
		return
	}
	m.begin()
}

// stop returns the window's summary; nil when the window never started.
func (m *memoryWatch) stop() *telemetry.MemorySummary {
	if m == nil {
		return nil
	}
	if m.timer != nil {
		m.timer.Stop()
	}
	end, err := m.g.Stats()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil || m.at.IsZero() {
		return nil
	}
	secs := time.Since(m.at).Seconds()
	return &telemetry.MemorySummary{
		LimitBytes: m.g.Limit(), PeakBytes: end.Peak, CacheBytes: end.Cache, AnonBytes: end.Anon,
		MajorFaultsPerS: float64(end.MajorFaults-m.start.MajorFaults) / secs,
		LimitHitsPerS:   float64(end.Failcnt-m.start.Failcnt) / secs,
		OOMKills:        end.OOMKills,
	}
}

// memoryKilled names the cause of a failed run whose engine the kernel
// killed for its memory limit, or which failed while its memory was at the
// limit (a server stalled reclaiming its own page cache times out rather
// than dies); err otherwise.
func (r *run) memoryKilled(err error) error {
	if r.memory == nil || err == nil {
		return err
	}
	s, serr := r.memory.Stats()
	limit := humanize.IBytes(uint64(r.memory.Limit()))
	switch {
	case serr != nil:
		return err
	case s.OOMKills > 0:
		return fmt.Errorf("engine killed by its memory limit (%s): %w", limit, err)
	case float64(s.Peak) >= 0.95*float64(r.memory.Limit()):
		return fmt.Errorf("engine at its memory limit (%s, peak %s): %w", limit, humanize.IBytes(uint64(s.Peak)), err)
	}
	return err
}
