// Package throttle makes a block device behave like a slower one by capping
// its IOPS and bandwidth for chosen processes with the kernel's block I/O
// throttle (blk-throttle), driven through a cgroup: io.max on cgroup v2,
// blkio.throttle.* on cgroup v1. tierbench uses it to emulate a slow storage
// tier on a loop device, so a study can place a database component on a
// "slow disk" on any machine.
//
// The throttle works at the block layer, on the bios the kernel charges to
// the cgroup, so what is limited depends on who the kernel charges:
//
//   - Direct I/O (O_DIRECT) is always charged to the submitting task's
//     cgroup, on both versions: this is what the tests and fio probes use.
//   - On cgroup v1, buffered writes are charged to whoever writes the dirty
//     pages back. An fsync (or fdatasync, sync_file_range) from a task in the
//     group writes them in that task's context, so it is throttled; the
//     kernel's flusher threads, and any task outside the group, write them
//     back as the root cgroup, unthrottled. A database that relies on
//     background writeback therefore runs faster than the cap on v1.
//   - On cgroup v2 with the io and memory controllers enabled for the group,
//     writeback is charged to the cgroup that dirtied the pages (cgroup
//     writeback), so background flushes are throttled too. Create enables
//     both where it can.
//   - Reads served from the page cache never reach the block layer and are
//     never throttled; emulate a cold tier with direct I/O or by dropping
//     caches.
//
// Every cgroup a Group makes is a resource tierbench must undo if it is
// killed: record PathFor(name) in the ledger under LedgerKind before Create,
// and undo it with Remove.
package throttle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/cgroupfs"
)

// LedgerKind is the tier.Resource kind of a throttle cgroup; its Path is
// Group.Path, and tier.Undo undoes it with Remove.
const LedgerKind = "cgroup"

// Limits caps a device's I/O for a group; 0 means unlimited.
type Limits struct {
	ReadIOPS, WriteIOPS int64 // I/O operations per second
	ReadBPS, WriteBPS   int64 // bytes per second
}

// String shows the limits the way io.max does, "max" meaning unlimited.
func (l Limits) String() string {
	return fmt.Sprintf("riops=%s wiops=%s rbps=%s wbps=%s",
		maxOr(l.ReadIOPS), maxOr(l.WriteIOPS), maxOr(l.ReadBPS), maxOr(l.WriteBPS))
}

func maxOr(v int64) string {
	if v == 0 {
		return "max"
	}
	return strconv.FormatInt(v, 10)
}

func (l Limits) validate() error {
	for _, v := range []int64{l.ReadIOPS, l.WriteIOPS, l.ReadBPS, l.WriteBPS} {
		if v < 0 {
			return fmt.Errorf("throttle limits %s: a limit cannot be negative (0 means unlimited)", l)
		}
	}
	return nil
}

// Group is a cgroup that caps I/O to one block device. Processes put in it
// (AddSelf, AddPID) and the children they start afterwards are throttled.
type Group struct {
	h      cgroupfs.Hierarchy
	path   string
	dev    string // "MAJ:MIN"
	origin string // the cgroup folder this process was in before AddSelf
	closed bool
}

// Path is the group's cgroup folder: what the ledger records.
func (g *Group) Path() string { return g.path }

// Version is the cgroup version throttling through: 1 or 2.
func (g *Group) Version() int { return g.h.Version }

// Device is the throttled device as "MAJ:MIN".
func (g *Group) Device() string { return g.dev }

// errNoController says that neither cgroup version offers block I/O
// throttling, with the ways to get it.
var errNoController = fmt.Errorf("no cgroup v2 hierarchy with the io controller and no cgroup v1 blkio hierarchy is mounted: "+
	"boot with a kernel built with CONFIG_BLK_CGROUP and CONFIG_BLK_DEV_THROTTLING, then either mount cgroup v2 "+
	"(mount -t cgroup2 none /sys/fs/cgroup) with io not bound to a v1 hierarchy, or mount v1 blkio "+
	"(mkdir -p /sys/fs/cgroup/blkio && mount -t cgroup -o blkio none /sys/fs/cgroup/blkio): %w", errors.ErrUnsupported)

// findHierarchy detects the hierarchy this machine throttles block I/O in:
// cgroup v2 when it offers io (v2 also charges page-cache writeback to the
// right group), else v1 blkio.
func findHierarchy() (cgroupfs.Hierarchy, error) {
	h, err := cgroupfs.Find("io", "blkio")
	if errors.Is(err, errors.ErrUnsupported) {
		return h, errNoController
	}
	return h, err
}

