package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// device is what sysfs (and ndctl) say about the block device under a tier.
type device struct {
	name         string // kernel name of the whole disk: vda, nvme0n1, loop3, pmem0
	rotational   bool
	daxCapable   bool   // /sys/block/<dev>/queue/dax: the device could do DAX
	pmemMode     string // fsdax, sector, raw (PMEM only)
	emulatedPmem bool   // PMEM carved out of DRAM with memmap= (e820)
}

// describeDevice finds the whole-disk block device behind a mount and reads
// its queue attributes. Filesystems without a block device (tmpfs, zfs,
// network filesystems) give the zero device: not rotational, no DAX.
func describeDevice(ctx context.Context, source, path string) device {
	name := diskName(source, path)
	if name == "" {
		return device{}
	}
	d := device{name: name}
	queue := filepath.Join("/sys/block", name, "queue")
	d.rotational = readSys(filepath.Join(queue, "rotational")) == "1"
	d.daxCapable = readSys(filepath.Join(queue, "dax")) == "1"
	if strings.HasPrefix(name, "pmem") {
		d.pmemMode = pmemMode(ctx, name)
		// Emulated PMEM (memmap=nn!ss) hangs off the e820_pmem platform
		// device; real NVDIMMs hang off ACPI NFIT.
		if real, err := filepath.EvalSymlinks(filepath.Join("/sys/block", name)); err == nil {
			d.emulatedPmem = strings.Contains(real, "e820")
		}
	}
	return d
}

// diskName resolves a mount to the kernel name of its whole disk, going
// through the device number rather than the name so that /dev/root,
// /dev/mapper/* and /dev/disk/by-uuid/* work too: partitions map to their
// parent disk (sda1 → sda), loop devices stay loopN.
func diskName(source, path string) string {
	var devnum uint64
	var st unix.Stat_t
	if strings.HasPrefix(source, "/dev/") && unix.Stat(source, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK {
		devnum = st.Rdev
	} else if unix.Stat(path, &st) == nil {
		// btrfs and overlay report anonymous device numbers here, which
		// have no /sys/dev/block entry: that is handled below.
		devnum = st.Dev
	} else {
		return ""
	}
	sys, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(devnum), unix.Minor(devnum)))
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		sys = filepath.Dir(sys)
	}
	return filepath.Base(sys)
}

func readSys(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// hasDAXOption reports whether the mount options force DAX for every file
// ("dax" is the old spelling of "dax=always"; "dax=inode" leaves it per file).
func hasDAXOption(options string) bool {
	for _, o := range strings.Split(options, ",") {
		if o == "dax" || o == "dax=always" {
			return true
		}
	}
	return false
}

// statxDAX asks the kernel whether a new file in dir is DAX, which is the
// ground truth whatever the mount options say. known is false when the
// kernel (before 5.8) does not report the attribute.
func statxDAX(dir string) (dax, known bool) {
	f, err := os.CreateTemp(dir, "dax-check-*")
	if err != nil {
		return false, false
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, name, unix.AT_STATX_SYNC_AS_STAT, unix.STATX_BASIC_STATS, &stx); err != nil {
		return false, false
	}
	if stx.Attributes_mask&unix.STATX_ATTR_DAX == 0 {
		return false, false
	}
	return stx.Attributes&unix.STATX_ATTR_DAX != 0, true
}

// directIOWorks reports whether O_DIRECT I/O works in dir. Opening is not
// enough (some filesystems accept the flag and fail the I/O), so it writes
// one 4 KiB page-aligned block, the block size the random jobs use.
func directIOWorks(dir string) bool {
	name := filepath.Join(dir, "odirect-check")
	defer os.Remove(name)
	fd, err := unix.Open(name, unix.O_CREAT|unix.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	// An anonymous mapping is page aligned, as O_DIRECT buffers must be.
	buf, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return false
	}
	defer unix.Munmap(buf)
	n, err := unix.Pwrite(fd, buf, 0)
	return err == nil && n == len(buf)
}

// pmemMode names the namespace mode of /dev/<name>: from `ndctl list -N`
// when ndctl is installed, else from the sysfs device that claims the
// namespace (pfn → fsdax, btt → sector, the bare namespace → raw). devdax
// namespaces have no /dev/pmem block device, so they never get here.
func pmemMode(ctx context.Context, name string) string {
	if ndctl, err := exec.LookPath("ndctl"); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, ndctl, "list", "-N").Output(); err == nil {
			if mode := ndctlMode(out, name); mode != "" {
				return mode
			}
		}
	}
	link, err := os.Readlink(filepath.Join("/sys/block", name, "device"))
	if err != nil {
		return ""
	}
	switch base := filepath.Base(link); {
	case strings.HasPrefix(base, "pfn"):
		return "fsdax"
	case strings.HasPrefix(base, "btt"):
		return "sector"
	case strings.HasPrefix(base, "namespace"):
		return "raw"
	}
	return ""
}

// ndctlMode finds the mode of block device name in `ndctl list -N` output,
// which is a JSON array, or a bare object when there is one namespace.
func ndctlMode(out []byte, name string) string {
	type namespace struct {
		Mode     string `json:"mode"`
		Blockdev string `json:"blockdev"`
	}
	var list []namespace
	if err := json.Unmarshal(out, &list); err != nil {
		var one namespace
		if json.Unmarshal(out, &one) != nil {
			return ""
		}
		list = []namespace{one}
	}
	for _, ns := range list {
		if ns.Blockdev == name {
			return ns.Mode
		}
	}
	return ""
}
