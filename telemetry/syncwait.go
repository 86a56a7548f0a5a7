package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/procfs"
)

// SyncWait is how much of the measured window the engine spent waiting for
// one component's data to reach stable storage. Device counters cannot say
// this: an fsync on ext4 is a chain (data write, journal write, flush) with
// scheduling gaps between its requests, so a device can be 20% utilised
// while the one thread that commits spends 90% of its time in fdatasync.
// The kernel shows every thread's current system call in
// /proc/<pid>/task/<tid>/syscall; sampling it often enough gives the share
// of wall time a commit path waits, whatever the engine.
type SyncWait struct {
	// WaitPct is the share of samples in which at least one of the engine's
	// threads was inside fsync, fdatasync, syncfs or msync on a file in
	// the component's folder: for a commit path that syncs one call at a
	// time (a WAL writer), the share of wall time it waited.
	WaitPct float64 `json:"wait_pct"`
	// MeanWaiting is the mean number of threads inside such a call: above
	// 1 when several sync at once (server nodes, backends).
	MeanWaiting float64 `json:"mean_waiting"`
}

// OtherComponent keys sync waits on files outside every component folder
// (and msync, whose argument names memory, not a file).
const OtherComponent = "other"

// syncCalls are the system calls that wait for data to reach stable
// storage, and whether their first argument is a file descriptor.
var syncCalls = map[int]bool{
	unix.SYS_FSYNC:     true,
	unix.SYS_FDATASYNC: true,
	unix.SYS_SYNCFS:    true,
	unix.SYS_MSYNC:     false,
}

// Bounds of the sync sampler's period. Each sample reads one small procfs
// file per thread; the period grows with the thread count so a JVM with
// hundreds of threads costs no more than a Go engine with a dozen (about
// syncReadBudget reads per second).
const (
	syncMinPeriod  = 10 * time.Millisecond
	syncMaxPeriod  = 100 * time.Millisecond
	syncReadBudget = 2000
	// syncRefresh is how often the process tree and thread lists are read
	// again: server engines start backends as clients connect.
	syncRefresh = time.Second
)

// syncSampler samples the system calls of the engine's threads (and of its
// child processes: PostgreSQL's backends) and counts, per component, the
// samples in which some thread was syncing a file of that component.
type syncSampler struct {
	pid    int
	others []int     // the engine's other processes (Config.EnginePIDs)
	comps  []compDir // longest folder first, so nested folders match first

	threads   []threadRef
	refreshed time.Time
	buf       []byte

	// Scheduler figures of every thread (/proc/<pid>/task/<tid>/schedstat:
	// ns on a CPU, ns runnable but waiting for one), read at each refresh;
	// the sums of their increases over [first, last] are the process
	// tree's CPU use and its wait for a CPU.
	sched        map[threadRef][2]uint64
	onCPU, ready uint64
	first, last  time.Time

	samples int
	// seenMu guards waited and waiting, which seen reads while the
	// sampler runs (tests wait on it).
	seenMu  sync.Mutex
	waited  map[string]int // component → samples with at least one waiter
	waiting map[string]int // component → sum of waiters over samples
	// errs is its own: the sampler runs in its own goroutine.
	errs errorLog
	// ownCPU is the CPU time the sampler's own thread used, set when run
	// returns: tierbench's, not its driver's, when tierbench is the load
	// generator.
	ownCPU time.Duration
}

type compDir struct{ name, dir string }

type threadRef struct{ pid, tid int }

func newSyncSampler(pid int, others []int, components map[string]string) *syncSampler {
	s := &syncSampler{pid: pid, others: others, buf: make([]byte, 256), errs: errorLog{count: map[string]int{}},
		waited: map[string]int{}, waiting: map[string]int{}, sched: map[threadRef][2]uint64{}}
	for _, name := range slices.Sorted(maps.Keys(components)) {
		dir := filepath.Clean(components[name])
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real // /proc/<pid>/fd links name real paths
		}
		s.comps = append(s.comps, compDir{name, dir})
	}
	sort.SliceStable(s.comps, func(i, j int) bool { return len(s.comps[i].dir) > len(s.comps[j].dir) })
	return s
}

// period is the time between samples for the current thread count.
func (s *syncSampler) period() time.Duration {
	p := time.Duration(len(s.threads)) * time.Second / syncReadBudget
	return min(max(p, syncMinPeriod), syncMaxPeriod)
}

// run samples until stop is closed or ctx ends.
func (s *syncSampler) run(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	// On a thread of its own, so that its CPU time can be read and kept
	// apart from the driver's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := procfs.ThreadCPU()
	defer func() { s.ownCPU = procfs.ThreadCPU() - start }()
	s.refresh()
	timer := time.NewTimer(s.period())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			s.refresh() // the last scheduler reading closes the window
			return
		case <-timer.C:
		}
		if time.Since(s.refreshed) >= syncRefresh {
			s.refresh()
		}
		s.sample()
		timer.Reset(s.period())
	}
}

