// Package server is the kit server engines are written against, so that an
// adapter holds only what is specific to its engine. It starts and
// supervises a database server process for one run on host/proc (in its
// own process group, killed if tierbench dies), tracked for cleanup, bound
// to 127.0.0.1 by its engine's arguments, with its output in a log file
// whose tail explains a failed start or a crash, and whose errors are
// typed (engine.ErrServerDied, engine.ErrDiskFull): readiness (WaitReady,
// Handshake), stop and crash (this file). Beside it: run folders, scratch
// folders and copies of a template (open.go); the per-study template made
// once under a file lock (template.go); the closers an Open collects and
// Close releases (closers.go); the ports of a server that cannot require a
// secret, locked through the study's ledger (lockports.go); where the
// project's Java builds are (builds.go); and servers tierbench did not
// start (target.go). What is not about servers (process groups, users,
// helper commands, secrets, ports) is the host kit's, under host/.
package server

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/tier/syncdelay"

	"github.com/tierbench/tierbench/host/logtail"
)

// Spec says how to start a server.
type Spec struct {
	// Name labels errors ("postgres").
	Name string
	Path string
	Args []string
	Env  []string
	Dir  string
	// Log receives the server's stdout and stderr.
	Log string
	// User runs the server as this user (servers such as PostgreSQL refuse
	// root); empty keeps tierbench's user.
	User string
	// Track records the server's pid so that a killed tierbench can be
	// cleaned up (engine.Config.Track; nil: not recorded). Stop forgets it
	// once the server is gone.
	Track func(pid int) (untrack func())
	// DiskFull matches what the server says (in its log or an error) when
	// a tier is full in words of its own; DiskFullNote is added to such an
	// error ("the AOF could not grow"). strerror's "No space left on
	// device" needs neither. Either way the error wraps engine.ErrDiskFull.
	DiskFull     *regexp.Regexp
	DiskFullNote string
	// Memory, when set, is the memory cgroup the server starts in
	// (engine.Config.Memory): it and everything it forks are bounded by
	// its limit.
	Memory engine.MemoryGroup
	// SyncDelays, when set, start the server under them
	// (engine.Config.SyncDelays): the syncs of its files under their
	// folders take as long as the tiers' devices'.
	SyncDelays syncdelay.Rules
}

// Process is a running server.
type Process struct {
	spec    Spec
	run     *proc.Running
	logf    *os.File
	untrack func()
	stopped sync.Once
	// syncs serves the server's sync delays (nil without SyncDelays).
	syncs *syncdelay.Supervisor
}

