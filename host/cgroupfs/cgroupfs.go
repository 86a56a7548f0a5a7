// Package cgroupfs drives the kernel's cgroup filesystems on the host: it
// finds the mounted hierarchy that carries a controller (cgroup v2 or v1),
// the cgroup folder a process is in, and makes, fills, empties and removes
// cgroup folders. Controllers' own files stay with their users: block I/O
// limits in tier/throttle, memory groups in memory.go.
//
// It sits below both tier and engine, so it imports nothing of tierbench's
// but the mount table parser.
package cgroupfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/mountinfo"
)

// Hierarchy is a mounted cgroup hierarchy.
type Hierarchy struct {
	Version int    // 1 or 2
	Mount   string // where the hierarchy is mounted, e.g. /sys/fs/cgroup/blkio
	Root    string // the cgroup shown at Mount (mountinfo's root field), usually "/"
	// Controller is the controller the hierarchy was found by. On v1 it
	// picks the hierarchy's line of /proc/<pid>/cgroup, which lists the
	// controllers each v1 hierarchy carries.
	Controller string
}

// LeafName is the child that takes the processes of a cgroup v2 parent which
// must become an inner node: v2 lets a non-root cgroup hand controllers to
// its children only while it holds no processes itself. tierbench never
// removes it, because it holds processes that are not tierbench's.
const LeafName = "tierbench-leaf"

// cgroupMounts lists this process's mounted cgroup hierarchies (v1 and v2).
func cgroupMounts() ([]mountinfo.Mount, error) {
	all, err := mountinfo.Read()
	if err != nil {
		return nil, err
	}
	return cgroupOnly(all), nil
}

// cgroupOnly keeps the cgroup and cgroup2 mounts of a mount table.
func cgroupOnly(all []mountinfo.Mount) []mountinfo.Mount {
	var out []mountinfo.Mount
	for _, m := range all {
		if m.FSType == "cgroup" || m.FSType == "cgroup2" {
			out = append(out, m)
		}
	}
	return out
}

// hasWord reports whether the space- or comma-separated list s holds w.
func hasWord(s, w string) bool {
	return slices.Contains(strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == ',' || r == '\n' || r == '\t'
	}), w)
}

// pick chooses cgroup v2 when a v2 hierarchy offers controller v2 (v2
// charges page cache and writeback to the right group), else the v1
// hierarchy mounted with v1. controllers reads a v2 folder's
// cgroup.controllers.
func pick(mounts []mountinfo.Mount, v2, v1 string, controllers func(dir string) string) (Hierarchy, bool) {
	for _, m := range mounts {
		if m.FSType == "cgroup2" && hasWord(controllers(m.Point), v2) {
			return Hierarchy{Version: 2, Mount: m.Point, Root: m.Root, Controller: v2}, true
		}
	}
	for _, m := range mounts {
		if m.FSType == "cgroup" && hasWord(m.SuperOptions, v1) {
			return Hierarchy{Version: 1, Mount: m.Point, Root: m.Root, Controller: v1}, true
		}
	}
	return Hierarchy{}, false
}

// Find finds the hierarchy that carries a controller: the cgroup v2 one
// whose cgroup.controllers lists v2Controller, else the v1 one mounted with
// v1Controller. When neither is mounted the error wraps
// errors.ErrUnsupported, so callers can replace it with their own fix.
func Find(v2Controller, v1Controller string) (Hierarchy, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return Hierarchy{}, err
	}
	h, ok := pick(mounts, v2Controller, v1Controller, func(dir string) string {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		return string(b)
	})
	if !ok {
		return Hierarchy{}, fmt.Errorf("no cgroup v2 hierarchy with the %s controller and no cgroup v1 %s hierarchy is mounted: %w",
			v2Controller, v1Controller, errors.ErrUnsupported)
	}
	return h, nil
}

