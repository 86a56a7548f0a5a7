// Package procfs is the one reader of /proc/PID/stat (proc(5)), and the one
// lister of /proc's processes (PIDs): telemetry's
// CPU and memory samples, the ledger's liveness checks (is the process that
// tierbench recorded still the same one, is it exiting) and the servers'
// zombie checks read the same fields through it; SelfCPU is the process's
// own CPU time for benchmarks. It imports nothing of tierbench's, so every
// package may use it.
package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stat is what tierbench uses of a /proc stat file.
type Stat struct {
	// Comm is the command name (field 2), without its parentheses.
	Comm string
	// State is the state letter: R, S, D, Z, T, ...
	State byte
	// PPID is the parent's process ID.
	PPID uint64
	// Flags are the kernel's per-task flags (PF_*).
	Flags uint64
	// UTime and STime are CPU time in clock ticks.
	UTime, STime uint64
	// StartTicks is when the process started, in clock ticks after boot:
	// it tells a reused PID apart.
	StartTicks uint64
	// RSSPages is the resident set in pages.
	RSSPages uint64
}

// Parse parses a stat file's text. The command name, field 2, is in
// parentheses and may itself hold spaces and ')', so the fields are
// counted from the last ')'.
func Parse(text string) (Stat, error) {
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("parse stat: no ')' after the command name")
	}
	f := strings.Fields(text[i+1:]) // f[0] is field 3 (state)
	if len(f) == 0 || f[0] == "" {
		return Stat{}, fmt.Errorf("parse stat: no state after the command name")
	}
	st := Stat{State: f[0][0]}
	if j := strings.IndexByte(text, '('); j >= 0 && j < i {
		st.Comm = text[j+1 : i]
	}
	for _, x := range []struct {
		n   int
		dst *uint64
	}{{4, &st.PPID}, {9, &st.Flags}, {14, &st.UTime}, {15, &st.STime}, {22, &st.StartTicks}, {24, &st.RSSPages}} {
		if x.n-3 >= len(f) {
			return Stat{}, fmt.Errorf("parse stat: %d fields, want at least %d", len(f)+2, x.n)
		}
		v, err := strconv.ParseInt(f[x.n-3], 10, 64)
		if err != nil {
			return Stat{}, fmt.Errorf("parse stat: field %d: %w", x.n, err)
		}
		*x.dst = uint64(max(v, 0))
	}
	return st, nil
}

// Read reads and parses the stat file at path: /proc/PID/stat, or a
// thread's /proc/PID/task/TID/stat.
func Read(path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	return Parse(string(b))
}

// Of reads process pid's stat file.
func Of(pid int) (Stat, error) {
	return Read(Path(pid))
}

// KernelThread is the kernel's PF_KTHREAD flag: a kernel thread, which
// works for every process (writeback, interrupts) and is nobody's load.
const KernelThread = 0x00200000

// Path is process pid's stat file, its times those of all its threads.
func Path(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/stat" }

// ThreadPath is the stat file of thread tid of this process, its times the
// thread's alone. Not /proc/TID/stat: that opens for any thread, but the
// kernel answers it with the whole process's times, as Path.
func ThreadPath(tid int) string { return "/proc/self/task/" + strconv.Itoa(tid) + "/stat" }
