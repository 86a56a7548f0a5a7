package rbdtier

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
)

// Ceph's client programs that an rbd tier runs (the rbd tool, rbd-fuse)
// run on the host kit (host/proc), as the engines' tools do: in a process
// group of their own, which the kernel kills if tierbench dies, even by
// kill -9, with the last lines of what they wrote in their errors. The rbd
// tool runs through proc.Output.

// daemon is a client program that serves until stopped (rbd-fuse), its
// output in a log file, its pid tracked for cleanup.
type daemon struct {
	name, log string
	run       *proc.Running
	logf      *os.File
	untrack   func()
	stopped   sync.Once
}

// startDaemon starts path with args in dir, its output appended to log,
// its pid given to track (nil: not tracked) until it is stopped.
func startDaemon(name, path, dir, log string, args []string, track func(pid int) (untrack func())) (*daemon, error) {
	logf, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: log file: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
	proc.OwnGroup(cmd)
	run, err := proc.Start(cmd)
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, log: log, run: run, logf: logf, untrack: func() {}}
	if track != nil {
		d.untrack = track(run.PID())
	}
	return d, nil
}

// died returns an error with the log's tail if the daemon has exited.
func (d *daemon) died() error {
	if exited, err := d.run.Exited(); exited {
		return fmt.Errorf("%s exited (%v); last lines of its log %s:\n%s", d.name, err, d.log, d.logTail(15))
	}
	return nil
}

// stop asks the daemon's process group to stop (SIGTERM), waits up to
// grace, then kills it; it then forgets its pid.
func (d *daemon) stop(grace time.Duration) error {
	defer d.stopped.Do(func() {
		d.logf.Close()
		d.untrack()
	})
	if !d.run.Stop(grace, syscall.SIGTERM) {
		return nil
	}
	return fmt.Errorf("stop %s: not stopped %s after SIG%s; killed", d.name, grace, strings.ToUpper(syscall.SIGTERM.String()))
}

// logTail returns the last n lines of the daemon's log.
func (d *daemon) logTail(n int) string { return logtail.File(d.log, n) }
