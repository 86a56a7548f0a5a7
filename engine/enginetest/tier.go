package enginetest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/host/procfs"
	"github.com/tierbench/tierbench/testenv"
)

// ProcessesIn lists live processes whose working folder is one of dirs or
// under them: every server runs in its data folder (PostgreSQL's
// backends inherit the postmaster's).
func ProcessesIn(dirs map[string]string) []string {
	var out []string
	for _, p := range processes() {
		for _, d := range dirs {
			if within(p.cwd, d) {
				out = append(out, p.pid+" "+p.comm)
			}
		}
	}
	return out
}

// ProcessesNaming lists live processes whose command line names dir or
// whose working folder is under it, with their command lines: daemons
// whose configuration, mount point or folders are there (Ceph's,
// rbd-fuse).
func ProcessesNaming(dir string) []string {
	var out []string
	for _, p := range processes() {
		if strings.Contains(p.cmdline, dir) || within(p.cwd, dir) {
			out = append(out, p.pid+" "+p.cmdline)
		}
	}
	return out
}

func within(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// liveProcess is a live process as /proc shows it.
type liveProcess struct{ pid, comm, cwd, cmdline string }

// processes lists the live processes whose working folder can be read
// (not zombies, whose entry is all that is left).
func processes() []liveProcess {
	pids, _ := procfs.PIDs()
	var out []liveProcess
	for _, pid := range pids {
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		cwd, err := os.Readlink(filepath.Join(dir, "cwd"))
		if err != nil {
			continue
		}
		if st, _ := os.ReadFile(filepath.Join(dir, "stat")); strings.Contains(string(st), ") Z ") {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		out = append(out, liveProcess{pid: strconv.Itoa(pid), comm: strings.TrimSpace(string(comm)), cwd: cwd,
			cmdline: strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")})
	}
	return out
}

// NeedRootForTiers skips t unless it may mount tiers (and run servers).
func NeedRootForTiers(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root: mounts tmpfs tiers and runs the servers as their own OS users")
	}
}

// MountTmpfs mounts a tmpfs of size (mount's size=, "24m") on a new 0755
// folder under the shared folder, unmounted when t ends: a tier small
// enough to fill.
func MountTmpfs(t testing.TB, size string) string {
	t.Helper()
	dir, err := os.MkdirTemp(root(t), "tier-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0755", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Skipf(t, "cannot mount a tmpfs (%v: %s)", err, out)
	}
	forget := testenv.OnTimeout("tmpfs "+dir, func() { exec.Command("umount", "-l", dir).Run() })
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
			exec.Command("umount", "-l", dir).Run()
		}
		os.Remove(dir)
		forget()
	})
	return dir
}

// Fill writes a file in dir until the filesystem is full, then frees keep
// bytes of it.
func Fill(t testing.TB, dir string, keep int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		m, err := f.Write(buf)
		n += int64(m)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(max(n-keep, 0)); err != nil {
		t.Fatal(err)
	}
}