// Start starts the server.
func Start(spec Spec) (*Process, error) {
	logf, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: log file: %w", spec.Name, err)
	}
	path, args := spec.Path, spec.Args
	if spec.Memory != nil {
		if path, args, err = inGroup(spec); err != nil {
			logf.Close()
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
	}
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = spec.Dir, logf, logf
	cmd.Env = append(os.Environ(), spec.Env...)
	// Own process group: Stop signals the server and everything it forks;
	// the kernel kills it if tierbench dies, even by kill -9. Under sync
	// delays the helper that becomes the server switches to its user.
	user := spec.User
	if len(spec.SyncDelays) > 0 {
		user = ""
	}
	if err := proc.OwnGroupAs(cmd, user); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	var syncs *syncdelay.Command
	if len(spec.SyncDelays) > 0 {
		if syncs, err = wrapSyncs(cmd, spec); err != nil {
			logf.Close()
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
	}
	run, err := proc.Start(cmd)
	if err != nil {
		if syncs != nil {
			syncs.Abandon()
		}
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	p := &Process{spec: spec, run: run, logf: logf, untrack: func() {}}
	if syncs != nil {
		if p.syncs, err = syncs.Started(run.PID()); err != nil {
			run.Kill(5 * time.Second)
			logf.Close()
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
		go func() {
			<-run.Done()
			p.syncs.Close()
		}()
	}
	if spec.Track != nil {
		p.untrack = spec.Track(run.PID())
	}
	return p, nil
}

// wrapSyncs makes cmd start the server under spec's sync delays, as
// spec's user.
func wrapSyncs(cmd *exec.Cmd, spec Spec) (*syncdelay.Command, error) {
	uid, gid := -1, -1
	if spec.User != "" {
		var err error
		if uid, gid, err = proc.LookupUser(spec.User); err != nil {
			return nil, err
		}
	}
	return syncdelay.Wrap(cmd, spec.SyncDelays, uid, gid)
}

// PID is the server's process id (and its process group id); 0 for a nil
// Process, a server tierbench did not start (a target), so engines need
// no case of their own for it.
func (p *Process) PID() int {
	if p == nil {
		return 0
	}
	return p.run.PID()
}

// Done is closed when the server exits.
func (p *Process) Done() <-chan struct{} { return p.run.Done() }

// Exited reports whether the server has exited, and how.
func (p *Process) Exited() (bool, error) { return p.run.Exited() }

// Died returns an error with the log's tail if the server has exited,
// which wraps engine.ErrServerDied (and engine.ErrDiskFull when the log
// says a tier is full); nil for a nil Process (a target server is not
// watched: losing it fails operations instead).
func (p *Process) Died() error {
	if p == nil {
		return nil
	}
	if exited, err := p.Exited(); exited {
		return p.WithLog(&diedError{fmt.Sprintf("%s exited (%v)", p.spec.Name, err)})
	}
	return nil
}

// diedError says how a server exited; errors.Is finds
// engine.ErrServerDied in it, without that adding to its text.
type diedError struct{ msg string }

func (e *diedError) Error() string        { return e.msg }
func (e *diedError) Is(target error) bool { return target == engine.ErrServerDied }

// WithLog adds the last lines of the server's log to err, which they
// explain (a failed start, a setup step, a stop), and marks it
// engine.ErrDiskFull when they say a tier is full.
func (p *Process) WithLog(err error) error {
	tail := p.LogTail(15)
	return p.noteDiskFull(fmt.Errorf("%w; last lines of its log %s:\n%s", err, p.spec.Log, tail), tail)
}

// enospcText is strerror(ENOSPC), as servers write it in logs and errors
// (capitalised, as C's strerror writes it, or not, as Go's).
const enospcText = "no space left on device"

// noteDiskFull marks err engine.ErrDiskFull when text (a log tail, or
// err's own text) says a tier is full: in the server's own words
// (Spec.DiskFull, noted with Spec.DiskFullNote) or strerror's.
func (p *Process) noteDiskFull(err error, text string) error {
	switch {
	case err == nil || errors.Is(err, engine.ErrDiskFull):
		return err
	case p.spec.DiskFull != nil && p.spec.DiskFull.MatchString(text):
		return DiskFull(err, p.spec.DiskFullNote)
	case strings.Contains(strings.ToLower(text), enospcText):
		return DiskFull(err, "")
	}
	return err
}

// DiskFull marks err engine.ErrDiskFull: for the runner, which names the
// tier that filled up. A note (what could not grow) is added to its text
// as "(disk full: note)"; without one the text stays as it is.
func DiskFull(err error, note string) error {
	if note != "" {
		return fmt.Errorf("%w (%w: %s)", err, engine.ErrDiskFull, note)
	}
	return &diskFullError{err}
}

// diskFullError is an error whose text already says the disk is full
// (strerror's words): errors.Is finds engine.ErrDiskFull in it too.
type diskFullError struct{ error }

func (e *diskFullError) Unwrap() []error { return []error{e.error, engine.ErrDiskFull} }

// WaitReady polls ready until it succeeds, the server exits, or timeout.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if err := p.Died(); err != nil {
			return fmt.Errorf("%s did not start: %w", p.spec.Name, err)
		}
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return p.WithLog(fmt.Errorf("%s did not accept connections within %s (%v)", p.spec.Name, timeout, last))
		case <-p.run.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Handshake is a ready check for WaitReady: it dials addr over TCP and,
// with talk, has a few words with the server on the connection (a
// protocol's startup message, AUTH and PING), within 2 s; without talk,
// a server that accepts the connection is ready.
func Handshake(addr string, talk func(net.Conn) error) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		if talk == nil {
			return nil
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		return talk(c)
	}
}

// Stop asks the server's process group to stop (SIGTERM, or sig if given),
// waits up to grace, then kills it; it then forgets the server's pid
// (Spec.Track).
func (p *Process) Stop(grace time.Duration, sig ...syscall.Signal) error {
	defer p.stopped.Do(func() {
		p.logf.Close()
		p.untrack()
		proc.RemoveEmptyPerfData(p.spec.User)
	})
	s := syscall.SIGTERM
	if len(sig) > 0 {
		s = sig[0]
	}
	// For a server that crashed or died, only its log and record (above)
	// are left to release.
	if !p.run.Stop(grace, s) {
		return nil
	}
	return fmt.Errorf("stop %s: not stopped %s after SIG%s; killed", p.spec.Name, grace, strings.ToUpper(s.String()))
}

// Crash kills the server's whole process group at once (SIGKILL: no
// shutdown, nothing flushed that the OS does not already hold) and waits
// until the server is gone: a crash run's process crash. Stop afterwards
// only releases the server's log and record.
func (p *Process) Crash() error {
	if p == nil {
		return errors.New("a server tierbench did not start cannot be crashed")
	}
	// The leader's children (PostgreSQL's backends) die with it, but a
	// restart must not find one still holding the old shared memory.
	if err := p.run.Kill(10 * time.Second); err != nil {
		return fmt.Errorf("crash %s: %w", p.spec.Name, err)
	}
	return nil
}

// LogTail returns the last n lines of the server's log.
func (p *Process) LogTail(n int) string { return logtail.File(p.spec.Log, n) }

// Explain adds to err, an error a client of the server got, what the
// server's log says when the server has died (its exit and log tail) or
// when lost (the engine's reading of its driver's error, ConnLost and the
// like) says it dropped the connection: a crashed backend's PANIC, a
// restart. The log is read only on those errors. Other errors are marked
// engine.ErrDiskFull when their own text says a tier is full, and
// otherwise returned as they are, nil included. A nil Process (a target
// server, whose log is not ours) returns err as it is.
func (p *Process) Explain(err error, lost bool) error {
	if p == nil || err == nil {
		return err
	}
	if died := p.Died(); died != nil {
		return fmt.Errorf("%w; %w", err, died)
	}
	if lost {
		return p.WithLog(fmt.Errorf("%w; the server dropped the connection", err))
	}
	return p.noteDiskFull(err, err.Error())
}

// ConnLost reports whether err says a client's connection to its server is
// gone: closed or reset under it, or refused. A cancelled or expired
// context is not: the run ended, or an operation took too long.
func ConnLost(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var op *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op)
}

// inGroup wraps spec's program so it starts in spec.Memory, delegated to
// the server's user, who moves itself in before anything runs.
func inGroup(spec Spec) (string, []string, error) {
	if spec.User != "" {
		uid, gid, err := proc.LookupUser(spec.User)
		if err != nil {
			return "", nil, err
		}
		if err := spec.Memory.Delegate(uid, gid); err != nil {
			return "", nil, fmt.Errorf("let user %s into its memory cgroup: %w", spec.User, err)
		}
	}
	path, args := spec.Memory.Command(spec.Path, spec.Args)
	return path, args, nil
}
