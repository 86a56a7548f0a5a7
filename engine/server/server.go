// Package server is the kit server engines are written against, so that an
// adapter holds only what is specific to its engine. It starts and
// supervises a database server process for one run: in its own process
// group, killed if tierbench dies (parent-death signal), tracked for
// cleanup, bound to 127.0.0.1 by its engine's arguments, with its output in
// a log file whose tail explains a failed start or a crash, and whose
// errors are typed (engine.ErrServerDied, engine.ErrDiskFull). Beside it:
// finding binaries, users and ownership, helper commands (this file); run
// folders, scratch folders and copies of a template (open.go); the
// per-study template made once under a file lock (template.go); the
// closers an Open collects and Close releases (closers.go); the check that
// a server's OS user can reach its folders (reach.go); per-run secrets and
// the private folders and files that hold them (secret.go); and servers
// tierbench did not start (target.go).
package server

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/engine"

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
}

// Process is a running server.
type Process struct {
	spec    Spec
	cmd     *exec.Cmd
	logf    *os.File
	done    chan struct{}
	untrack func()
	stopped sync.Once
	mu      sync.Mutex
	err     error
	exited  bool
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
	// Own process group: Stop signals the server and everything it forks.
	// Pdeathsig: the kernel kills it if tierbench dies, even by kill -9.
	attr, err := procAttr(spec.User)
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	p := &Process{spec: spec, cmd: cmd, logf: logf, done: make(chan struct{}), untrack: func() {}}
	if spec.Track != nil {
		p.untrack = spec.Track(cmd.Process.Pid)
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err, p.exited = err, true
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// PID is the server's process id (and its process group id); 0 for a nil
// Process, a server tierbench did not start (a target), so engines need
// no case of their own for it.
func (p *Process) PID() int {
	if p == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Done is closed when the server exits.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the server has exited, and how.
func (p *Process) Exited() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited, p.err
}

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
		case <-p.done:
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
	})
	if exited, _ := p.Exited(); exited {
		return nil // crashed or died: only the log and record to release
	}
	s := syscall.SIGTERM
	if len(sig) > 0 {
		s = sig[0]
	}
	_ = syscall.Kill(-p.PID(), s)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
	<-p.done
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
	if err := syscall.Kill(-p.PID(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("crash %s: %w", p.spec.Name, err)
	}
	<-p.done
	// The leader's children (PostgreSQL's backends) die with it, but a
	// restart must not find one still holding the old shared memory.
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-p.PID(), 0) == nil; {
		if time.Now().After(deadline) {
			return fmt.Errorf("crash %s: processes of group %d still alive 10s after SIGKILL", p.spec.Name, p.PID())
		}
		time.Sleep(5 * time.Millisecond)
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

// procAttr puts a child in its own process group (so a stop reaches all it
// forks), has the kernel kill it if tierbench dies (even by kill -9), and
// runs it as userName when given.
func procAttr(userName string) (*syscall.SysProcAttr, error) {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if userName != "" {
		uid, gid, err := LookupUser(userName)
		if err != nil {
			return nil, err
		}
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	return attr, nil
}

// inGroup wraps spec's program so it starts in spec.Memory, delegated to
// the server's user, who moves itself in before anything runs.
func inGroup(spec Spec) (string, []string, error) {
	if spec.User != "" {
		uid, gid, err := LookupUser(spec.User)
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

// LookupUser resolves a user name to uid and gid.
func LookupUser(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("user %s: %w", name, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// RunAs picks the OS user a server runs as: as root, the first of users
// that exists (a server other local users can reach must not hold root);
// otherwise tierbench's own user (""), which then owns every folder
// already. pkg is the package whose install creates users[0], for the
// error when none exists.
func RunAs(program, pkg string, users ...string) (string, error) {
	if os.Geteuid() != 0 {
		return "", nil
	}
	for _, u := range users {
		if _, _, err := LookupUser(u); err == nil {
			return u, nil
		}
	}
	return "", fmt.Errorf("%s must not run as root, and none of the OS users %s exists (apt-get install %s creates user %s)",
		program, strings.Join(users, ", "), pkg, users[0])
}

// ChownAll gives folders (recursively) to the user a server runs as.
func ChownAll(userName string, dirs ...string) error {
	uid, gid, err := LookupUser(userName)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		cmd := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, gid), d)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("chown %s to %s: %v: %s", d, userName, err, out)
		}
	}
	return nil
}

// Run runs a helper command (initdb, mysql_install_db) as user, returning
// its output in the error when it fails.
func Run(ctx context.Context, userName, path string, args ...string) error {
	return RunInput(ctx, userName, "", path, args...)
}

// RunInput is Run with input on the command's standard input: what a
// helper must be told but other local users must not see, which a command
// line would show them (SQL that sets a password).
func RunInput(ctx context.Context, userName, input, path string, args ...string) error {
	cmd := exec.CommandContext(ctx, path, args...)
	if input != "" {
		cmd.Stdin = strings.NewReader(input)
	}
	attr, err := procAttr(userName)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v:\n%s", path, strings.Join(args, " "), err, logtail.Lines(out, 15))
	}
	return nil
}

// Output runs a client tool (ceph, rbd) in its own process group, killed
// with it, with its connection arguments conn (kept out of errors: they
// name keyrings) and args, and returns its standard output; a failure
// quotes the last lines of its standard error.
func Output(ctx context.Context, path string, conn []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, append(slices.Clip(conn), args...)...)
	var out bytes.Buffer
	errs := &logtail.Writer{Max: 4096}
	cmd.Stdout, cmd.Stderr = &out, errs
	OwnGroup(cmd, true)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if tail := errs.Last(5); tail != "" {
			err = fmt.Errorf("%w: %s", err, tail)
		}
		return nil, fmt.Errorf("%s %s: %w", filepath.Base(path), strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

// Find locates a server binary among candidates, or names the package to
// install.
func Find(pkg string, candidates ...string) (string, error) {
	for _, c := range candidates {
		if strings.Contains(c, "/") {
			if _, err := os.Stat(c); err == nil {
				return c, nil
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed: apt-get install %s: %w", candidates[0], pkg, ErrNotInstalled)
}

// ErrNotInstalled marks a missing server binary.
var ErrNotInstalled = errors.New("not installed")
