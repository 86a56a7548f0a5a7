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

	"github.com/tierbench/tierbench/host/proc"
)

// procs are the node's running programs, each in its own process group,
// logging to a file of its own in the node's logs folder.
type procs struct {
	logs string
	mu   sync.Mutex
	list []*program
	// died receives a program that ended while the node runs.
	died chan *program
}

// program is one of the node's programs, in a process group of its own.
// The group is not killed with the process serving the node: stop ends
// it, and the node's ledger record and sweep undo what a killed node left.
type program struct {
	name string
	run  *proc.Running
}

// exit is how the program ended, once it has.
func (pr *program) exit() error {
	_, err := pr.run.Exited()
	return err
}

func (p *procs) start(name, path string, args ...string) (*program, error) {
	if err := os.MkdirAll(p.logs, 0o700); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	logf, err := os.OpenFile(filepath.Join(p.logs, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	proc.OwnGroupOutliving(cmd)
	run, err := proc.Start(cmd)
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	pr := &program{name: name, run: run}
	go func() {
		<-run.Done()
		logf.Close()
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
		list[i].run.Stop(grace, syscall.SIGTERM)
	}
}

// waitUntil polls ok every 300 ms until it is true, the program that
// should make it true ends, or timeout passes.
func (p *procs) waitUntil(ctx context.Context, pr *program, what string, timeout time.Duration, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for !ok() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-pr.run.Done():
			return fmt.Errorf("%s: %s ended (%v); its log ends:\n%s", what, pr.name, pr.exit(), p.logTail(pr.name))
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