// HierarchyOf finds the mounted hierarchy that holds the cgroup folder path.
// A v1 hierarchy's Controller is the first controller it is mounted with.
func HierarchyOf(path string) (Hierarchy, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return Hierarchy{}, err
	}
	best := -1
	for i, m := range mounts {
		if within(path, m.Point) && (best < 0 || len(m.Point) > len(mounts[best].Point)) {
			best = i
		}
	}
	if best < 0 {
		return Hierarchy{}, fmt.Errorf("%s is not inside a mounted cgroup hierarchy", path)
	}
	m := mounts[best]
	if m.FSType == "cgroup2" {
		return Hierarchy{Version: 2, Mount: m.Point, Root: m.Root}, nil
	}
	h := Hierarchy{Version: 1, Mount: m.Point, Root: m.Root}
	for _, o := range strings.Split(m.SuperOptions, ",") {
		if o != "rw" && o != "ro" && (!strings.Contains(o, "=") || strings.HasPrefix(o, "name=")) {
			h.Controller = o
			break
		}
	}
	return h, nil
}

// IsCgroupDir reports whether path is on a cgroup filesystem (v1 or v2), so
// that cleanup driven by a recorded path cannot act on other folders. The
// error is statfs's, e.g. ENOENT for a folder already gone.
func IsCgroupDir(path string) (bool, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return false, err
	}
	return fs.Type == unix.CGROUP_SUPER_MAGIC || fs.Type == unix.CGROUP2_SUPER_MAGIC, nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// cgroupLine picks, from /proc/<pid>/cgroup text, the cgroup path of the
// hierarchy of the given version: v2's "0::/path" or the v1 line whose
// controllers include controller.
func cgroupLine(r io.Reader, version int, controller string) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if version == 2 && parts[0] == "0" && parts[1] == "" {
			return parts[2], nil
		}
		if version == 1 && hasWord(parts[1], controller) {
			return parts[2], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if version == 2 {
		return "", errors.New("no cgroup v2 hierarchy listed")
	}
	return "", fmt.Errorf("no cgroup v1 %s hierarchy listed", controller)
}

// ProcDir is the folder of the cgroup that process (or thread) pid is in
// (pid 0 = self), or the hierarchy's mount point when that cgroup is not
// visible below it.
func (h Hierarchy) ProcDir(pid int) (string, error) {
	file := "/proc/self/cgroup"
	if pid != 0 {
		file = fmt.Sprintf("/proc/%d/cgroup", pid)
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("read cgroup of process: %w", err)
	}
	defer f.Close()
	cg, err := cgroupLine(f, h.Version, h.Controller)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	return h.dirOf(cg), nil
}

// dirOf maps a cgroup path as /proc/<pid>/cgroup shows it to its folder.
func (h Hierarchy) dirOf(cg string) string {
	if !within(cg, h.Root) {
		return h.Mount
	}
	rel := strings.TrimPrefix(filepath.Clean(cg), filepath.Clean(h.Root))
	return filepath.Join(h.Mount, rel)
}

// WriteFile writes s to a cgroup control file in a single write, as the
// kernel parses each write on its own.
func WriteFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(s))
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("write %q to %s: %w", s, path, werr)
	}
	return cerr
}

// readIDs reads a list of process or thread ids (cgroup.procs, tasks).
func readIDs(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, f := range strings.Fields(string(b)) {
		id, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Attach moves process pid, with all its threads, into the cgroup folder dir.
// Writing to cgroup.procs (rather than each thread id to v1's tasks) moves
// the whole thread group at once, so a Go program's threads, including ones
// being created meanwhile, all end up in dir.
func Attach(dir string, pid int) error {
	return WriteFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid))
}

// attachOrLeaf attaches pid to dir; a cgroup v2 folder that may not hold
// processes (it hands controllers to children) gets them in its leaf child.
func (h Hierarchy) attachOrLeaf(dir string, pid int) error {
	err := Attach(dir, pid)
	if h.Version == 2 && errors.Is(err, unix.EBUSY) {
		leaf, lerr := ensureLeaf(dir)
		if lerr != nil {
			return errors.Join(err, lerr)
		}
		return Attach(leaf, pid)
	}
	return err
}

// ensureLeaf makes the leaf child of dir.
func ensureLeaf(dir string) (string, error) {
	leaf := filepath.Join(dir, LeafName)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("create leaf cgroup %s: %w", leaf, err)
	}
	return leaf, nil
}

