package telemetry

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/tierbench/tierbench/host/procfs"
)

// LoadGenSummary is the load generator's CPU over the window: what the
// clients took from the host the engine runs on.
type LoadGenSummary struct {
	// Name is the load generator: "tierbench" (its own driver), "pgbench",
	// "sysbench", "ignite-client".
	Name string `json:"name"`
	// CPUSeconds is the CPU time (user + system, all threads) its
	// processes used in the window; for tierbench, its lanes' threads'
	// (LaneThreads), or else its process's less SamplerCPUSeconds.
	CPUSeconds float64 `json:"cpu_s"`
	// LaneThreads, when not 0, says CPUSeconds is of this many threads of
	// tierbench's driver, the lanes its clients ran on, and not of its
	// whole process, which also runs the telemetry, the progress line and
	// the Go runtime's scheduling of them: work a standard tool's figure
	// does not carry either.
	LaneThreads int `json:"lane_threads,omitempty"`
	// CPUPct is CPUSeconds in percent of one core over the window, like
	// the engine's CPUPct.
	CPUPct float64 `json:"cpu_pct"`
	// CPUUsPerOp is CPUSeconds per operation of the measured window, in
	// microseconds: the client's cost of one transaction. 0 when no
	// operation completed.
	CPUUsPerOp float64 `json:"cpu_us_per_op,omitempty"`
	// SamplerCPUSeconds is what tierbench's sampling of the engine's
	// threads used in the window, taken out of CPUSeconds when tierbench is
	// the load generator: a standard tool's figures do not carry it either.
	SamplerCPUSeconds float64 `json:"sampler_cpu_s,omitempty"`
	// SharesEngine says the load generator ran in the engine's own
	// process (tierbench with its in-process engine): the CPU above is the
	// engine's as well and cannot be split between the two.
	SharesEngine bool `json:"shares_engine,omitempty"`
}

// PerOp sets CPUUsPerOp from the operations the measured window completed.
func (l *LoadGenSummary) PerOp(ops int64) {
	if l != nil && ops > 0 {
		l.CPUUsPerOp = l.CPUSeconds / float64(ops) * 1e6
	}
}

// loadState follows the load generator's processes: those known when
// sampling starts (Config.LoadPIDs) from the first reading, those started
// later (AddLoad) from zero, since all their CPU falls in the window.
type loadState struct {
	mu    sync.Mutex
	name  string
	procs map[int]*loadProc
	order []int
}

type loadProc struct {
	// path is the stat file: a process's, or a thread's of this process.
	path       string
	base, last procfs.Stat
	have       bool
	// exitCPU is the whole CPU time wait reported (LoadExited), in clock
	// ticks; it replaces the last reading.
	exitCPU float64
	exited  bool
}

func newLoadState(name string, pids, tids []int) *loadState {
	l := &loadState{name: name, procs: map[int]*loadProc{}}
	for _, pid := range pids {
		l.add(pid, procfs.Path(pid), false)
	}
	for _, tid := range tids {
		l.add(tid, procfs.ThreadPath(tid), false)
	}
	return l
}

// add registers a process or thread id and its stat file; fromZero counts
// all its CPU (a process started inside the window).
func (l *loadState) add(id int, path string, fromZero bool) {
	if id <= 0 || l.procs[id] != nil {
		return
	}
	l.procs[id] = &loadProc{path: path, have: fromZero}
	l.order = append(l.order, id)
}

// AddLoad adds a load generator process that started while sampling: all
// its CPU time falls in the window.
func (s *Sampler) AddLoad(name string, pid int) {
	l := s.load
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.name == "" {
		l.name = name
	}
	l.add(pid, procfs.Path(pid), true)
}

// LoadExited gives a load generator process's whole CPU time once it has
// been waited for: /proc no longer has it, and the readings miss its last
// moments.
func (s *Sampler) LoadExited(pid int, cpu time.Duration) {
	l := s.load
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.procs[pid]; p != nil {
		p.exitCPU, p.exited = cpu.Seconds()*s.clkTck, true
	}
}

// readLoad reads each live load generator process's CPU time. A process
// that is gone keeps its last reading until LoadExited says more.
func (s *Sampler) readLoad() {
	l := s.load
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, pid := range l.order {
		p := l.procs[pid]
		if p.exited {
			continue
		}
		text, err := readProc(p.path)
		var st procfs.Stat
		if err == nil {
			st, err = procfs.Parse(text)
		}
		if err != nil {
			continue // exited: LoadExited, or its last reading, accounts for it
		}
		switch {
		case !p.have:
			p.base, p.last, p.have = st, st, true
		case p.last.StartTicks != 0 && st.StartTicks != p.last.StartTicks:
			s.errs.add(fmt.Errorf("load generator pid %d: process was replaced (it exited and the pid was reused)", pid))
			p.exited, p.exitCPU = true, float64(p.last.UTime+p.last.STime)
		default:
			if p.last.StartTicks == 0 {
				p.base.StartTicks = st.StartTicks
			}
			p.last = st
		}
	}
}

// summary is the load generator's CPU over a window of span; nil when no
// process was watched. samplerCPU, the sampler thread's CPU time, is taken
// out when the load generator is this process.
func (l *loadState) summary(span time.Duration, clkTck float64, enginePID int, samplerCPU time.Duration) *LoadGenSummary {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.order) == 0 || clkTck <= 0 {
		return nil
	}
	sum := &LoadGenSummary{Name: l.name, SharesEngine: enginePID > 0 && slices.Contains(l.order, enginePID)}
	ticks := 0.0
	for _, pid := range l.order {
		p := l.procs[pid]
		end := float64(p.last.UTime + p.last.STime)
		if p.exited {
			end = max(end, p.exitCPU)
		}
		ticks += max(end-float64(p.base.UTime+p.base.STime), 0)
	}
	sum.CPUSeconds = ticks / clkTck
	if slices.Contains(l.order, os.Getpid()) && samplerCPU > 0 {
		sum.SamplerCPUSeconds = samplerCPU.Seconds()
		sum.CPUSeconds = max(sum.CPUSeconds-sum.SamplerCPUSeconds, 0)
	}
	if sec := span.Seconds(); sec > 0 {
		sum.CPUPct = sum.CPUSeconds / sec * 100
	}
	return sum
}
