package searchbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tierbench/tierbench/driver"
)

// Both tools send their requests from Thespian actor processes, which
// Thespian starts as a daemon: a new session, forked twice, so neither the
// tool's process group nor its children hold them, and they would outlive
// a tool that was killed. The tool therefore runs as the first process of a
// PID namespace of its own, with its own /proc (the tools refuse to start
// when they see another of their processes, and without it they would see
// the host's), through util-linux's unshare: the daemon's processes are
// reparented to the tool, and when it exits, or is killed with tierbench
// (unshare's parent-death signal, passed on by --kill-child), the kernel
// kills every process left in the namespace.

// unshareArgs are the namespaces: as root, a PID and a mount namespace;
// else inside a user namespace that maps the caller to root.
var unshareArgs = []string{"--pid", "--fork", "--mount-proc", "--kill-child"}

var (
	containOnce sync.Once
	containWith []string // unshare and its arguments, or nil
)

// containment returns the command line prefix that runs a tool in a PID
// namespace of its own, or nil where this process cannot make one (no
// unshare, or no unprivileged user namespaces): such a tool is stopped
// through its process group only, and a killed tool may leave its actors.
func containment() []string {
	containOnce.Do(func() {
		path, err := exec.LookPath("unshare")
		if err != nil {
			return
		}
		args := unshareArgs
		if os.Geteuid() != 0 {
			args = append([]string{"--user", "--map-root-user"}, args...)
		}
		if exec.Command(path, append(args, "--", "true")...).Run() == nil {
			containWith = append([]string{path}, args...)
		}
	})
	return containWith
}

// treePoll is how often watchTree looks for new processes.
const treePoll = 500 * time.Millisecond

// watchTree tells w of each process below root (the tool's actors) as it
// appears, until stop is closed, so that their CPU counts as the load
// generator's: the tool's own process only coordinates them. A process
// seen only after it exited is missed, as is what one used after its last
// reading; the actors live the whole run.
func watchTree(w driver.LoadWatch, name string, root int, stop <-chan struct{}) (done <-chan struct{}) {
	ch := make(chan struct{})
	if w == nil {
		close(ch)
		return ch
	}
	go func() {
		defer close(ch)
		seen := map[int]bool{root: true}
		t := time.NewTicker(treePoll)
		defer t.Stop()
		for {
			for _, pid := range descendants(root) {
				if !seen[pid] {
					seen[pid] = true
					w.Started(name, pid)
				}
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return ch
}

// descendants lists the processes below pid, from the kernel's lists of
// each thread's children.
func descendants(pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		for _, t := range tasks {
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "task", t.Name(), "children"))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out
}