// gone reports an error that means the process exited meanwhile (ESRCH), or
// is a kernel thread that cannot move (EINVAL): either way nothing to move.
func gone(err error) bool {
	return errors.Is(err, unix.ESRCH) || errors.Is(err, unix.EINVAL)
}

// evacuate moves every process in dir to the first of dests that takes it
// (a destination that was removed meanwhile is skipped). On v1 it also moves
// stray threads listed in tasks but not through cgroup.procs, which happens
// when someone wrote single thread ids.
func (h Hierarchy) evacuate(dir string, dests ...string) error {
	move := func(file string, id int) error {
		var errs []error
		for _, d := range dests {
			var err error
			if file == "tasks" {
				err = WriteFile(filepath.Join(d, "tasks"), strconv.Itoa(id))
			} else {
				err = h.attachOrLeaf(d, id)
			}
			if err == nil || gone(err) {
				return nil
			}
			errs = append(errs, err)
		}
		return fmt.Errorf("move process %d out of %s: %w", id, dir, errors.Join(errs...))
	}
	for _, file := range h.idFiles() {
		ids, err := readIDs(filepath.Join(dir, file))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list processes of %s: %w", dir, err)
		}
		for _, id := range ids {
			if err := move(file, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// idFiles are the files listing a cgroup's members: v1 also lists threads
// on their own in tasks.
func (h Hierarchy) idFiles() []string {
	if h.Version == 1 {
		return []string{"cgroup.procs", "tasks"}
	}
	return []string{"cgroup.procs"}
}

// RemoveDir moves the processes of the cgroup folder dir to the first of
// dests that takes each, and removes dir. A process that exits while being
// moved can keep the cgroup busy for a moment, so it retries for a while; a
// missing folder counts as removed.
func (h Hierarchy) RemoveDir(dir string, dests ...string) error {
	deadline := time.Now().Add(3 * time.Second)
	for {
		if err := h.evacuate(dir, dests...); err != nil {
			return err
		}
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			left, _ := readIDs(filepath.Join(dir, "cgroup.procs"))
			return fmt.Errorf("remove cgroup %s (processes left: %v; child cgroups keep it busy too): %w", dir, left, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Enable makes controller required, and those of optional the parent
// offers, available to the children of the cgroup v2 folder parent (v1
// needs nothing: a v1 hierarchy carries its controllers everywhere). A
// non-root parent that holds processes refuses with EBUSY ("no internal
// processes"); its processes then move to its leaf child first, as
// container inits do. An optional controller the kernel refuses is left
// out, but a failed move is returned, since processes may be half moved.
func Enable(parent, required string, optional ...string) error {
	ctl := filepath.Join(parent, "cgroup.subtree_control")
	cur, err := os.ReadFile(ctl)
	if err != nil {
		return fmt.Errorf("read %s: %w", ctl, err)
	}
	avail, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("read controllers of %s: %w", parent, err)
	}
	if !hasWord(string(avail), required) {
		return fmt.Errorf("the %s controller is not available in %s: enable it in its parent's cgroup.subtree_control: %w", required, parent, errors.ErrUnsupported)
	}
	want := []string{required}
	for _, c := range optional {
		if hasWord(string(avail), c) {
			want = append(want, c)
		}
	}
	for i, c := range want {
		if hasWord(string(cur), c) {
			continue
		}
		err := WriteFile(ctl, "+"+c)
		if errors.Is(err, unix.EBUSY) {
			leaf, lerr := ensureLeaf(parent)
			if lerr != nil {
				return errors.Join(err, lerr)
			}
			if merr := (Hierarchy{Version: 2}).evacuate(parent, leaf); merr != nil {
				return fmt.Errorf("make room to enable %s in %s: %w", c, parent, merr)
			}
			err = WriteFile(ctl, "+"+c)
		}
		if err != nil && i == 0 {
			return fmt.Errorf("enable the %s controller for children of %s: %w", c, parent, err)
		}
	}
	return nil
}
