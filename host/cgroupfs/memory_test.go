package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
)

// These tests make real memory cgroups below <mount>/tierbench and run real
// processes in them; they skip where there is no memory controller or no root.

func needMemory(t *testing.T) Hierarchy {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "memory cgroups need root")
	}
	h, err := FindMemory()
	if err != nil {
		testenv.Skip(t, err)
	}
	return h
}

// newMemoryGroup makes a group named after the test, removed at its end.
func newMemoryGroup(t *testing.T, limit int64) *MemoryGroup {
	t.Helper()
	g, err := CreateMemory(fmt.Sprintf("test-%d-%s", os.Getpid(), t.Name()), limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
	})
	return g
}

// start runs path with args in g through Command, reaped at the test's end.
func start(t *testing.T, g *MemoryGroup, cred *syscall.Credential, path string, args ...string) *exec.Cmd {
	t.Helper()
	name, argv := g.Command(path, args)
	cmd := exec.Command(name, argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if stderr.Len() > 0 {
			t.Logf("%s: stderr: %s", path, stderr.String())
		}
	})
	return cmd
}

// procs reads the group's cgroup.procs.
func procs(t *testing.T, g *MemoryGroup) []int {
	t.Helper()
	ids, err := readIDs(filepath.Join(g.Path(), "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// waitProcs waits until the group holds at least n processes, pid among
// them: the shell joins the group a moment after it started.
func waitProcs(t *testing.T, g *MemoryGroup, pid, n int) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ids := procs(t, g)
		if slices.Contains(ids, pid) && len(ids) >= n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not in %s (cgroup.procs: %v, want %d processes)", pid, g.Path(), ids, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitKilled waits (bounded) for cmd to end and reports whether SIGKILL ended it.
func waitKilled(t *testing.T, cmd *exec.Cmd, within time.Duration) bool {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(within):
		t.Fatalf("%s still running after %v", cmd.Path, within)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func TestCreateMemoryAndCommand(t *testing.T) {
	h := needMemory(t)
	const limit = 64 << 20
	g := newMemoryGroup(t, limit)
	if g.Limit() != limit || filepath.Dir(g.Path()) != filepath.Join(h.Mount, "tierbench") {
		t.Errorf("Limit %d, Path %s; want %d in %s/tierbench", g.Limit(), g.Path(), limit, h.Mount)
	}
	files := map[string]string{"memory.max": strconv.Itoa(limit), "memory.swap.max": "0"}
	if h.Version == 1 {
		files = map[string]string{"memory.limit_in_bytes": strconv.Itoa(limit), "memory.memsw.limit_in_bytes": strconv.Itoa(limit)}
	}
	for f, want := range files {
		b, err := os.ReadFile(filepath.Join(g.Path(), f))
		if errors.Is(err, os.ErrNotExist) && f != "memory.max" && f != "memory.limit_in_bytes" {
			continue // no swap accounting
		}
		if got := strings.TrimSpace(string(b)); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %s", f, got, err, want)
		}
	}

	sleeper := start(t, g, nil, "/bin/sleep", "30")
	waitProcs(t, g, sleeper.Process.Pid, 1)
	dir, err := h.ProcDir(sleeper.Process.Pid)
	if err != nil || dir != g.Path() {
		t.Errorf("sleeper's cgroup is %s (%v), want %s", dir, err, g.Path())
	}
	// The shell joins the group, then execs sleep in place.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", sleeper.Process.Pid))
		if strings.HasSuffix(exe, "sleep") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group's process runs %s, want sleep (the shell execs it)", exe)
		}
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cgroup v%d: %+v", h.Version, st)
	if st.Usage <= 0 || st.Usage > limit || st.Peak != 0 && st.Peak < st.Usage {
		t.Errorf("stats of a group holding sleep: %+v", st)
	}
	if err := g.ResetPeak(); err != nil {
		t.Error(err)
	}
	if _, err := g.Stats(); err != nil {
		t.Error(err)
	}
}

// TestCommandArguments checks that arguments reach the program as given,
// none reparsed by the shell that joins the group.
func TestCommandArguments(t *testing.T) {
	needMemory(t)
	g := newMemoryGroup(t, 64<<20)
	args := []string{"a b", `it's "quoted"`, "$HOME", "", "*", `back\slash`, "-n", "semi;colon && echo no"}
	name, argv := g.Command("/bin/sh", append([]string{"-c", `grep -c ":/tierbench/" /proc/self/cgroup; printf '<%s>' "$@"`, "zero"}, args...))
	out, err := exec.Command(name, argv...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "1\n"
	for _, a := range args {
		want += "<" + a + ">"
	}
	if string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
}

func TestOOMKill(t *testing.T) {
	h := needMemory(t)
	tail, err := exec.LookPath("tail")
	if err != nil {
		testenv.Skip(t, "tail not installed")
	}
	g := newMemoryGroup(t, 64<<20)
	// tail buffers /dev/zero's endless line until the limit stops it.
	cmd := start(t, g, nil, tail, "/dev/zero")
	if !waitKilled(t, cmd, 60*time.Second) {
		t.Errorf("tail /dev/zero ended with %v, want killed by the kernel", cmd.ProcessState)
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cgroup v%d after the OOM kill: %+v", h.Version, st)
	oomKillCounted := true
	if h.Version == 1 {
		b, _ := os.ReadFile(filepath.Join(g.Path(), "memory.oom_control"))
		oomKillCounted = strings.Contains(string(b), "oom_kill ")
	}
	if oomKillCounted && st.OOMKills == 0 || !oomKillCounted && st.Failcnt == 0 {
		t.Errorf("after an OOM kill: OOMKills %d, Failcnt %d; want OOMKills > 0 (Failcnt > 0 where the kernel counts no OOM kills)", st.OOMKills, st.Failcnt)
	}
	if st.Peak != 0 && st.Peak < 60<<20 {
		t.Errorf("Peak %d, want near the 64 MiB limit", st.Peak)
	}
}

func TestDelegate(t *testing.T) {
	h := needMemory(t)
	const nobody = 65534
	g := newMemoryGroup(t, 64<<20)
	if err := g.Delegate(nobody, nobody); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(g.Path(), "cgroup.procs"), &st); err != nil || st.Uid != nobody || st.Gid != nobody {
		t.Fatalf("cgroup.procs owned by %d:%d (%v), want %d:%d", st.Uid, st.Gid, err, nobody, nobody)
	}
	if h.Version == 2 {
		t.Skip("cgroup v2 also wants write access to the common ancestor's cgroup.procs, which Delegate does not grant")
	}
	cmd := start(t, g, &syscall.Credential{Uid: nobody, Gid: nobody}, "/bin/sleep", "30")
	waitProcs(t, g, cmd.Process.Pid, 1)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil || !strings.Contains(string(status), "\nUid:\t65534\t") {
		t.Errorf("the process in the group does not run as nobody (%v)", err)
	}
}

func TestRemoveKillsAndRemoves(t *testing.T) {
	needMemory(t)
	g := newMemoryGroup(t, 64<<20)
	// The shell forks a sleeper after joining: it is in the group too.
	cmd := start(t, g, nil, "/bin/sh", "-c", "sleep 30 & exec sleep 31")
	ids := waitProcs(t, g, cmd.Process.Pid, 2)
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("group folder %s still there after Remove: %v", g.Path(), err)
	}
	if !waitKilled(t, cmd, 5*time.Second) {
		t.Errorf("the group's process ended with %v, want SIGKILL", cmd.ProcessState)
	}
	for _, id := range ids {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", id)); err == nil {
			if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] != "Z" {
				t.Errorf("process %d of the removed group is still running (state %s)", id, f[0])
			}
		}
	}
	if err := g.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}

