package probe

import (
	"cmp"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/mountinfo"
)

// dataFS are the filesystems that hold data worth benchmarking on. tmpfs
// counts only at /dev/shm (the one RAM tier every Linux has) and overlay only
// at / (a container's root); PMEM counts whatever its filesystem.
var dataFS = map[string]bool{
	"ext2": true, "ext3": true, "ext4": true, "xfs": true, "btrfs": true,
	"f2fs": true, "zfs": true, "bcachefs": true,
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	devID     string // major:minor
	point     string
	fsType    string
	source    string
	mountOpts string // per-mount options (rw/ro, nosuid, ...)
	superOpts string // filesystem options
}

// DefaultPaths lists a folder to probe on every writable mounted filesystem
// that could hold data, plus /dev/shm. The folder is the mount point itself
// when the user can write there; for / it is /var/tmp (or /tmp), which any
// user can write and which is usually on disk, when it is on the same
// filesystem as /. Mounts with no folder the user can write are left out:
// as root that is none of them, as a user it is most except /dev/shm.

func DefaultPaths() ([]string, error) {
	ms, err := mountinfo.Read()
	if err != nil {
		return nil, err
	}
	paths := dataPaths(mountEntries(ms), folderFor)
	for _, p := range paths {
		if p == "/dev/shm" {
			return paths, nil
		}
	}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		paths = append(paths, "/dev/shm")
	}
	return paths, nil
}

// dataPaths keeps the data filesystems among mounts and picks a folder on
// each with folder (which says "" for none). Of several mounts of one
// device (bind mounts, btrfs subvolumes) it keeps the shortest mount point;
// of several mounts on one point it keeps the last, which shadows the rest.
// Paths come out in mount-table order.
func dataPaths(mounts []mountEntry, folder func(point string) string) []string {
	lastAt := map[string]int{}
	for i, m := range mounts {
		lastAt[m.point] = i
	}
	type pick struct {
		point, path string
		order       int
	}
	byDev := map[string]pick{}
	for i, m := range mounts {
		if lastAt[m.point] != i || !isData(m) || !writable(m) || skipped(m.point) {
			continue
		}
		// The folder is chosen before de-duplicating so that a device
		// bind-mounted on a file (a container's /etc/hosts) or an unwritable
		// point does not hide a usable mount of the same device.
		p := folder(m.point)
		if p == "" {
			continue
		}
		if old, ok := byDev[m.devID]; ok && len(old.point) <= len(m.point) {
			continue
		}
		byDev[m.devID] = pick{point: m.point, path: p, order: i}
	}
	picks := make([]pick, 0, len(byDev))
	for _, p := range byDev {
		picks = append(picks, p)
	}
	// Mount order, then path, for a deterministic list.
	slices.SortFunc(picks, func(a, b pick) int {
		return cmp.Or(cmp.Compare(a.order, b.order), strings.Compare(a.path, b.path))
	})
	paths := make([]string, len(picks))
	for i, p := range picks {
		paths[i] = p.path
	}
	return paths
}

func isData(m mountEntry) bool {
	switch {
	case strings.HasPrefix(m.source, "/dev/pmem"):
		return true
	case m.fsType == "tmpfs":
		return m.point == "/dev/shm"
	case m.fsType == "overlay":
		return m.point == "/"
	}
	return dataFS[m.fsType]
}

// writable is false when either the mount or the filesystem is read-only
// (snaps, ISO images, a remounted-ro root).
func writable(m mountEntry) bool {
	return !hasOpt(m.mountOpts, "ro") && !hasOpt(m.superOpts, "ro")
}

func hasOpt(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// skipped are mount points that hold data nobody benchmarks: the boot
// partitions, and snap packages' loop mounts (read-only squashfs anyway,
// but a writable ext4 snap helper would still be noise).
func skipped(point string) bool {
	for _, p := range []string{"/boot", "/snap", "/var/snap", "/var/lib/snapd"} {
		if point == p || strings.HasPrefix(point, p+"/") {
			return true
		}
	}
	return false
}

// folderFor picks the folder to probe on the mount at point, or "".
func folderFor(point string) string {
	if point == "/" {
		var root unix.Stat_t
		if unix.Stat("/", &root) != nil {
			return ""
		}
		for _, p := range []string{"/var/tmp", "/tmp"} {
			var st unix.Stat_t
			if unix.Stat(p, &st) == nil && st.Dev == root.Dev && usableDir(p) {
				return p
			}
		}
	}
	if usableDir(point) {
		return point
	}
	return ""
}

// usableDir is a folder (not a bind-mounted file) the user can create in.
func usableDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir() && unix.Access(p, unix.W_OK|unix.X_OK) == nil
}

// mountEntries are the fields of a mount table the probe reads.
func mountEntries(ms []mountinfo.Mount) []mountEntry {
	out := make([]mountEntry, len(ms))
	for i, m := range ms {
		out[i] = mountEntry{devID: m.DevID, point: m.Point, fsType: m.FSType, source: m.Source,
			mountOpts: m.MountOptions, superOpts: m.SuperOptions}
	}
	return out
}
