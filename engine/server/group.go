package server

import (
	"os/exec"
	"syscall"
)

// OwnGroup puts a tool or client process that tierbench starts (pgbench,
// sysbench, a JVM) in a process group of its own that the kernel kills if
// tierbench dies, even by kill -9. For a command made with
// exec.CommandContext, cancelling kills the whole group, not just its
// leader.
func OwnGroup(cmd *exec.Cmd, withContext bool) {
	cmd.SysProcAttr, _ = procAttr("")
	if withContext {
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
}
