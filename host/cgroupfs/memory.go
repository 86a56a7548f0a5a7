package cgroupfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// memoryParent is the folder below a memory hierarchy's mount that holds
// tierbench's memory groups, so that they are easy to find and that
// OpenMemory can refuse any other cgroup.
const memoryParent = "tierbench"

// errNoMemory says that no hierarchy carries the memory controller, with the
// ways to get one.
var errNoMemory = fmt.Errorf("no cgroup v2 hierarchy with the memory controller and no cgroup v1 memory hierarchy is mounted: "+
	"boot with a kernel built with CONFIG_MEMCG (and cgroup_enable=memory where the kernel leaves it off), then either mount cgroup v2 "+
	"(mount -t cgroup2 none /sys/fs/cgroup) with memory not bound to a v1 hierarchy, or mount v1 memory "+
	"(mkdir -p /sys/fs/cgroup/memory && mount -t cgroup -o memory none /sys/fs/cgroup/memory): %w", errors.ErrUnsupported)

// FindMemory finds the hierarchy with the memory controller: cgroup v2 when
// memory is in a cgroup2 mount's cgroup.controllers, else v1 memory. Its
// error names the fix when none is mounted and wraps errors.ErrUnsupported.
func FindMemory() (Hierarchy, error) {
	h, err := Find("memory", "memory")
	if errors.Is(err, errors.ErrUnsupported) {
		return h, errNoMemory
	}
	return h, err
}

// MemoryGroup is a cgroup that caps the memory of the processes in it,
// page cache included: the kernel charges a page read into the cache to the
// group of the process that brought it in and reclaims it under the limit,
// so a database server in the group runs as if on a machine that small. It
// is safe for concurrent use.
type MemoryGroup struct {
	h     Hierarchy
	path  string
	limit int64

	mu   sync.Mutex
	peak *os.File // v2 memory.peak kept open where writable: its reset is per open file
}

// Path is the group's cgroup folder: what a ledger records for cleanup.
func (g *MemoryGroup) Path() string { return g.path }

// Limit is the group's memory limit in bytes; 0 when the group (opened
// with OpenMemory) has none.
func (g *MemoryGroup) Limit() int64 { return g.limit }

// validMemoryName keeps a group name to one folder below the tierbench parent.
func validMemoryName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\n") || name == LeafName {
		return fmt.Errorf("invalid memory group name %q: want one folder name such as <study>-<run>", name)
	}
	return nil
}

// MemoryPath is the folder CreateMemory makes for name, for a ledger to
// record before it is made.
func MemoryPath(name string) (string, error) {
	if err := validMemoryName(name); err != nil {
		return "", err
	}
	h, err := FindMemory()
	if err != nil {
		return "", err
	}
	return filepath.Join(h.Mount, memoryParent, name), nil
}

// CreateMemory makes the group <mount>/tierbench/<name> with a limit of
// limit bytes. The tierbench parent is made if missing and never removed
// (other runs' groups may be in it). Swap does not extend the limit: v1's
// memory.memsw.limit_in_bytes is set to the same where swap accounting
// exists (else memory.swappiness 0 keeps anonymous memory out of swap); v2's
// memory.swap.max is 0. A folder already there is an error, not reused,
// since its limit and processes are unknown. On a failure after the folder
// was made, CreateMemory removes it again.
func CreateMemory(name string, limit int64) (*MemoryGroup, error) {
	if err := validMemoryName(name); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("memory group %s: limit %d: want a positive number of bytes", name, limit)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("memory cgroups need root: run tierbench as root (sudo): %w", errors.ErrUnsupported)
	}
	h, err := FindMemory()
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(h.Mount, memoryParent)
	if h.Version == 2 {
		if err := Enable(h.Mount, "memory"); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("create memory group: %w", err)
	}
	if h.Version == 2 {
		if err := Enable(parent, "memory"); err != nil {
			return nil, err
		}
	}
	g := &MemoryGroup{h: h, path: filepath.Join(parent, name), limit: limit}
	if err := os.Mkdir(g.path, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create memory group: cgroup %s already exists (left by a killed tierbench? tierbench cleanup removes it): %w", g.path, err)
		}
		return nil, fmt.Errorf("create memory group: %w", err)
	}
	if err := g.setLimit(); err != nil {
		return nil, errors.Join(fmt.Errorf("limit memory of %s to %d bytes: %w", g.path, limit, err), unix.Rmdir(g.path))
	}
	g.openPeak()
	return g, nil
}

