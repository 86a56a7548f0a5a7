package throttle

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

	"github.com/tierbench/tierbench/tier/mountinfo"
)

// hierarchy is a mounted cgroup hierarchy that carries the block I/O
// controller: io on cgroup v2, blkio on cgroup v1.
type hierarchy struct {
	version int    // 1 or 2
	mount   string // where the hierarchy is mounted, e.g. /sys/fs/cgroup/blkio
	root    string // the cgroup shown at mount (mountinfo's root field), usually "/"
}

// leafName is the child that takes the processes of a cgroup v2 parent which
// must become an inner node: v2 lets a non-root cgroup hand controllers to
// its children only while it holds no processes itself. tierbench never
// removes it, because it holds processes that are not tierbench's.
const leafName = "tierbench-leaf"

// mountEntry is the part of one /proc/self/mountinfo line that matters here.
type mountEntry struct {
	root, point, fstype, superOpts string
}

// parseMountinfo reads /proc/<pid>/mountinfo text with the shared parser.
func parseMountinfo(r io.Reader) ([]mountEntry, error) {
	ms, err := mountinfo.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	out := make([]mountEntry, len(ms))
	for i, m := range ms {
		out[i] = mountEntry{root: m.Root, point: m.Point, fstype: m.FSType, superOpts: m.SuperOptions}
	}
	return out, nil
}

// cgroupMounts lists this process's mounted cgroup hierarchies (v1 and v2).
func cgroupMounts() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("list mounts: %w", err)
	}
	defer f.Close()
	all, err := parseMountinfo(f)
	if err != nil {
		return nil, err
	}
	var out []mountEntry
	for _, m := range all {
		if m.fstype == "cgroup" || m.fstype == "cgroup2" {
			out = append(out, m)
		}
	}
	return out, nil
}

// hasWord reports whether the space- or comma-separated list s holds w.
func hasWord(s, w string) bool {
	return slices.Contains(strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == ',' || r == '\n' || r == '\t'
	}), w)
}

// errNoController says that neither cgroup version offers block I/O
// throttling, with the ways to get it.
var errNoController = fmt.Errorf("no cgroup v2 hierarchy with the io controller and no cgroup v1 blkio hierarchy is mounted: "+
	"boot with a kernel built with CONFIG_BLK_CGROUP and CONFIG_BLK_DEV_THROTTLING, then either mount cgroup v2 "+
	"(mount -t cgroup2 none /sys/fs/cgroup) with io not bound to a v1 hierarchy, or mount v1 blkio "+
	"(mkdir -p /sys/fs/cgroup/blkio && mount -t cgroup -o blkio none /sys/fs/cgroup/blkio): %w", errors.ErrUnsupported)

// pickHierarchy chooses where to throttle: cgroup v2 when a v2 hierarchy
// offers the io controller (v2 also charges page-cache writeback to the
// right group), else the v1 blkio hierarchy. controllers reads a v2 folder's
// cgroup.controllers.
func pickHierarchy(mounts []mountEntry, controllers func(dir string) string) (hierarchy, error) {
	for _, m := range mounts {
		if m.fstype == "cgroup2" && hasWord(controllers(m.point), "io") {
			return hierarchy{version: 2, mount: m.point, root: m.root}, nil
		}
	}
	for _, m := range mounts {
		if m.fstype == "cgroup" && hasWord(m.superOpts, "blkio") {
			return hierarchy{version: 1, mount: m.point, root: m.root}, nil
		}
	}
	return hierarchy{}, errNoController
}

// findHierarchy detects the hierarchy this machine throttles block I/O in.
func findHierarchy() (hierarchy, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return hierarchy{}, err
	}
	return pickHierarchy(mounts, func(dir string) string {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		return string(b)
	})
}

// hierarchyOf finds the mounted hierarchy that holds the cgroup folder path.
func hierarchyOf(path string) (hierarchy, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return hierarchy{}, err
	}
	best := -1
	for i, m := range mounts {
		if within(path, m.point) && (best < 0 || len(m.point) > len(mounts[best].point)) {
			best = i
		}
	}
	if best < 0 {
		return hierarchy{}, fmt.Errorf("%s is not inside a mounted cgroup hierarchy", path)
	}
	m := mounts[best]
	h := hierarchy{version: 1, mount: m.point, root: m.root}
	if m.fstype == "cgroup2" {
		h.version = 2
	}
	return h, nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// cgroupLine picks, from /proc/<pid>/cgroup text, the cgroup path of the
