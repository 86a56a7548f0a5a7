package telemetry

import (
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/procfs"
)

const (
	diskstatsPath = "/proc/diskstats"
	statPath      = "/proc/stat"
	// sectorBytes is the unit of diskstats' sector counts, whatever the
	// device's real sector size (Documentation/admin-guide/iostats.rst).
	sectorBytes = 512
	mib         = 1 << 20
)

// readProc reads a whole procfs file in one read, so that its counters come
// from one instant.
func readProc(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err // *PathError already names the file
	}
	return string(b), nil
}

// diskCounters are the cumulative /proc/diskstats fields tierbench uses.
type diskCounters struct {
	reads, sectorsRead, readMs      uint64
	writes, sectorsWritten, writeMs uint64
	ioTicks                         uint64 // ms with I/O in flight
	flushes, flushMs                uint64
	hasFlush                        bool // kernel >= 5.5 counts flushes
}

// lessThan reports whether any counter of c is below o's: the device was
// reset (a loop device detached and attached again) between readings.
func (c diskCounters) lessThan(o diskCounters) bool {
	return c.reads < o.reads || c.sectorsRead < o.sectorsRead || c.readMs < o.readMs ||
		c.writes < o.writes || c.sectorsWritten < o.sectorsWritten || c.writeMs < o.writeMs ||
		c.ioTicks < o.ioTicks || (c.hasFlush && o.hasFlush && (c.flushes < o.flushes || c.flushMs < o.flushMs))
}

type diskEntry struct {
	major, minor uint32
	c            diskCounters
}

// parseDiskstats parses /proc/diskstats into entries by kernel name. A line
// is "major minor name" then 11 counters (14 fields), 15 from kernel 4.18
// (discards, 18 fields) or 17 from 5.5 (flushes, 20 fields). Shorter lines,
// the 4-counter partition format of kernels before 2.6.25, are skipped.
func parseDiskstats(text string) (map[string]diskEntry, error) {
	out := make(map[string]diskEntry)
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 14 {
			continue
		}
		var (
			nums [20]uint64
			err  error
		)
		// Field 11 (I/Os in progress) is not used: some kernels printed it
		// negative after an accounting bug, which must not lose the line.
		for _, j := range []int{0, 1, 3, 5, 6, 7, 9, 10, 12, 18, 19} {
			if j >= len(f) {
				break
			}
			if nums[j], err = strconv.ParseUint(f[j], 10, 64); err != nil {
				return nil, fmt.Errorf("parse %s line %d (%s): field %d: %w", diskstatsPath, i+1, f[2], j+1, err)
			}
		}
		out[f[2]] = diskEntry{
			major: uint32(nums[0]),
			minor: uint32(nums[1]),
			c: diskCounters{
				reads: nums[3], sectorsRead: nums[5], readMs: nums[6],
				writes: nums[7], sectorsWritten: nums[9], writeMs: nums[10],
				ioTicks:  nums[12],
				flushes:  nums[18],
				flushMs:  nums[19],
				hasFlush: len(f) >= 20,
			},
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("parse %s: no devices", diskstatsPath)
	}
	return out, nil
}

// sub is b-a for counters, 0 if the counter went backwards: a reset must
// not turn into an enormous unsigned rate.
func sub(b, a uint64) float64 {
	if b < a {
		return 0
	}
	return float64(b - a)
}

// diskRates turns two readings span apart into per-second figures.
func diskRates(a, b diskCounters, span time.Duration) DiskRates {
	sec := span.Seconds()
	if sec <= 0 {
		return DiskRates{}
	}
	reads, writes := sub(b.reads, a.reads), sub(b.writes, a.writes)
	d := DiskRates{
		ReadIOPS:  reads / sec,
		WriteIOPS: writes / sec,
		ReadMBps:  sub(b.sectorsRead, a.sectorsRead) * sectorBytes / mib / sec,
		WriteMBps: sub(b.sectorsWritten, a.sectorsWritten) * sectorBytes / mib / sec,
		UtilPct:   min(100, sub(b.ioTicks, a.ioTicks)/(sec*1000)*100),
	}
	if n := reads + writes; n > 0 {
		d.AwaitMs = (sub(b.readMs, a.readMs) + sub(b.writeMs, a.writeMs)) / n
	}
	if reads > 0 {
		d.ReadAwaitMs = sub(b.readMs, a.readMs) / reads
	}
	if writes > 0 {
		d.WriteAwaitMs = sub(b.writeMs, a.writeMs) / writes
	}
	if a.hasFlush && b.hasFlush {
		flushes := sub(b.flushes, a.flushes)
		d.FlushesPerS = flushes / sec
		if flushes > 0 {
			d.FlushAwaitMs = sub(b.flushMs, a.flushMs) / flushes
		}
	}
	return d
}

