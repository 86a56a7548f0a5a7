package driver

import (
	"runtime"
	"sync"
)

// DefaultLanes is the lanes a run uses: as many as the CPUs Go may use,
// as pgbench's -j. A lane waits in epoll_wait inside a raw system call,
// which keeps its P; keepPIdle leaves one more P idle for the rest of the
// process, so that sysmon does not hand a lane's P to a fresh thread
// after 20 µs of each wait (docs/drivers.md). One lane per CPU is for
// throughput: one lane handles its clients' replies one after another,
// and a server process whose reply waits in that queue has nothing to
// run. Measured on 2 cores with each lane's CPU its own thread's
// (2026-11-27): on oltp-read-write at 8 clients two lanes did 1.08x
// [1.07-1.10] (synced) and 1.09x [1.04-1.14] one lane's transactions,
// where one lane left the host 7-9% idle; on tpcb two lanes were
// equivalent or inconclusive in throughput and spent 7-10% more CPU per
// transaction, still less than pgbench's.
func DefaultLanes() int { return max(1, runtime.GOMAXPROCS(0)) }

// procs guards GOMAXPROCS while runs with many lanes raise it.
var procs struct {
	sync.Mutex
	runs, before int
}

// keepPIdle raises GOMAXPROCS to lanes+1 while a run's lanes wait in
// epoll_wait, so that a P stays for the rest of the process while the
// lanes' raw waits hold theirs (see DefaultLanes): lanes as many as the
// CPUs, as pgbench's -j, then cost no wake-ups of their own. It returns
// the undo, which puts GOMAXPROCS back once the last such run ends.
func keepPIdle(lanes int) (undo func()) {
	procs.Lock()
	defer procs.Unlock()
	now := runtime.GOMAXPROCS(0)
	if procs.runs == 0 {
		if lanes+1 <= now {
			return func() {}
		}
		procs.before = now
	}
	procs.runs++
	if lanes+1 > now {
		runtime.GOMAXPROCS(lanes + 1)
	}
	return func() {
		procs.Lock()
		defer procs.Unlock()
		if procs.runs--; procs.runs == 0 {
			runtime.GOMAXPROCS(procs.before)
		}
	}
}

// LaneClient is a Client that can share a goroutine with others on a lane
// (driver/lane): while an operation waits for its engine it waits only
// through lane.From(ctx).Wait, never in Go's netpoller.
type LaneClient interface {
	Client
	OnLane() bool
}

// onLanes reports whether cfg runs clients on lanes.
func onLanes(cfg Config, clients []Client) bool {
	if cfg.Lanes < 1 {
		return false
	}
	for _, cl := range clients {
		if lc, ok := cl.(LaneClient); !ok || !lc.OnLane() {
			return false
		}
	}
	return true
}