// hierarchy of the given version: v2's "0::/path" or the v1 line whose
// controllers include blkio.
func cgroupLine(r io.Reader, version int) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if version == 2 && parts[0] == "0" && parts[1] == "" {
			return parts[2], nil
		}
		if version == 1 && hasWord(parts[1], "blkio") {
			return parts[2], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no cgroup v%d block I/O hierarchy listed", version)
}

// procDir is the folder of the cgroup that process pid is in (pid 0 = self),
// or the hierarchy's mount point when that cgroup is not visible below it.
func (h hierarchy) procDir(pid int) (string, error) {
	file := "/proc/self/cgroup"
	if pid != 0 {
		file = fmt.Sprintf("/proc/%d/cgroup", pid)
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("read cgroup of process: %w", err)
	}
	defer f.Close()
	cg, err := cgroupLine(f, h.version)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	return h.dirOf(cg), nil
}

// dirOf maps a cgroup path as /proc/<pid>/cgroup shows it to its folder.
func (h hierarchy) dirOf(cg string) string {
	if !within(cg, h.root) {
		return h.mount
	}
	rel := strings.TrimPrefix(filepath.Clean(cg), filepath.Clean(h.root))
	return filepath.Join(h.mount, rel)
}

// writeFile writes s to a cgroup control file in a single write, as the
// kernel parses each write on its own.
func writeFile(path, s string) error {
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

// attach moves process pid, with all its threads, into the cgroup folder dir.
// Writing to cgroup.procs (rather than each thread id to v1's tasks) moves
// the whole thread group at once, so a Go program's threads, including ones
// being created meanwhile, all end up in dir.
func attach(dir string, pid int) error {
	return writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid))
}

// attachOrLeaf attaches pid to dir; a cgroup v2 folder that may not hold
// processes (it hands controllers to children) gets them in its leaf child.
func (h hierarchy) attachOrLeaf(dir string, pid int) error {
	err := attach(dir, pid)
	if h.version == 2 && errors.Is(err, unix.EBUSY) {
		leaf, lerr := ensureLeaf(dir)
		if lerr != nil {
			return errors.Join(err, lerr)
		}
		return attach(leaf, pid)
	}
	return err
}

// ensureLeaf makes the leaf child of dir.
func ensureLeaf(dir string) (string, error) {
	leaf := filepath.Join(dir, leafName)
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
func (h hierarchy) evacuate(dir string, dests ...string) error {
	move := func(file string, id int) error {
		var errs []error
		for _, d := range dests {
			var err error
			if file == "tasks" {
				err = writeFile(filepath.Join(d, "tasks"), strconv.Itoa(id))
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
	files := []string{"cgroup.procs"}
	if h.version == 1 {
		files = append(files, "tasks")
	}
	for _, file := range files {
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

// removeDir evacuates the cgroup folder dir into dests and removes it. A
// process that exits while being moved can keep the cgroup busy for a
// moment, so it retries for a while; a missing folder counts as removed.
func (h hierarchy) removeDir(dir string, dests ...string) error {
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

// enableIO makes the io controller (and, best effort, memory, which v2
// needs to charge page-cache writeback to the cgroup that dirtied it)
// available to the children of the v2 folder parent. A non-root parent that
// holds processes refuses with EBUSY ("no internal processes"); its
// processes then move to a leaf child first, as container inits do.
func enableIO(parent string) error {
	ctl := filepath.Join(parent, "cgroup.subtree_control")
	cur, err := os.ReadFile(ctl)
	if err != nil {
		return fmt.Errorf("read %s: %w", ctl, err)
	}
	avail, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("read controllers of %s: %w", parent, err)
	}
	if !hasWord(string(avail), "io") {
		return fmt.Errorf("the io controller is not available in %s: enable it in its parent's cgroup.subtree_control: %w", parent, errors.ErrUnsupported)
	}
	want := []string{"io"}
	if hasWord(string(avail), "memory") {
		want = append(want, "memory")
	}
	for i, c := range want {
		if hasWord(string(cur), c) {
			continue
		}
		err := writeFile(ctl, "+"+c)
		if errors.Is(err, unix.EBUSY) {
			leaf, lerr := ensureLeaf(parent)
			if lerr != nil {
				return errors.Join(err, lerr)
			}
			if merr := (hierarchy{version: 2}).evacuate(parent, leaf); merr != nil {
				return fmt.Errorf("make room to enable %s in %s: %w", c, parent, merr)
			}
			err = writeFile(ctl, "+"+c)
		}
		if err != nil && i == 0 {
			return fmt.Errorf("enable the io controller for children of %s: %w", parent, err)
		}
		// memory is only for writeback attribution: throttling works without it.
	}
	return nil
}