// setLimit writes the group's limit, and the swap limit that keeps swap
// from extending it.
func (g *MemoryGroup) setLimit() error {
	v := strconv.FormatInt(g.limit, 10)
	if g.h.Version == 2 {
		if err := WriteFile(filepath.Join(g.path, "memory.max"), v); err != nil {
			return err
		}
		if swap := filepath.Join(g.path, "memory.swap.max"); exists(swap) {
			return WriteFile(swap, "0")
		}
		return nil
	}
	// memsw may not be below the memory limit, so the memory limit goes first.
	if err := WriteFile(filepath.Join(g.path, "memory.limit_in_bytes"), v); err != nil {
		return err
	}
	if memsw := filepath.Join(g.path, "memory.memsw.limit_in_bytes"); exists(memsw) {
		return WriteFile(memsw, v)
	}
	// Without swap accounting, the best there is: no swapping in the group's reclaim.
	_ = WriteFile(filepath.Join(g.path, "memory.swappiness"), "0")
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// openPeak keeps v2's memory.peak open where it is writable (kernels >=
// 6.12), because a write resets the peak only for reads through the same
// open file.
func (g *MemoryGroup) openPeak() {
	if g.h.Version != 2 {
		return
	}
	if f, err := os.OpenFile(filepath.Join(g.path, "memory.peak"), os.O_RDWR, 0); err == nil {
		g.peak = f
	}
}

// OpenMemory opens an existing group by its folder, for cleanup after a
// tierbench that could not Remove it. It refuses any folder that is not a
// group CreateMemory makes (a cgroup directly below a memory hierarchy's
// tierbench parent), so a corrupt record cannot make Remove kill other
// processes. A folder already gone gives an error that wraps
// os.ErrNotExist.
func OpenMemory(path string) (*MemoryGroup, error) {
	path = filepath.Clean(path)
	isCgroup, err := IsCgroupDir(path)
	if err != nil {
		return nil, fmt.Errorf("open memory group %s: %w", path, err)
	}
	if !isCgroup {
		return nil, fmt.Errorf("open memory group %s: not a cgroup folder", path)
	}
	h, err := HierarchyOf(path)
	if err != nil {
		return nil, fmt.Errorf("open memory group: %w", err)
	}
	h.Controller = "memory"
	if filepath.Dir(path) != filepath.Join(h.Mount, memoryParent) || validMemoryName(filepath.Base(path)) != nil {
		return nil, fmt.Errorf("open memory group %s: not a folder in %s; refusing it", path, filepath.Join(h.Mount, memoryParent))
	}
	limitFile := "memory.limit_in_bytes"
	if h.Version == 2 {
		limitFile = "memory.max"
	}
	b, err := os.ReadFile(filepath.Join(path, limitFile))
	if err != nil {
		return nil, fmt.Errorf("open memory group %s: the hierarchy has no memory controller: %w", path, err)
	}
	g := &MemoryGroup{h: h, path: path}
	if s := strings.TrimSpace(string(b)); s != "max" {
		if g.limit, err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, fmt.Errorf("open memory group %s: parse %s: %w", path, limitFile, err)
		}
	}
	g.openPeak()
	return g, nil
}

// Delegate lets processes of uid/gid move themselves into the group, so a
// server that drops root before exec (or is started as its own user) can go
// through Command: it chowns cgroup.procs (and tasks on v1). On v2 the
// kernel also wants write access to cgroup.procs of the nearest cgroup
// above both the process's cgroup and the group, which this does not grant.
func (g *MemoryGroup) Delegate(uid, gid int) error {
	files := []string{"cgroup.procs"}
	if g.h.Version == 1 {
		files = append(files, "tasks")
	}
	for _, f := range files {
		if err := os.Chown(filepath.Join(g.path, f), uid, gid); err != nil {
			return fmt.Errorf("delegate memory group %s to %d:%d: %w", g.path, uid, gid, err)
		}
	}
	return nil
}