// resolveDevice maps a mount source as tier.Info.Device gives it to its
// name in /proc/diskstats. A source that is not a path ("tmpfs",
// "overlay", an NFS "host:/dir") has no block device: "" and no error.
// Symlinks are followed (/dev/mapper/x → dm-0, /dev/disk/by-uuid/…); a
// node that is not a symlink (a mapper node made without udev, a container's
// private /dev) is matched by its major:minor numbers.
func resolveDevice(dev string, stats map[string]diskEntry) (string, error) {
	if !filepath.IsAbs(dev) {
		return "", nil
	}
	kernelName := func(p string) string {
		// diskstats writes '/' in names (cciss/c0d0) as '!'.
		return strings.ReplaceAll(strings.TrimPrefix(p, "/dev/"), "/", "!")
	}
	if real, err := filepath.EvalSymlinks(dev); err == nil {
		if n := kernelName(real); has(stats, n) {
			return n, nil
		}
	}
	if n := kernelName(dev); strings.HasPrefix(dev, "/dev/") && has(stats, n) {
		return n, nil
	}
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		return "", fmt.Errorf("device %s: not in %s and cannot stat it: %w", dev, diskstatsPath, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", fmt.Errorf("device %s: not a block device", dev)
	}
	maj, mnr := unix.Major(st.Rdev), unix.Minor(st.Rdev)
	for _, n := range slices.Sorted(maps.Keys(stats)) {
		if e := stats[n]; e.major == maj && e.minor == mnr {
			return n, nil
		}
	}
	return "", fmt.Errorf("device %s (%d:%d): not in %s", dev, maj, mnr, diskstatsPath)
}

func has(stats map[string]diskEntry, name string) bool {
	_, ok := stats[name]
	return ok
}

// cpuCounters is the aggregate "cpu" line of /proc/stat, in clock ticks.
type cpuCounters struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// parseCPU reads the aggregate "cpu" line of /proc/stat. Old kernels stop
// after softirq (before 2.6.11: no steal) or even after idle; missing
// columns read as 0. Guest columns are left out: the kernel already counts
// them in user and nice.
func parseCPU(text string) (cpuCounters, error) {
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 5 {
			return cpuCounters{}, fmt.Errorf("parse %s: cpu line has %d columns, want at least 4", statPath, len(f)-1)
		}
		var v [8]uint64
		for i := 0; i < len(v) && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return cpuCounters{}, fmt.Errorf("parse %s: cpu column %d: %w", statPath, i+1, err)
			}
			v[i] = n
		}
		return cpuCounters{user: v[0], nice: v[1], system: v[2], idle: v[3],
			iowait: v[4], irq: v[5], softirq: v[6], steal: v[7]}, nil
	}
	return cpuCounters{}, fmt.Errorf("parse %s: no cpu line", statPath)
}

// cpuShares splits the time between two readings (T unset). The total is
// the sum of the clamped deltas, so shares never add up past 100 even when
// iowait steps backwards, which it can on tickless kernels.
func cpuShares(a, b cpuCounters) HostSample {
	user := sub(b.user, a.user) + sub(b.nice, a.nice)
	sys := sub(b.system, a.system) + sub(b.irq, a.irq) + sub(b.softirq, a.softirq)
	iowait := sub(b.iowait, a.iowait)
	steal := sub(b.steal, a.steal)
	total := user + sys + iowait + steal + sub(b.idle, a.idle)
	if total == 0 {
		return HostSample{}
	}
	return HostSample{CPUUserPct: user / total * 100, CPUSysPct: sys / total * 100,
		CPUIowaitPct: iowait / total * 100, CPUStealPct: steal / total * 100}
}

// cpuPct is the process's CPU time between two readings in percent of one
// core (top's convention).
func cpuPct(a, b procfs.Stat, span time.Duration, clkTck float64) float64 {
	sec := span.Seconds()
	if sec <= 0 || clkTck <= 0 {
		return 0
	}
	return (sub(b.UTime, a.UTime) + sub(b.STime, a.STime)) / clkTck / sec * 100
}

// atClkTck is the auxiliary-vector entry holding sysconf(_SC_CLK_TCK).
const atClkTck = 17

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times.
// Go has no sysconf, but the kernel hands the value to every process in its
// auxiliary vector; if that cannot be read, 100 is what every mainstream
// Linux architecture uses.
var clockTicks = sync.OnceValue(func() int64 {
	if b, err := os.ReadFile("/proc/self/auxv"); err == nil {
		const w = strconv.IntSize / 8
		word := func(p []byte) uint64 {
			if w == 8 {
				return binary.NativeEndian.Uint64(p)
			}
			return uint64(binary.NativeEndian.Uint32(p))
		}
		for i := 0; i+2*w <= len(b); i += 2 * w {
			if k, v := word(b[i:]), word(b[i+w:]); k == atClkTck && v > 0 {
				return int64(v)
			}
		}
	}
	return 100
})

// pageSize is the unit of /proc/<pid>/stat's rss field.
func pageSize() int { return os.Getpagesize() }
