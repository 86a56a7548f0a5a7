package telemetry

import (
	"cmp"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/host/procfs"
)

// What other processes took from the host while a run was measured: a
// busy neighbour (a build, a browser, another benchmark) slows one side
// of a comparison and not the other, and a paired ratio cannot tell. So
// every second the sampler reads every process's CPU time and I/O from
// /proc and adds up those of processes that are not tierbench's: not this
// process, the engine's (Config.PID, Config.EnginePIDs), the load
// generator's (Config.LoadPIDs), nor any descendant of them (servers,
// FUSE helpers, tools). Kernel threads are left out: writeback and
// interrupts work for every process, tierbench's included.
//
// What it cannot see: a process that started and ended between two
// readings, and the last second of one that ended (its counters are gone
// with it), so it reads low, never high; and /proc/PID/io cannot tell
// which device a process read or wrote, so its I/O is on any device.

// Disturbance thresholds: a run whose other processes took more than
// DisturbedHostPct of the host's CPU time, or read and wrote more than
// DisturbedIOMBps, over the measured window is marked disturbed. A quarter
// of the host is half a core on 2 CPUs: a compiler or a busy browser tab,
// not a shell or an idle desktop (measured below 3% here).
const (
	DisturbedHostPct = 25.0
	DisturbedIOMBps  = 20.0
)

// OthersSummary is what other processes took over the window.
type OthersSummary struct {
	// CPUPct is their CPU time in percent of one core; HostPct in percent
	// of all the host's CPUs.
	CPUPct  float64 `json:"cpu_pct"`
	HostPct float64 `json:"host_pct"`
	// ReadMBps and WriteMBps are their storage I/O (/proc/PID/io's
	// read_bytes and write_bytes), on any device, in MiB/s.
	ReadMBps  float64 `json:"read_mbps"`
	WriteMBps float64 `json:"write_mbps"`
	// Top are the busiest of them by CPU, at most three.
	Top []OtherProcess `json:"top,omitempty"`
}

// OtherProcess is one other process's share.
type OtherProcess struct {
	Name   string  `json:"name"`
	PID    int     `json:"pid"`
	CPUPct float64 `json:"cpu_pct"`
}

// Disturbed says whether the window was disturbed beyond the thresholds,
// and by what: "other processes took 48% of the host's CPU (yes 46%, pid
// 4242)".
func (o *OthersSummary) Disturbed() (bool, string) {
	if o == nil {
		return false, ""
	}
	var parts []string
	if o.HostPct > DisturbedHostPct {
		parts = append(parts, fmt.Sprintf("took %.0f%% of the host's CPU", o.HostPct))
	}
	if io := o.ReadMBps + o.WriteMBps; io > DisturbedIOMBps {
		parts = append(parts, fmt.Sprintf("read and wrote %.0f MiB/s", io))
	}
	if len(parts) == 0 {
		return false, ""
	}
	text := "other processes " + strings.Join(parts, " and ")
	if len(o.Top) > 0 {
		var top []string
		for _, p := range o.Top {
			top = append(top, fmt.Sprintf("%s %.0f%%, pid %d", p.Name, p.CPUPct, p.PID))
		}
		text += " (" + strings.Join(top, "; ") + ")"
	}
	return true, text
}

// othersState follows every process between readings.
type othersState struct {
	roots []int
	// seen is each process's counters at the last reading, by pid and
	// start time (a reused pid is another process).
	seen map[procKey]procCounters
	have bool
	// firstAt and lastAt are when the first and latest readings were
	// taken, since the sampler started.
	firstAt, lastAt time.Duration
	cpu             float64 // ticks: other processes' CPU in the window
	ioBytes         [2]uint64
	byProc          map[procKey]*OtherProcess
	byProcCPU       map[procKey]float64
}

type procKey struct {
	pid   int
	start uint64
}

type procCounters struct {
	cpu         uint64 // ticks
	read, write uint64 // bytes
}

func newOthersState(roots []int) *othersState {
	return &othersState{roots: roots, seen: map[procKey]procCounters{}, byProc: map[procKey]*OtherProcess{}, byProcCPU: map[procKey]float64{}}
}

// read takes one reading of every process; from the second on it adds
// the other processes' CPU and I/O since the last.
func (o *othersState) read(at time.Duration) error {
	pids, err := procfs.PIDs()
	if err != nil {
		return fmt.Errorf("other processes: %w", err)
	}
	stats := map[int]procfs.Stat{}
	for _, pid := range pids {
		if st, err := procfs.Of(pid); err == nil {
			stats[pid] = st
		}
	}
	ours := ourProcesses(stats, o.roots)
	now := map[procKey]procCounters{}
	for pid, st := range stats {
		if ours[pid] || st.Flags&procfs.KernelThread != 0 {
			continue
		}
		k := procKey{pid, st.StartTicks}
		c := procCounters{cpu: st.UTime + st.STime}
		c.read, c.write = readIO(pid)
		now[k] = c
		if !o.have {
			continue
		}
		// A process new since the last reading started inside the
		// window: all it did counts.
		before := o.seen[k]
		dcpu := float64(c.cpu - min(before.cpu, c.cpu))
		o.cpu += dcpu
		o.ioBytes[0] += c.read - min(before.read, c.read)
		o.ioBytes[1] += c.write - min(before.write, c.write)
		if dcpu > 0 {
			o.byProcCPU[k] += dcpu
			if o.byProc[k] == nil {
				o.byProc[k] = &OtherProcess{Name: st.Comm, PID: pid}
			}
		}
	}
	if !o.have {
		o.firstAt = at
	}
	o.seen, o.have, o.lastAt = now, true, at
	return nil
}

// ourProcesses are the roots and every descendant of theirs.
func ourProcesses(stats map[int]procfs.Stat, roots []int) map[int]bool {
	ours := map[int]bool{}
	for _, r := range roots {
		if r > 0 {
			ours[r] = true
		}
	}
	var isOurs func(pid, depth int) bool
	isOurs = func(pid, depth int) bool {
		if v, ok := ours[pid]; ok {
			return v
		}
		st, ok := stats[pid]
		if !ok || st.PPID == 0 || depth > 64 {
			return false
		}
		v := isOurs(int(st.PPID), depth+1)
		ours[pid] = v
		return v
	}
	for pid := range stats {
		isOurs(pid, 0)
	}
	return ours
}

// readIO is a process's storage bytes read and written so far; zeros when
// its io file cannot be read (another user's, without root).
func readIO(pid int) (read, write uint64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		switch k {
		case "read_bytes":
			read = n
		case "write_bytes":
			write = n
		}
	}
	return read, write
}

// summary is the window's figures.
func (o *othersState) summary(clkTck float64) *OthersSummary {
	span := (o.lastAt - o.firstAt).Seconds()
	if !o.have || span <= 0 {
		return nil
	}
	s := &OthersSummary{
		CPUPct:    100 * o.cpu / clkTck / span,
		ReadMBps:  float64(o.ioBytes[0]) / mib / span,
		WriteMBps: float64(o.ioBytes[1]) / mib / span,
	}
	s.HostPct = s.CPUPct / float64(runtime.NumCPU())
	for k, p := range o.byProc {
		p.CPUPct = 100 * o.byProcCPU[k] / clkTck / span
		s.Top = append(s.Top, *p)
	}
	slices.SortFunc(s.Top, func(a, b OtherProcess) int { return cmp.Compare(b.CPUPct, a.CPUPct) })
	if len(s.Top) > 3 {
		s.Top = s.Top[:3]
	}
	return s
}
