package procfs

import (
	"fmt"
	"os"
	"strconv"
)

// PIDs lists the processes /proc shows now, in its order; a process may
// be gone by the time its files are read, which callers skip. Every
// tierbench package that looks over the machine's processes (reaping a
// server's children, finding a mount's holders, telemetry, a leaked
// secret) starts from it.
func PIDs() ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
