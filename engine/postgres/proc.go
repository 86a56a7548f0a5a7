package postgres

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/procfs"
)

// syncFS flushes the filesystem holding dir (syncfs(2)): one call instead
// of an fsync per copied file.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("flush %s: %w", dir, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("flush (syncfs) %s: %w", dir, err)
	}
	return nil
}

// reapCrashed cleans up after a postmaster that died on its own (killed,
// OOM) or was killed by server.Stop after a hung shutdown. Its children
// (checkpointer, walwriter, backends...) call setsid(), so the process-group
// kill of server.Stop does not reach them; they notice the postmaster's death
// and exit, but not at once. They are found by their working folder, which
// is the data folder (the postmaster's chdir, inherited), and killed; then
// the System V shared memory segment, which a clean shutdown removes, is
// removed. The Unix socket and its lock file go with the run's socket
// folder (DB.stop).
func reapCrashed(dataDir string, uid int) {
	if real, err := filepath.EvalSymlinks(dataDir); err == nil {
		dataDir = real
	}
	left := serverProcesses(dataDir, uid)
	for _, pid := range left {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = serverProcesses(dataDir, uid) {
		time.Sleep(20 * time.Millisecond)
	}
	removeSysVSegment(dataDir)
}

// serverProcesses lists the live postgres processes of user uid working in
// dataDir. Zombies do not count: they hold nothing, and the orphaned children
// of a killed postmaster become zombies of PID 1, which reaps them in its own
// time.
func serverProcesses(dataDir string, uid int) []int {
	pids, err := procfs.PIDs()
	if err != nil {
		return nil
	}
	var out []int
	for _, pid := range pids {
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		st, err := os.Stat(dir)
		if err != nil || int(st.Sys().(*syscall.Stat_t).Uid) != uid {
			continue
		}
		if comm, _ := os.ReadFile(filepath.Join(dir, "comm")); strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join(dir, "cwd")); err != nil || cwd != dataDir {
			continue
		}
		if st, err := procfs.Read(filepath.Join(dir, "stat")); err != nil || st.State == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// removeSysVSegment removes the segment named on line 7 of postmaster.pid
// ("key shmid") if no process is attached to it any more.
func removeSysVSegment(dataDir string) {
	f, err := os.Open(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if line != 7 {
			continue
		}
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			return
		}
		id, err := strconv.Atoi(fields[1])
		if err != nil {
			return
		}
		var ds unix.SysvShmDesc
		if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &ds); err != nil || ds.Nattch != 0 {
			return
		}
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		return
	}
}
