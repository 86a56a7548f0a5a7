package driver

import (
	"context"
	"os/exec"
	"time"
)

// External is a load generator other than Run: a standard tool (pgbench,
// sysbench) or an engine's own client (Ignite's Java client). It runs
// clients for cfg.Warmup and then cfg.Duration and returns the same figures
// Run does, histograms in nanoseconds, so its runs land in the same schema.
// It calls cfg.OnTick once per interval it learns of, when it can.
type External interface {
	Drive(ctx context.Context, cfg Config, clients int) (*Result, error)
}

// LoadWatch is told of the processes a load generator runs, so that their
// CPU is accounted beside the engine's: client CPU taken from a server on
// the same host makes a tier's effect look smaller than it is.
type LoadWatch interface {
	// Started is called once a process has started; name is the load
	// generator's ("pgbench", "ignite-client").
	Started(name string, pid int)
	// Exited is called once the process has been waited for, with its
	// whole CPU time (user + system, all threads): the CPU of its last
	// moments, after the last /proc reading, counts too.
	Exited(pid int, cpu time.Duration)
	// Begin is called when the load generator's warmup starts, once a
	// tool that takes long to start (Rally, OSB: 15-35 s of Python) has
	// started its first task: the measured window is timed again from
	// here, so telemetry leaves out the tool's start-up. Without a call,
	// the window is timed from the start of Drive.
	Begin()
}

// LoadReporter is implemented by an External (or by the engine whose own
// client drives a delegated workload) that runs its load in processes of
// its own. WatchLoad sets whom to tell of them; nil stops telling.
type LoadReporter interface {
	WatchLoad(w LoadWatch)
}

// WatchCmd tells w, when not nil, that cmd (just started) is a load
// generator process named name; the returned func, called after cmd.Wait,
// tells w its CPU time.
func WatchCmd(w LoadWatch, name string, cmd *exec.Cmd) (waited func()) {
	if w == nil || cmd.Process == nil {
		return func() {}
	}
	pid := cmd.Process.Pid
	w.Started(name, pid)
	return func() {
		if ps := cmd.ProcessState; ps != nil {
			w.Exited(pid, ps.UserTime()+ps.SystemTime())
		}
	}
}
