// Package server starts and supervises a database server process for one
// run: in its own process group, killed if tierbench dies (parent-death
// signal), bound to 127.0.0.1 by its engine's arguments, with its output in a
// log file whose tail explains a failed start or a crash. It also holds the
// helpers the server engines share to prepare a run: finding binaries,
// users and ownership, helper commands, (open.go) run folders, options
// and template copies, and (secret.go) per-run secrets, the private folders
// and files that hold them, and the check that a server's OS user can
// reach its folders.
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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
}

// Process is a running server.
type Process struct {
	spec   Spec
	cmd    *exec.Cmd
	logf   *os.File
	done   chan struct{}
	mu     sync.Mutex
	err    error
	exited bool
}

// Start starts the server.
func Start(spec Spec) (*Process, error) {
	logf, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: log file: %w", spec.Name, err)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
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
	p := &Process{spec: spec, cmd: cmd, logf: logf, done: make(chan struct{})}
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

// Died returns an error with the log's tail if the server has exited; nil
// for a nil Process (a target server is not watched: losing it fails
// operations instead).
func (p *Process) Died() error {
	if p == nil {
		return nil
	}
	if exited, err := p.Exited(); exited {
		return fmt.Errorf("%s exited (%v); last lines of its log %s:\n%s", p.spec.Name, err, p.spec.Log, p.LogTail(15))
	}
	return nil
}

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
			return fmt.Errorf("%s did not accept connections within %s (%v); last lines of its log %s:\n%s",
				p.spec.Name, timeout, last, p.spec.Log, p.LogTail(15))
		case <-p.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TCPReady is a ready check that dials addr.
func TCPReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// Stop asks the server's process group to stop (SIGTERM, or sig if given),
// waits up to grace, then kills it.
func (p *Process) Stop(grace time.Duration, sig ...syscall.Signal) error {
	defer p.logf.Close()
	s := syscall.SIGTERM
	if len(sig) > 0 {
		s = sig[0]
	}
	if exited, _ := p.Exited(); !exited {
		_ = syscall.Kill(-p.PID(), s)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("stop %s: not stopped %s after SIG%s; killed", p.spec.Name, grace, strings.ToUpper(s.String()))
}

// LogTail returns the last n lines of the server's log.
func (p *Process) LogTail(n int) string { return Tail(p.spec.Log, n) }

// Explain adds to err, an error a client of the server got, what the
// server's log says when the server has died (its exit and log tail) or
// when lost (the engine's reading of its driver's error, ConnLost and the
// like) says it dropped the connection: a crashed backend's PANIC, a
// restart. The log is read only on those errors. Other errors, nil
// included, are returned as they are.
func (p *Process) Explain(err error, lost bool) error {
	if err == nil {
		return nil
	}
	if died := p.Died(); died != nil {
		return fmt.Errorf("%w; %w", err, died)
	}
	if lost {
		return fmt.Errorf("%w; the server dropped the connection; last lines of its log %s:\n%s", err, p.spec.Log, p.LogTail(15))
	}
	return err
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

// tailBytes bounds how much of a log Tail reads: its end is what explains.
const tailBytes = 64 << 10

// Tail returns the last n lines of a file (of its last 64KiB).
func Tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > tailBytes {
		if _, err := f.Seek(-tailBytes, io.SeekEnd); err != nil {
			return "(log unreadable: " + err.Error() + ")"
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "(log unreadable: " + err.Error() + ")"
	}
	return lastLines(b, n)
}

// lastLines returns the last n lines of b.
func lastLines(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
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

// FreePort returns a TCP port on 127.0.0.1 that is free now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
		return fmt.Errorf("%s %s: %v:\n%s", path, strings.Join(args, " "), err, lastLines(out, 15))
	}
	return nil
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