// enableIO makes the io controller available to the children of the v2
// folder parent, and memory where it can: v2 needs memory to charge
// page-cache writeback to the cgroup that dirtied it, but throttling works
// without it.
func enableIO(parent string) error { return cgroupfs.Enable(parent, "io", "memory") }

// usable finds the hierarchy to throttle in, or says why there is none.
func usable() (cgroupfs.Hierarchy, error) {
	if os.Geteuid() != 0 {
		return cgroupfs.Hierarchy{}, fmt.Errorf("throttling I/O through cgroups needs root: run tierbench as root (sudo): %w", errors.ErrUnsupported)
	}
	return findHierarchy()
}

// Supported reports what is missing for throttling on this machine (not
// root, no io or blkio controller, a kernel without blk-throttle) together
// with a fix; nil means Create can work. The error wraps
// errors.ErrUnsupported.
func Supported() error {
	var errs []error
	if os.Geteuid() != 0 {
		errs = append(errs, fmt.Errorf("throttling I/O through cgroups needs root: run tierbench as root (sudo): %w", errors.ErrUnsupported))
	}
	h, err := findHierarchy()
	if err != nil {
		errs = append(errs, err)
	} else if h.Version == 1 {
		// v1 shows the throttle files at the root; v2 shows io.max only in
		// child cgroups, so Create checks it there.
		if _, err := os.Stat(filepath.Join(h.Mount, "blkio.throttle.read_iops_device")); err != nil {
			errs = append(errs, fmt.Errorf("the blkio hierarchy at %s has no throttle files: the kernel lacks CONFIG_BLK_DEV_THROTTLING: %w", h.Mount, errors.ErrUnsupported))
		}
	}
	return errors.Join(errs...)
}

// validName keeps a group name to one folder directly below the hierarchy.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\n") || name == cgroupfs.LeafName {
		return fmt.Errorf("invalid throttle group name %q: want one folder name such as tierbench-<study>-<tier>", name)
	}
	return nil
}

// PathFor is the folder Create(name, ...) makes, so that the ledger can
// record the group before it exists.
func PathFor(name string) (string, error) {
	if err := validName(name); err != nil {
		return "", err
	}
	h, err := usable()
	if err != nil {
		return "", err
	}
	return filepath.Join(h.Mount, name), nil
}

// deviceNumber resolves a block device node to the "MAJ:MIN" the throttle
// files take. blk-throttle keeps its rules per disk, so a partition is
// refused with a hint rather than left to the kernel's bare ENODEV.
func deviceNumber(dev string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		return "", fmt.Errorf("throttle device %s: %w", dev, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", fmt.Errorf("throttle device %s: not a block device (give the loop device, e.g. /dev/loop3, not its backing file or mount point)", dev)
	}
	mm := fmt.Sprintf("%d:%d", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
	if _, err := os.Stat(filepath.Join("/sys/dev/block", mm, "partition")); err == nil {
		return "", fmt.Errorf("throttle device %s (%s): is a partition, and the kernel throttles whole disks only: give the disk it is on", dev, mm)
	}
	return mm, nil
}

// Create makes a cgroup named name (e.g. "tierbench-<study>-<tier>") that
// caps I/O to the block device dev (e.g. "/dev/loop3") at lim. The group is
// created directly below the hierarchy's root, at PathFor(name); a folder
// already there (a leftover of a killed run) is an error, not reused, since
// its limits and processes are unknown. On a failure after the folder was
// made, Create removes it again.
func Create(name, dev string, lim Limits) (*Group, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	if err := lim.validate(); err != nil {
		return nil, err
	}
	h, err := usable()
	if err != nil {
		return nil, err
	}
	mm, err := deviceNumber(dev)
	if err != nil {
		return nil, err
	}
	if h.Version == 2 {
		if err := enableIO(h.Mount); err != nil {
			return nil, err
		}
	}
	g := &Group{h: h, path: filepath.Join(h.Mount, name), dev: mm}
	if err := os.Mkdir(g.path, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create throttle group: cgroup %s already exists (left by a killed tierbench? undo it with Remove or tierbench's cleanup): %w", g.path, err)
		}
		return nil, fmt.Errorf("create throttle group: %w", err)
	}
	if err := g.setLimits(lim); err != nil {
		return nil, errors.Join(fmt.Errorf("throttle %s in %s: %w", dev, g.path, err), unix.Rmdir(g.path))
	}
	// Remembered now (after enableIO may have moved this process to a
	// leaf), in case Close runs without AddSelf.
	if g.origin, err = h.ProcDir(0); err != nil {
		g.origin = h.Mount
	}
	return g, nil
}

// Limit caps one more block device for the same group: a process can be
// in only one group of a hierarchy, so a study with several throttled tiers
// keeps them all in one group.
func (g *Group) Limit(dev string, lim Limits) error {
	if err := lim.validate(); err != nil {
		return err
	}
	mm, err := deviceNumber(dev)
	if err != nil {
		return err
	}
	if err := g.setLimitsFor(mm, lim); err != nil {
		return fmt.Errorf("throttle %s in %s: %w", dev, g.path, err)
	}
	return nil
}

// setLimits writes lim for the group's device.
func (g *Group) setLimits(lim Limits) error { return g.setLimitsFor(g.dev, lim) }

// setLimitsFor writes lim for the device mm ("MAJ:MIN").
func (g *Group) setLimitsFor(mm string, lim Limits) error {
	hint := func(err error) error {
		if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("%w (is %s an attached whole-disk block device?)", err, mm)
		}
		return err
	}
	if g.h.Version == 2 {
		file := filepath.Join(g.path, "io.max")
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("no io.max in %s: the kernel lacks CONFIG_BLK_DEV_THROTTLING, or the io controller is not enabled for it: %w", g.path, errors.ErrUnsupported)
		}
		return hint(cgroupfs.WriteFile(file, mm+" "+lim.String()))
	}
	for _, r := range []struct {
		file string
		v    int64
	}{
		{"blkio.throttle.read_iops_device", lim.ReadIOPS},
		{"blkio.throttle.write_iops_device", lim.WriteIOPS},
		{"blkio.throttle.read_bps_device", lim.ReadBPS},
		{"blkio.throttle.write_bps_device", lim.WriteBPS},
	} {
		if r.v == 0 {
			continue // v1 has no rule for "unlimited": no rule is unlimited
		}
		if err := cgroupfs.WriteFile(filepath.Join(g.path, r.file), mm+" "+strconv.FormatInt(r.v, 10)); err != nil {
			return hint(err)
		}
	}
	return nil
}

