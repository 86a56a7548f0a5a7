// Package probe characterises the storage behind a tier's folder: the facts
// the kernel knows (filesystem, device, rotational, DAX, PMEM mode) and what
// fio measures there (random 4k IOPS and latency at queue depth 1 and 32,
// sequential bandwidth, and fdatasync latency).
//
// The measurements exist so that a study's results can be read against the
// raw capability of each tier: an engine that is slow on a tier whose sync
// ceiling is 300 commits/s is limited by the storage, not by its code.
//
// For emulated tiers it also measures the FUSE layer's own cost on this
// machine (Floor: no emulated tier is faster), compares a tier emulating
// a device profile with the profile, figure by figure (Fidelity), and
// turns a probe of a real device into a profile (ProfileOf).
package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// Latency is a pair of latency percentiles in microseconds. For I/O jobs it
// is fio's completion latency (clat_ns), which for libaio leaves out the
// time to submit; fio's percentiles come from log-linear buckets, so they
// are exact to a few percent, not to the nanosecond.
type Latency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// IOResult is what one fio job measured.
type IOResult struct {
	IOPS float64 `json:"iops"`
	Lat  Latency `json:"lat_us"`
}

// Fio holds the fio measurements of one tier.
type Fio struct {
	RandReadQD1   IOResult `json:"randread_qd1"`
	RandReadQD32  IOResult `json:"randread_qd32"`
	RandWriteQD1  IOResult `json:"randwrite_qd1"`
	RandWriteQD32 IOResult `json:"randwrite_qd32"`
	// SeqReadMBps and SeqWriteMBps are in MB/s (10^6 bytes per second).
	SeqReadMBps  float64 `json:"seqread_mbps"`
	SeqWriteMBps float64 `json:"seqwrite_mbps"`
	// FsyncLat is the latency of the fdatasync call alone after a 4k write.
	FsyncLat Latency `json:"fsync_lat_us"`
	// SyncCeilingPerS is 1e6 / FsyncLat.P50: the most synced commits per
	// second a single writer can get, whatever the engine does.
	SyncCeilingPerS float64 `json:"sync_ceiling_per_s"`
	// FsyncAtOnce is the fdatasync latency with several writers syncing
	// at once (Options.SyncsAtOnce); absent unless asked.
	FsyncAtOnce []SyncsAtOnce `json:"fsync_at_once,omitempty"`
	// Direct says O_DIRECT was used, so reads and writes reached the device
	// rather than the page cache.
	Direct bool `json:"direct"`
	// Note explains anything that makes the numbers mean less than they seem.
	Note       string `json:"note,omitempty"`
	FioVersion string `json:"fio_version"`
}

// SyncsAtOnce is the fdatasync latency while Syncs writers, each on a
// file of its own, write 4 KiB and fdatasync at once.
type SyncsAtOnce struct {
	Syncs int     `json:"syncs"`
	Lat   Latency `json:"lat_us"`
}

