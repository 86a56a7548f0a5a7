package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Running is a command started in a process group of its own (OwnGroup
// and its kin) and reaped in the background: a server, a daemon, a
// long-lived helper, which is signalled, stopped and killed as a group.
type Running struct {
	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	err    error
	exited bool
}

// Start starts cmd, which OwnGroup, OwnGroupAs or OwnGroupOutliving put in
// a group of its own (Start refuses one they did not: stopping it would
// signal tierbench's own group), and reaps it when it exits.
func Start(cmd *exec.Cmd) (*Running, error) {
	if a := cmd.SysProcAttr; a == nil || !(a.Setpgid || a.Setsid) {
		return nil, errors.New("start: the command is not in a process group of its own (proc.OwnGroup)")
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &Running{cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		r.mu.Lock()
		r.err, r.exited = err, true
		r.mu.Unlock()
		close(r.done)
	}()
	return r, nil
}

// PID is the leader's process id, which is also its group's.
func (r *Running) PID() int { return r.cmd.Process.Pid }

// Done is closed once the leader has exited and been reaped.
func (r *Running) Done() <-chan struct{} { return r.done }

// Exited reports whether the leader has exited, and how (cmd.Wait's
// error).
func (r *Running) Exited() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exited, r.err
}

// Signal sends sig to the whole group.
func (r *Running) Signal(sig syscall.Signal) error { return SignalGroup(r.PID(), sig) }

// Stop asks the group to stop with sig, waits up to grace for the leader
// to exit, then kills the group and waits for the leader; killed says it
// had to. A leader that had already exited is left as it is.
func (r *Running) Stop(grace time.Duration, sig syscall.Signal) (killed bool) {
	if exited, _ := r.Exited(); exited {
		return false
	}
	_ = r.Signal(sig)
	select {
	case <-r.done:
		return false
	case <-time.After(grace):
	}
	_ = KillGroup(r.PID())
	<-r.done
	return true
}

// Kill kills the whole group at once (SIGKILL: nothing the OS does not
// already hold is flushed), waits for the leader to be reaped, then up to
// within for the rest of the group to go: children that die with their
// leader (PostgreSQL's backends) must not linger on what a restart needs.
func (r *Running) Kill(within time.Duration) error {
	if err := KillGroup(r.PID()); err != nil {
		return fmt.Errorf("kill group %d: %w", r.PID(), err)
	}
	<-r.done
	for deadline := time.Now().Add(within); GroupAlive(r.PID()); {
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of group %d still alive %s after SIGKILL", r.PID(), within)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}