// AddSelf moves this whole process, every thread, into the group, first
// remembering the cgroup it was in so that Close can put it back. Threads
// and child processes started afterwards inherit the group.
func (g *Group) AddSelf() error {
	if g.closed {
		return fmt.Errorf("add this process to %s: the group is closed", g.path)
	}
	if cur, err := g.h.ProcDir(0); err == nil && cur != g.path {
		g.origin = cur
	}
	if err := cgroupfs.Attach(g.path, os.Getpid()); err != nil {
		return fmt.Errorf("add this process to throttle group: %w", err)
	}
	return nil
}

// AddPID moves another process (a server engine, fio) with all its threads
// into the group. Children it forked before the move stay where they were,
// so move a process before it starts its workers: start it gated (e.g.
// behind `sh -c 'read _; exec prog'`), AddPID, then release it; or AddSelf
// before starting it, so it inherits the group.
func (g *Group) AddPID(pid int) error {
	if g.closed {
		return fmt.Errorf("add process %d to %s: the group is closed", pid, g.path)
	}
	if err := cgroupfs.Attach(g.path, pid); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("add process %d to throttle group: the process is gone: %w", pid, err)
		}
		return fmt.Errorf("add process %d to throttle group: %w", pid, err)
	}
	return nil
}

// Close moves every process still in the group (this one and those added
// with AddPID) back to the cgroup this process came from, or to the
// hierarchy's root if that one is gone, and removes the group. It is
// idempotent.
func (g *Group) Close() error {
	if g.closed {
		return nil
	}
	if err := g.h.RemoveDir(g.path, g.origin, g.h.Mount); err != nil {
		return fmt.Errorf("close throttle group: %w", err)
	}
	g.closed = true
	return nil
}

// Remove undoes a throttle group left by a tierbench that could not Close
// it (killed with -9): it moves the group's processes to the hierarchy's
// root and removes the folder. A missing folder is no error, so it can run
// any number of times. It refuses any path that is not a cgroup below a
// hierarchy's root, so a corrupt ledger cannot make it remove other folders.
func Remove(path string) error {
	path = filepath.Clean(path)
	isCgroup, err := cgroupfs.IsCgroupDir(path)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("remove throttle group %s: %w", path, err)
	}
	if !isCgroup {
		return fmt.Errorf("remove throttle group %s: not a cgroup folder; refusing to remove it", path)
	}
	h, err := cgroupfs.HierarchyOf(path)
	if err != nil {
		return fmt.Errorf("remove throttle group: %w", err)
	}
	if path == filepath.Clean(h.Mount) {
		return fmt.Errorf("remove throttle group %s: that is the root of a cgroup hierarchy; refusing to remove it", path)
	}
	if err := h.RemoveDir(path, h.Mount); err != nil {
		return fmt.Errorf("remove throttle group: %w", err)
	}
	return nil
}
