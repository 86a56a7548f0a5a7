package server

import (
	"os/exec"
	"sync"
	"syscall"

	"github.com/tierbench/tierbench/host/logtail"
)

// TailWriter keeps the last Max bytes written to it (a tool's or client's
// output), for error messages. It is safe for concurrent use.
type TailWriter struct {
	Max int
	mu  sync.Mutex
	buf []byte
}

func (t *TailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns everything kept.
func (t *TailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Last returns the last n lines kept.
func (t *TailWriter) Last(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return logtail.Lines(t.buf, n)
}

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
