package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procs are the node's running programs, each in its own process group,
// logging to a file of its own in the node's logs folder.
type procs struct {
	logs string
	mu   sync.Mutex
	list []*proc
	// died receives a program that ended while the node runs.
	died chan *proc
}

type proc struct {
	name string
	cmd  *exec.Cmd
	err  error // how it ended, once done is closed
	done chan struct{}
}

func (p *procs) start(name, path string, args ...string) (*proc, error) {
	if err := os.MkdirAll(p.logs, 0o700); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	logf, err := os.OpenFile(filepath.Join(p.logs, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	pr := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		pr.err = cmd.Wait()
		logf.Close()
		close(pr.done)
		select {
		case p.died <- pr:
		default:
		}
	}()
	p.mu.Lock()
	p.list = append(p.list, pr)
	p.mu.Unlock()
	return pr, nil
}

// logTail is the end of a program's log, for an error that names why it
// failed.
func (p *procs) logTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(p.logs, name+".log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}

// stop ends every program, newest first: SIGTERM, then SIGKILL after
// grace.
func (p *procs) stop(grace time.Duration) {
	p.mu.Lock()
	list := p.list
	p.list = nil
	p.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		pr := list[i]
		_ = syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-pr.done:
		case <-time.After(grace):
			_ = syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL)
			<-pr.done
		}
	}
}

// waitUntil polls ok every 300 ms until it is true, the program that
// should make it true ends, or timeout passes.
func (p *procs) waitUntil(ctx context.Context, pr *proc, what string, timeout time.Duration, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for !ok() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-pr.done:
			return fmt.Errorf("%s: %s ended (%v); its log ends:\n%s", what, pr.name, pr.err, p.logTail(pr.name))
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %s; %s's log ends:\n%s", what, timeout, pr.name, p.logTail(pr.name))
		}
	}
	return nil
}

// listening reports whether something accepts TCP connections at addr.
func listening(addr string) func() bool {
	return func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
}

// exists reports whether path exists (a socket once its server listens).
func exists(path string) func() bool {
	return func() bool { _, err := os.Stat(path); return err == nil }
}