// joinScript is the shell between exec.Cmd and the real program: it writes
// its own pid to the cgroup.procs file given as $0, then replaces itself
// with the program and its arguments, which the shell never reparses. The
// program so starts in the group, and everything it allocates or reads into
// the page cache, from its first page on, is charged there.
const joinScript = `echo $$ > "$0" && exec "$@"`

// Command returns the program and arguments (without argv[0], as
// exec.Command takes them) that run path with args inside the group:
// /bin/sh joins the group, then execs path. Children the program forks
// later are in the group too.
func (g *MemoryGroup) Command(path string, args []string) (string, []string) {
	return "/bin/sh", append([]string{"-c", joinScript, filepath.Join(g.path, "cgroup.procs"), path}, args...)
}

// MemoryStats is what the kernel counts for a memory group.
type MemoryStats struct {
	Usage int64 // bytes charged now, page cache included
	// Peak is the most bytes charged at once since the group was made or
	// ResetPeak; 0 where the kernel does not track it (v2 before 5.19).
	Peak        int64
	Cache       int64 // bytes of page cache: what the limit squeezes before the server's own memory
	Anon        int64 // bytes of anonymous memory: heaps, buffers pools, stacks
	MajorFaults int64 // count of page faults that had to read from storage: a cache too small shows here
	// Failcnt counts the times usage hit the limit and the kernel had to
	// reclaim (v2 memory.events "max"; v1 memory.failcnt plus
	// memory.memsw.failcnt, as the swap-inclusive limit is the one hit
	// first where both are set, and recent kernels do not count that one:
	// then 0 on v1).
	Failcnt  int64
	OOMKills int64 // count of processes the OOM killer killed in the group; always 0 on v1 kernels before 4.13
}

// Stats reads the group's counters.
func (g *MemoryGroup) Stats() (MemoryStats, error) {
	s, err := g.stats()
	if err != nil {
		return MemoryStats{}, fmt.Errorf("read memory stats of %s: %w", g.path, err)
	}
	return s, nil
}

func (g *MemoryGroup) stats() (MemoryStats, error) {
	read := func(file string) (string, error) {
		b, err := os.ReadFile(filepath.Join(g.path, file))
		return string(b), err
	}
	readInt := func(file string) (int64, error) {
		s, err := read(file)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	}
	if g.h.Version == 1 {
		stat, err := read("memory.stat")
		if err != nil {
			return MemoryStats{}, err
		}
		oom, err := read("memory.oom_control")
		if err != nil {
			return MemoryStats{}, err
		}
		s, err := v1Stats(stat, oom)
		if err != nil {
			return MemoryStats{}, err
		}
		if s.Usage, err = readInt("memory.usage_in_bytes"); err != nil {
			return MemoryStats{}, err
		}
		if s.Peak, err = readInt("memory.max_usage_in_bytes"); err != nil {
			return MemoryStats{}, err
		}
		if s.Failcnt, err = readInt("memory.failcnt"); err != nil {
			return MemoryStats{}, err
		}
		if sw, err := readInt("memory.memsw.failcnt"); err == nil {
			s.Failcnt += sw
		}
		return s, nil
	}
	stat, err := read("memory.stat")
	if err != nil {
		return MemoryStats{}, err
	}
	events, err := read("memory.events")
	if err != nil {
		return MemoryStats{}, err
	}
	s, err := v2Stats(stat, events)
	if err != nil {
		return MemoryStats{}, err
	}
	if s.Usage, err = readInt("memory.current"); err != nil {
		return MemoryStats{}, err
	}
	if s.Peak, err = g.readPeak(); err != nil {
		return MemoryStats{}, err
	}
	return s, nil
}