// refresh lists the threads of the engine process and its descendants and
// adds up their scheduler figures since the last refresh.
func (s *syncSampler) refresh() {
	s.refreshed = time.Now()
	defer s.readSched()
	s.threads = s.threads[:0]
	seen := map[int]bool{}
	queue := append([]int{s.pid}, s.others...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		tids, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			// A gone engine is reported once, by the engine sampler; a
			// child may exit between listing and reading.
			if pid == s.pid && !errors.Is(err, fs.ErrNotExist) {
				s.errs.add(fmt.Errorf("engine pid %d: sync waits: %w", pid, err))
			}
			continue
		}
		for _, t := range tids {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			s.threads = append(s.threads, threadRef{pid, tid})
			kids, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue // kernels without CONFIG_PROC_CHILDREN: the process alone
			}
			for _, f := range strings.Fields(string(kids)) {
				if c, err := strconv.Atoi(f); err == nil {
					queue = append(queue, c)
				}
			}
		}
	}
}

// readSched adds each listed thread's CPU time and CPU wait since its last
// reading. A thread seen for the first time only sets its baseline; one
// that exited since loses its last partial interval (a small undercount).
func (s *syncSampler) readSched() {
	now := time.Now()
	if s.first.IsZero() {
		s.first = now
	}
	s.last = now
	seen := make(map[threadRef][2]uint64, len(s.threads))
	for _, t := range s.threads {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(t.pid) + "/task/" + strconv.Itoa(t.tid) + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		run, err1 := strconv.ParseUint(f[0], 10, 64)
		wait, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		cur := [2]uint64{run, wait}
		if prev, ok := s.sched[t]; ok && cur[0] >= prev[0] && cur[1] >= prev[1] {
			s.onCPU += cur[0] - prev[0]
			s.ready += cur[1] - prev[1]
		}
		seen[t] = cur
	}
	s.sched = seen
}

// schedPcts are the tree's CPU use and CPU wait in percent of one core (top's
// convention: a busy multi-threaded engine exceeds 100).
func (s *syncSampler) schedPcts() (cpu, wait float64) {
	span := s.last.Sub(s.first)
	if span <= 0 {
		return 0, 0
	}
	return 100 * float64(s.onCPU) / float64(span), 100 * float64(s.ready) / float64(span)
}

// sample reads every thread's current system call once.
func (s *syncSampler) sample() {
	n := map[string]int{}
	for _, t := range s.threads {
		nr, arg, ok := s.readSyscall(t)
		if !ok {
			continue
		}
		takesFD, isSync := syncCalls[nr]
		if !isSync {
			continue
		}
		comp := OtherComponent
		if takesFD {
			comp = s.componentOf(t.pid, arg)
		}
		n[comp]++
	}
	s.samples++
	s.seenMu.Lock()
	defer s.seenMu.Unlock()
	for comp, k := range n {
		s.waited[comp]++
		s.waiting[comp] += k
	}
}

// seen is how many samples so far caught a wait on comp; safe to call
// while the sampler runs.
func (s *syncSampler) seen(comp string) int {
	s.seenMu.Lock()
	defer s.seenMu.Unlock()
	return s.waited[comp]
}

// readSyscall returns the number and first argument of the system call
// thread t is blocked in; ok is false when it is running, not in a call or
// gone. The file reads "NR arg1 ... sp pc", "running" or "-1 sp pc".
func (s *syncSampler) readSyscall(t threadRef) (nr int, arg uint64, ok bool) {
	path := "/proc/" + strconv.Itoa(t.pid) + "/task/" + strconv.Itoa(t.tid) + "/syscall"
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, false
	}
	k, err := unix.Read(fd, s.buf)
	unix.Close(fd)
	if err != nil || k <= 0 {
		return 0, 0, false
	}
	f := bytes.Fields(s.buf[:k])
	if len(f) < 2 {
		return 0, 0, false
	}
	nr, err = strconv.Atoi(string(f[0]))
	if err != nil || nr < 0 {
		return 0, 0, false
	}
	arg, err = strconv.ParseUint(strings.TrimPrefix(string(f[1]), "0x"), 16, 64)
	return nr, arg, err == nil
}

// componentOf names the component whose folder holds the file open as fd
// in process pid.
func (s *syncSampler) componentOf(pid int, fd uint64) string {
	target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.FormatUint(fd, 10))
	if err != nil {
		return OtherComponent
	}
	for _, c := range s.comps {
		if target == c.dir || strings.HasPrefix(target, c.dir+"/") {
			return c.name
		}
	}
	return OtherComponent
}

// summary gives each component's share; components that never waited are
// listed with zeros, so a stored 0 means "sampled, no wait".
func (s *syncSampler) summary() (map[string]SyncWait, int) {
	out := map[string]SyncWait{}
	for _, c := range s.comps {
		out[c.name] = SyncWait{}
	}
	if s.samples == 0 {
		return out, 0
	}
	for comp, k := range s.waited {
		out[comp] = SyncWait{WaitPct: 100 * float64(k) / float64(s.samples),
			MeanWaiting: float64(s.waiting[comp]) / float64(s.samples)}
	}
	return out, s.samples
}
