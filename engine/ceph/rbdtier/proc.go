package rbdtier

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/host/logtail"
)

// Ceph's client programs that an rbd tier runs (the rbd tool, rbd-fuse)
// are run here as the engines' kit (engine/server, which tiers, below the
// engines, do not import) runs a server's tools: in a process group of
// their own, which the kernel kills if tierbench dies, even by kill -9,
// with the last lines of what they wrote in their errors.

// ownGroup puts cmd in a process group of its own, killed with tierbench.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// stderrKept is how much of a tool's standard error output keeps for its
// error.
const stderrKept = 4096

// output runs a client tool with its connection arguments conn (kept out
// of errors: they name keyrings) and args, cancelled with ctx (its whole
// group), and returns its standard output; a failure quotes the last
// lines of its standard error.
func output(ctx context.Context, path string, conn []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, append(slices.Clip(conn), args...)...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	ownGroup(cmd)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		b := errs.Bytes()
		if len(b) > stderrKept {
			b = b[len(b)-stderrKept:]
		}
		if tail := logtail.Lines(b, 5); tail != "" {
			err = fmt.Errorf("%w: %s", err, tail)
		}
		return nil, fmt.Errorf("%s %s: %w", filepath.Base(path), strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

// daemon is a client program that serves until stopped (rbd-fuse), its
// output in a log file, its pid tracked for cleanup.
type daemon struct {
	name, log string
	cmd       *exec.Cmd
	logf      *os.File
	done      chan struct{}
	err       error // how it exited, once done is closed
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
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, log: log, cmd: cmd, logf: logf, done: make(chan struct{}), untrack: func() {}}
	if track != nil {
		d.untrack = track(cmd.Process.Pid)
	}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// died returns an error with the log's tail if the daemon has exited.
func (d *daemon) died() error {
	select {
	case <-d.done:
		return fmt.Errorf("%s exited (%v); last lines of its log %s:\n%s", d.name, d.err, d.log, d.logTail(15))
	default:
		return nil
	}
}

// stop asks the daemon's process group to stop (SIGTERM), waits up to
// grace, then kills it; it then forgets its pid.
func (d *daemon) stop(grace time.Duration) error {
	defer d.stopped.Do(func() {
		d.logf.Close()
		d.untrack()
	})
	select {
	case <-d.done:
		return nil
	default:
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGTERM)
	}
	select {
	case <-d.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.done
	return fmt.Errorf("stop %s: not stopped %s after SIG%s; killed", d.name, grace, strings.ToUpper(syscall.SIGTERM.String()))
}

// logTail returns the last n lines of the daemon's log.
func (d *daemon) logTail(n int) string { return logtail.File(d.log, n) }
