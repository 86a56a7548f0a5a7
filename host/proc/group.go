// Package proc starts the programs tierbench runs on the host (servers,
// tools, helpers, its own re-executed children), each in a process group
// of its own, so that a signal reaches everything a program forks and
// nothing else; by default the kernel kills the group's leader if
// tierbench dies, even by kill -9. It is the one place that makes process
// groups (group.go), reaps and stops a running one (running.go), runs
// helpers and tools as an OS user and quotes their output in errors
// (run.go), finds programs (find.go) and resolves the users servers run as
// (users.go). It imports nothing of tierbench's but host/logtail, so
// tiers, engines, tools and the Kubernetes node all stand on it.
package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

// OwnGroup puts cmd, not yet started, in a process group of its own that
// the kernel kills if tierbench dies, even by kill -9 (its leader gets
// SIGKILL: Pdeathsig). For a command made with exec.CommandContext,
// cancelling kills the whole group, not just its leader.
func OwnGroup(cmd *exec.Cmd) {
	_ = OwnGroupAs(cmd, "")
}

// OwnGroupAs is OwnGroup running cmd as OS user userName; "" keeps
// tierbench's own user.
func OwnGroupAs(cmd *exec.Cmd, userName string) error {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if userName != "" {
		uid, gid, err := LookupUser(userName)
		if err != nil {
			return err
		}
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	cmd.SysProcAttr = attr
	cancelGroup(cmd)
	return nil
}

// OwnGroupOutliving is OwnGroup without the kill at tierbench's death, for
// a child that then ends by itself, in order: tierbench's own re-executed
// children, which close what they serve when their control socket closes
// or watch tierbench's pid and unmount (the Pebble child, the latency
// layer's FUSE helper), and programs that tierbench stops, or whose
// record `tierbench cleanup` undoes (the Kubernetes node's daemons, an
// image build).
func OwnGroupOutliving(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cancelGroup(cmd)
}

// OwnSession starts cmd in a session of its own (and so in a process
// group of its own), away from tierbench's terminal: a server that outlives
// the command that started it (`tierbench cluster up`'s node) and that a
// Ctrl-C at the terminal does not reach.
func OwnSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// cancelGroup makes a cancel of a command made with exec.CommandContext
// (which sets cmd.Cancel) kill its whole group.
func cancelGroup(cmd *exec.Cmd) {
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return SignalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	}
}

// SignalGroup sends sig to every process in the group whose leader is pid
// (a pid from a command started here: its group's id).
func SignalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}

// KillGroup kills every process in pid's group at once (SIGKILL); a group
// already gone is not an error.
func KillGroup(pid int) error {
	if err := SignalGroup(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// GroupAlive reports whether any process of pid's group is left (zombies
// not yet reaped count).
func GroupAlive(pid int) bool {
	return SignalGroup(pid, 0) == nil
}