func TestCreateMemoryExisting(t *testing.T) {
	needMemory(t)
	g := newMemoryGroup(t, 64<<20)
	_, err := CreateMemory(filepath.Base(g.Path()), 32<<20)
	if err == nil || !errors.Is(err, os.ErrExist) || !strings.Contains(err.Error(), "cleanup") {
		t.Errorf("CreateMemory on an existing group: %v; want an error that says cleanup undoes it", err)
	}
	if _, err := os.Stat(g.Path()); err != nil {
		t.Errorf("the existing group was touched: %v", err)
	}
	if _, err := CreateMemory("a/b", 1<<20); err == nil {
		t.Error("name a/b accepted")
	}
}

func TestOpenMemory(t *testing.T) {
	h := needMemory(t)
	g := newMemoryGroup(t, 64<<20)
	o, err := OpenMemory(g.Path() + "/")
	if err != nil {
		t.Fatal(err)
	}
	if o.Path() != g.Path() || o.Limit() != g.Limit() {
		t.Errorf("OpenMemory: %s with limit %d, want %s with %d", o.Path(), o.Limit(), g.Path(), g.Limit())
	}
	if _, err := o.Stats(); err != nil {
		t.Error(err)
	}
	for _, p := range []string{t.TempDir(), h.Mount, filepath.Join(h.Mount, "tierbench")} {
		if _, err := OpenMemory(p); err == nil {
			t.Errorf("OpenMemory(%s) accepted a folder that is no memory group", p)
		}
	}
	if err := o.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenMemory(g.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenMemory of a removed group: %v, want os.ErrNotExist", err)
	}
}

func TestParseMemoryFiles(t *testing.T) {
	const v1Stat = "cache 4096\nrss 8192\npgmajfault 1\ntotal_cache 1048576\ntotal_rss 2097152\ntotal_pgmajfault 7\n"
	const v2Stat = "anon 2097152\nfile 1048576\nkernel 40960\npgfault 300\npgmajfault 9\n"
	cases := []struct {
		name    string
		v       int
		a, b    string
		want    MemoryStats
		wantErr bool
	}{
		{"v1 hierarchical totals", 1, v1Stat, "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
			MemoryStats{Cache: 1 << 20, Anon: 2 << 20, MajorFaults: 7, OOMKills: 2}, false},
		{"v1 without totals, kernel before 4.13", 1, "cache 4096\nrss 8192\npgmajfault 1\n", "oom_kill_disable 0\nunder_oom 0\n",
			MemoryStats{Cache: 4096, Anon: 8192, MajorFaults: 1}, false},
		{"v2", 2, v2Stat, "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n",
			MemoryStats{Cache: 1 << 20, Anon: 2 << 20, MajorFaults: 9, Failcnt: 12, OOMKills: 1}, false},
		{"v2 empty events", 2, v2Stat, "", MemoryStats{Cache: 1 << 20, Anon: 2 << 20, MajorFaults: 9}, false},
		{"bad number", 1, "cache x\n", "", MemoryStats{}, true},
		{"three fields", 2, v2Stat, "max 1 2\n", MemoryStats{}, true},
	}
	for _, c := range cases {
		var got MemoryStats
		var err error
		if c.v == 1 {
			got, err = v1Stats(c.a, c.b)
		} else {
			got, err = v2Stats(c.a, c.b)
		}
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v (error %v)", c.name, got, err, c.want, c.wantErr)
		}
	}
}