// Tier is one probed path.
type Tier struct {
	Path         string `json:"path"`
	FSType       string `json:"fs_type"`
	MountOptions string `json:"mount_options"`
	Device       string `json:"device"`
	BackingFile  string `json:"backing_file,omitempty"`
	Rotational   bool   `json:"rotational"`
	DAX          bool   `json:"dax"`
	Emulated     bool   `json:"emulated"`
	Durable      bool   `json:"durable"`
	PmemMode     string `json:"pmem_mode,omitempty"`
	// AtomicWrite states what the device reports of its atomic writes
	// (tier.DeviceAtomicWrite): a unit it promises, or its logical block
	// as a fact, not a promise.
	AtomicWrite string `json:"atomic_write,omitempty"`
	Fio         *Fio   `json:"fio,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Options tunes a probe. The zero value is the thorough default (1 GiB test
// file, 10 s per job: about 80 s per tier plus laying out the file).
type Options struct {
	// Quick keeps the whole probe of one tier under about 30 s (256 MiB test
	// file, 2 s per job) on anything faster than a slow USB stick.
	Quick bool
	// Size of the test file in bytes; 0 picks the default. It is shrunk to
	// half the free space so a small /dev/shm does not fail the probe.
	Size int64
	// Runtime of each timed job; 0 picks the default.
	Runtime time.Duration
	// FioPath is the fio binary; empty means "fio" on $PATH.
	FioPath string
	// SyncDelays, when set, runs fio under them (a tier whose latency is
	// applied at the sync calls, package syncdelay): fio meets the tier as
	// the engine does.
	SyncDelays syncdelay.Rules
	// SyncsAtOnce, when set, also measures the fsync latency with that
	// many writers syncing at once, each on a file of its own (Fio's
	// FsyncAtOnce): for a profile's fsync_at_once.
	SyncsAtOnce []int
}

// ProfileSyncsAtOnce are the writer counts a saved profile measures its
// fsync at, beside the one writer of its latency.fsync.
var ProfileSyncsAtOnce = []int{2, 4, 8}

// ErrNoFio is returned (wrapped) when the fio binary cannot be found.
var ErrNoFio = errors.New("fio is not installed: apt-get install fio")

// ErrNotStorage is returned (wrapped) for a path on a pseudo filesystem
// (proc, sysfs, cgroup, ...), which no probe can measure.
var ErrNotStorage = errors.New("not storage: choose a folder on real storage or /dev/shm")

// Available reports whether fio can be found, so a study or a probe that
// needs it is refused before anything is created rather than failing after.
func Available() error {
	_, err := findFio("")
	return err
}

const (
	defaultSize    = 1 << 30
	defaultRuntime = 10 * time.Second
	quickSize      = 256 << 20
	quickRuntime   = 2 * time.Second
	// minSize is the smallest test file worth measuring: below it, random
	// I/O stays inside caches of any device.
	minSize = 4 << 20
)

func (o Options) size() int64 {
	switch {
	case o.Size > 0:
		return o.Size
	case o.Quick:
		return quickSize
	}
	return defaultSize
}

func (o Options) runtime() time.Duration {
	switch {
	case o.Runtime > 0:
		return o.Runtime
	case o.Quick:
		return quickRuntime
	}
	return defaultRuntime
}

// Probe describes the storage under path and measures it with fio in a fresh
// folder inside path, which is removed afterwards whatever happens. path
// must be an existing writable folder. On failure the returned Tier still
// carries the facts found so far, with Error set to the returned error's text
// so that a list of tiers can be reported even when some fail.
func Probe(ctx context.Context, path string, opt Options) (Tier, error) {
	t := Tier{Path: path}
	fail := func(err error) (Tier, error) {
		err = fmt.Errorf("probe %s: %w", path, err)
		t.Error = err.Error()
		return t, err
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	info, err := tier.Inspect(path, path)
	if err != nil {
		return fail(err)
	}
	if tier.PseudoFS(info.FSType) {
		// Never measure (or write into) a kernel interface: /proc, /sys.
		t.FSType, t.Durable = info.FSType, false
		return fail(fmt.Errorf("%s is on %s, a kernel interface that holds no data: %w", path, info.FSType, ErrNotStorage))
	}
	t.FSType, t.MountOptions, t.Device = info.FSType, info.MountOptions, info.Device
	t.BackingFile, t.Durable, t.Emulated = info.BackingFile, info.Durable, info.Emulated
	dev := describeDevice(ctx, info.Device, path)
	t.Rotational = dev.rotational
	t.DAX = hasDAXOption(info.MountOptions)
	t.PmemMode = dev.pmemMode
	t.Emulated = t.Emulated || dev.emulatedPmem
	t.AtomicWrite = tier.DeviceAtomicWrite(info.Device)

	fioBin, err := findFio(opt.FioPath)
	if err != nil {
		return fail(err)
	}
	if st, err := os.Stat(path); err != nil {
		return fail(err)
	} else if !st.IsDir() {
		return fail(fmt.Errorf("%s is not a folder", path))
	}
	dir, err := os.MkdirTemp(path, ".tierbench-probe-*")
	if err != nil {
		return fail(fmt.Errorf("create scratch folder: %w", err))
	}
	defer os.RemoveAll(dir)

	var notes []string
	if dax, known := statxDAX(dir); known {
		// The kernel's per-file answer beats the mount option: with
		// dax=inode only flagged files are DAX.
		t.DAX = dax
	}
	if dev.daxCapable && !t.DAX {
		notes = append(notes, "the device supports DAX but files here are not DAX (mount with -o dax=always)")
	}
	if !info.Durable && info.Note != "" {
		notes = append(notes, info.Note)
	}
	size, err := fitSize(dir, opt.size())
	if err != nil {
		return fail(err)
	}
	if size < opt.size()&^(1<<20-1) {
		notes = append(notes, fmt.Sprintf("test file shrunk to %d MiB to fit the free space", size>>20))
	}
	r := &runner{fio: fioBin, dir: dir, size: size, runtime: opt.runtime(), direct: directIOWorks(dir), syncs: opt.SyncDelays, atOnce: opt.SyncsAtOnce}
	// libaio is asynchronous only for O_DIRECT on a block device; on tmpfs
	// or a DAX file io_submit does the copy inline, so 32 queued requests
	// would run one after another. 32 threads measure what 32 concurrent
	// requesters really get there.
	switch {
	case !r.direct:
		notes = append(notes, "O_DIRECT is not supported here; buffered I/O measured "+
			"(reads come from the page cache), qd32 is 32 threads doing psync")
	case dev.name == "" || t.DAX:
		notes = append(notes, "qd32 is 32 threads doing psync: libaio would run synchronously here")
	case !hasEngine(ctx, fioBin, "libaio"):
		notes = append(notes, "fio has no libaio engine; qd32 is 32 threads doing psync")
	default:
		r.libaio = true
	}
	f, err := r.measure(ctx)
	if err != nil {
		return fail(err)
	}
	if f.Note != "" {
		notes = append(notes, f.Note)
	}
	f.Note = strings.Join(notes, "; ")
	t.Fio = f
	return t, nil
}

// fitSize shrinks want to half the free space in dir, rounded down to whole
// MiB (O_DIRECT needs aligned sizes), and refuses to shrink below minSize:
// a tiny file would measure caches, not the storage.
func fitSize(dir string, want int64) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	if want < 1<<20 {
		return 0, fmt.Errorf("test file size %d is below 1 MiB, the sequential jobs' block size", want)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	size := min(want, free/2) &^ (1<<20 - 1)
	if size < min(want&^(1<<20-1), minSize) {
		return 0, fmt.Errorf("only %d MiB free in %s: fio needs at least %d MiB for its test file",
			free>>20, dir, 2*minSize>>20)
	}
	return size, nil
}
