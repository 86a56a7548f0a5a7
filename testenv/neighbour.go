package testenv

import (
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// BusyNeighbour starts busy loops that are not descendants of the test's
// process (a shell starts each and exits, so it is reparented away): the
// noisy neighbour telemetry must tell apart from tierbench's own
// processes. One loop per CPU would keep the whole host busy; while the
// suite's other lane competes for the CPUs too, they still get well past
// telemetry's disturbance threshold of a quarter (one loop per two CPUs
// once got 20% of the host during a run, and that run went unmarked).
// They are killed when the test ends; their PIDs are returned.
func BusyNeighbour(t testing.TB) []int {
	t.Helper()
	var pids []int
	for range runtime.NumCPU() {
		out, err := exec.Command("sh", "-c", `sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & echo $!`).Output()
		if err != nil {
			t.Fatalf("start a busy neighbour: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("busy neighbour's pid %q: %v", out, err)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		pids = append(pids, pid)
	}
	return pids
}