// readPeak reads v2's memory.peak through the open file when there is one
// (so a ResetPeak counts), else afresh; 0 where the file is missing.
func (g *MemoryGroup) readPeak() (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var b []byte
	if g.peak != nil {
		buf := make([]byte, 64)
		n, err := g.peak.ReadAt(buf, 0)
		if err != nil && err != io.EOF {
			return 0, err
		}
		b = buf[:n]
	} else {
		var err error
		b, err = os.ReadFile(filepath.Join(g.path, "memory.peak"))
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// ResetPeak starts a new peak, e.g. after a load phase, so that Peak is
// that of the measured phase alone. On v1 it writes 0 to
// memory.max_usage_in_bytes; on v2 it does nothing where memory.peak is not
// writable (kernels before 6.12).
func (g *MemoryGroup) ResetPeak() error {
	if g.h.Version == 1 {
		return WriteFile(filepath.Join(g.path, "memory.max_usage_in_bytes"), "0")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.peak == nil {
		return nil
	}
	if _, err := g.peak.WriteAt([]byte("reset\n"), 0); err != nil {
		return fmt.Errorf("reset memory.peak of %s: %w", g.path, err)
	}
	return nil
}

// Remove SIGKILLs every process still in the group, waits until the group
// is empty (a few seconds at most: a process in uninterruptible I/O dies
// when its I/O ends) and removes the folder. A group already gone is not an
// error, so cleanup can run any number of times.
func (g *MemoryGroup) Remove() error {
	g.mu.Lock()
	if g.peak != nil {
		g.peak.Close()
		g.peak = nil
	}
	g.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if g.h.Version == 2 {
			// cgroup.kill (kernels >= 5.14) kills without the race of a pid
			// reused between reading it and killing it.
			_ = WriteFile(filepath.Join(g.path, "cgroup.kill"), "1")
		}
		var left []int
		for _, file := range g.h.idFiles() {
			ids, err := readIDs(filepath.Join(g.path, file))
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("remove memory group: list processes of %s: %w", g.path, err)
			}
			for _, id := range ids {
				if err := unix.Kill(id, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
					return fmt.Errorf("remove memory group %s: kill process %d: %w", g.path, id, err)
				}
			}
			left = append(left, ids...)
		}
		err := unix.Rmdir(g.path)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove memory group %s (processes left: %v; child cgroups keep it busy too): %w", g.path, left, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// parseKeyed reads the "key value" lines of memory.stat, memory.events and
// memory.oom_control.
func parseKeyed(text string) (map[string]int64, error) {
	m := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("parse %q: want \"key value\"", sc.Text())
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse %q: %w", sc.Text(), err)
		}
		m[f[0]] = v
	}
	return m, sc.Err()
}

// first is the value of the first of keys present in m: v1's total_*
// counters include child cgroups, the plain ones only the group's own.
func first(m map[string]int64, keys ...string) int64 {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return 0
}

// v1Stats takes what cgroup v1's memory.stat and memory.oom_control say.
func v1Stats(stat, oomControl string) (MemoryStats, error) {
	m, err := parseKeyed(stat)
	if err != nil {
		return MemoryStats{}, fmt.Errorf("memory.stat: %w", err)
	}
	o, err := parseKeyed(oomControl)
	if err != nil {
		return MemoryStats{}, fmt.Errorf("memory.oom_control: %w", err)
	}
	return MemoryStats{
		Cache:       first(m, "total_cache", "cache"),
		Anon:        first(m, "total_rss", "rss"),
		MajorFaults: first(m, "total_pgmajfault", "pgmajfault"),
		OOMKills:    o["oom_kill"],
	}, nil
}

// v2Stats takes what cgroup v2's memory.stat and memory.events say.
func v2Stats(stat, events string) (MemoryStats, error) {
	m, err := parseKeyed(stat)
	if err != nil {
		return MemoryStats{}, fmt.Errorf("memory.stat: %w", err)
	}
	e, err := parseKeyed(events)
	if err != nil {
		return MemoryStats{}, fmt.Errorf("memory.events: %w", err)
	}
	return MemoryStats{
		Cache:       m["file"],
		Anon:        m["anon"],
		MajorFaults: m["pgmajfault"],
		Failcnt:     e["max"],
		OOMKills:    e["oom_kill"],
	}, nil
}
