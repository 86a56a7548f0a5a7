package testenv

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// BusyNeighbour starts a busy loop that is not a descendant of the test's
// process (a shell starts it and exits, so it is reparented away): the
// noisy neighbour telemetry must tell apart from tierbench's own
// processes. It is killed when the test ends; its PID is returned.
func BusyNeighbour(t testing.TB) int {
	t.Helper()
	out, err := exec.Command("sh", "-c", `sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & echo $!`).Output()
	if err != nil {
		t.Fatalf("start a busy neighbour: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("busy neighbour's pid %q: %v", out, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}
