// Package emulate makes a folder behave like slower storage: it serves a
// passthrough (loopback) FUSE filesystem of a backing folder from inside the
// tierbench process and delays every read, write and fsync that reaches it.
//
// Tierbench uses it for tiers that stand for storage the machine does not
// have (a SATA SSD, an HDD, network block storage): the data lives on a real
// folder, and the FUSE layer adds the device's latency on top of the backing
// folder's own cost.
//
// # What each latency applies to
//
// The FUSE mount keeps the kernel page cache, as any local filesystem on a
// real device would, and runs without the FUSE writeback cache. So:
//
//   - Write applies to every write(2)/pwrite(2) of an application: without
//     the writeback cache each write goes to the server synchronously
//     (write-through), split into FUSE WRITE requests of at most 1 MiB, and
//     each request waits Write once. Page-cache writeback of shared writable
//     mmaps also arrives as WRITE requests and is delayed the same way.
//   - Read applies to reads that miss the mount's page cache and reach the
//     server: first reads of data, kernel readahead (one delay per readahead
//     request, up to 1 MiB, not per read(2)), mmap page faults, and all reads
//     of files opened with O_DIRECT. A re-read of cached data costs nothing,
//     as on a real device. Dropping caches (vm.drop_caches, fadvise
//     DONTNEED) makes reads pay again.
//   - Fsync applies to fsync(2) and fdatasync(2) of files and of folders.
//
// Metadata operations (lookup, stat, create, mkdir, rename, unlink, readdir,
// fallocate, truncate) are passed through without delay: they are not what
// the emulated devices are slower at in a way the benchmarks measure, and
// FUSE already adds a round trip to each.
//
// # Caveats that follow from FUSE
//
//   - Every delayed operation also pays FUSE's own round trip and the
//     sleep's overshoot: about 0.1 to 0.3 ms on a 2-core VM, so a tier
//     configured below about 1 ms comes out noticeably slower than asked;
//     the probe's fio run is what tells the tier's real latency.
//   - The kernel holds a FUSE file's inode lock for the whole of an fsync,
//     so fsyncs on one file, and writes to a file while it is being
//     fsynced, wait for each other (ext4 lets them overlap). Operations on
//     different files are delayed concurrently.
//   - Readahead and writeback requests are asynchronous; the kernel keeps at
//     most 12 of them in flight per mount (FUSE max_background).
//   - sync_file_range(2) and syncfs(2) reach no server (writes already went
//     through), so they cost nothing here.
//   - The backing folder must not be changed except through the mount while
//     it is mounted: the mount keeps its page cache across opens and does not
//     invalidate it when the backing file changes underneath.
package emulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// fsSubtype is the FUSE subtype; the kernel shows it as "fuse.<subtype>".
const fsSubtype = "tierbench-latency"

// FSName is the filesystem type that /proc/self/mountinfo shows for an
// emulated tier, so tierbench can tell an emulated tier from a real one.
const FSName = "fuse." + fsSubtype

// Latency is what each operation waits before it is passed through.
type Latency struct {
	Read, Write, Fsync time.Duration
}

// fsyncFdatasync is FUSE_FSYNC_FDATASYNC: the kernel sets it in FsyncIn's
// flags when the caller used fdatasync(2) rather than fsync(2).
const fsyncFdatasync = 1

// closeWait bounds how long Close waits for the server after a lazy unmount
// of a mount that was still in use.
const closeWait = 5 * time.Second

// FS is a mounted emulated tier.
type FS struct {
	mountPoint string
	server     *fuse.Server

	once     sync.Once
	closeErr error
}

// Mount serves a passthrough (loopback) FUSE filesystem of backing at
// mountPoint, in this process, delaying every read, write and
// fsync/fdatasync by lat (see the package doc for what each applies to).
// mountPoint must be an existing empty folder, outside backing.
//
// Tierbench records the mount point in its ledger as a KindMount resource
// before calling Mount: if the process dies, the kernel keeps a dead mount
// ("transport endpoint is not connected") that tier.Undo removes with a
// plain or lazy unmount.
//
// As root the mount is made directly with mount(2), so fusermount is not
// needed; otherwise go-fuse falls back to fusermount3.
func Mount(backing, mountPoint string, lat Latency) (*FS, error) {
	if lat.Read < 0 || lat.Write < 0 || lat.Fsync < 0 {
		return nil, fmt.Errorf("emulate: negative latency %+v", lat)
	}
	backing, err := realDir(backing)
	if err != nil {
		return nil, fmt.Errorf("emulate: backing folder: %w", err)
	}
	mountPoint, err = realDir(mountPoint)
	if err != nil {
		return nil, fmt.Errorf("emulate: mount point: %w", err)
	}
	// A mount point inside its own backing folder would make the server
	// look itself up through the mount and hang.
	if mountPoint == backing || strings.HasPrefix(mountPoint, backing+"/") {
		return nil, fmt.Errorf("emulate: mount point %s is inside the backing folder %s", mountPoint, backing)
	}
	if err := checkEmpty(mountPoint); err != nil {
		return nil, fmt.Errorf("emulate: %w", err)
	}

	root, err := fusefs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("emulate: loopback of %s: %w", backing, err)
	}
	lb, ok := root.(*fusefs.LoopbackNode)
	if !ok {
		return nil, fmt.Errorf("emulate: go-fuse loopback root is %T, not *fs.LoopbackNode", root)
	}

	// The backing folder is only changed through this mount, so the
	// kernel's attribute and name caches stay right; one second matches
	// go-fuse's default and keeps stat-heavy code from paying a FUSE round
	// trip per call.
	sec := time.Second
	opts := &fusefs.Options{
		EntryTimeout: &sec,
		AttrTimeout:  &sec,
		MountOptions: fuse.MountOptions{
			FsName: backing,
			Name:   fsSubtype,
			// As root, mount(2) directly: no fusermount needed, and a
			// dead mount is removable with umount(2).
			DirectMount: true,
			// Databases run as their own users (PostgreSQL refuses to run
			// as root); allow_other lets them in, and default_permissions
			// makes the kernel check file modes, since the server runs as
			// root and would allow everything. Non-root mounts need
			// user_allow_other in /etc/fuse.conf for allow_other, so they
			// stay private.
			AllowOther: os.Geteuid() == 0,
			Options:    []string{"default_permissions"},
			// Fewer, larger requests for big writes: one delay per MiB
			// rather than per 128 KiB, closer to one device I/O.
			MaxWrite: fuse.MAX_KERNEL_WRITE,
			// FUSE passthrough lets the kernel do reads and writes on the
			// backing file itself, bypassing the server and the delay.
			DisabledCapabilities: fuse.CAP_PASSTHROUGH,
			// The data cache is kept across opens (FOPEN_KEEP_CACHE) and
			// not dropped whenever mtime changes: every change comes
			// through this mount's own page cache, so it is never stale,
			// and a local filesystem would not drop it either.
			ExplicitDataCacheControl: true,
		},
	}
	top := &node{LoopbackNode: lb, lat: lat}
	server, err := fusefs.Mount(mountPoint, top, opts)
	if err != nil {
		return nil, fmt.Errorf("emulate: mount FUSE of %s on %s: %w (run emulate.Supported for what is missing)", backing, mountPoint, err)
	}
	return &FS{mountPoint: mountPoint, server: server}, nil
}

// Close unmounts and waits for the server to stop. A mount still in use
// (a process has a file open in it) is detached lazily so nothing stays
// mounted; the server then keeps serving those open files until they are
// closed, and Close waits for that at most a few seconds before it reports
// the mount as detached but busy.
func (f *FS) Close() error {
	f.once.Do(func() { f.closeErr = f.close() })
	return f.closeErr
}

func (f *FS) close() error {
	// server.Unmount retries a busy mount for a moment, then waits for the
	// serve loops once the unmount went through.
	err := f.server.Unmount()
	if err == nil {
		return nil
	}
	if derr := unix.Unmount(f.mountPoint, unix.MNT_DETACH); derr != nil {
		return fmt.Errorf("emulate: unmount %s: %v; lazy unmount: %w", f.mountPoint, err, derr)
	}
	done := make(chan struct{})
	go func() {
		f.server.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(closeWait):
		return fmt.Errorf("emulate: %s was busy (%v): detached lazily; its server keeps serving the files still open in it until they are closed", f.mountPoint, err)
	}
}

// realDir returns the absolute, symlink-free path of an existing folder, so
// the mount point matches what mountinfo and the ledger record.
func realDir(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", path)
	}
	return real, nil
}

// checkEmpty refuses to mount over a folder with contents: they would be
// hidden for the life of the mount.
func checkEmpty(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("mount point: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	if len(names) > 0 {
		return fmt.Errorf("refusing to mount on %s: the folder is not empty", dir)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mount point %s: %w", dir, err)
	}
	return nil
}

// pause waits d.
//
// It sleeps the OS thread in nanosleep(2) rather than in time.Sleep: the
// Go timer wakes up about 0.15 ms late on this kind of machine, nanosleep
// about 0.08 ms, and the overshoot adds to every emulated operation. The
// handler already holds a thread for the backing syscall that follows, so
// this costs no more threads than go-fuse uses anyway.
//
// It deliberately ignores FUSE interrupts: the kernel sends one whenever the
// calling thread gets any signal (Go programs get SIGURG for preemption all
// the time), and answering EINTR would turn a signal into a failed fsync,
// which PostgreSQL treats as a reason to PANIC. A real device does not fail
// an I/O because the caller got a signal.
func pause(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(int64(d))
	for {
		var rem unix.Timespec
		err := unix.Nanosleep(&ts, &rem)
		if err != unix.EINTR {
			return
		}
		ts = rem
	}
}

// node is a loopback node whose open files are delayed. Every node in the
// tree is one: WrapChild wraps each child go-fuse creates.
type node struct {
	*fusefs.LoopbackNode
	lat Latency
}

var (
	_ fusefs.NodeWrapChilder    = (*node)(nil)
	_ fusefs.NodeOpener         = (*node)(nil)
	_ fusefs.NodeCreater        = (*node)(nil)
	_ fusefs.NodeOpendirHandler = (*node)(nil)
)

// WrapChild makes every looked-up or created child a delaying node too.
func (n *node) WrapChild(ctx context.Context, ops fusefs.InodeEmbedder) fusefs.InodeEmbedder {
	if lb, ok := ops.(*fusefs.LoopbackNode); ok {
		return &node{LoopbackNode: lb, lat: n.lat}
	}
	return ops
}

// Open opens the backing file without O_DIRECT and wraps its handle.
//
// O_DIRECT is honoured by the kernel on the FUSE side (the I/O bypasses the
// mount's page cache and every read and write reaches the server, delayed),
// but the server's own buffers are not aligned as O_DIRECT on the backing
// file would demand, and many backing filesystems (tmpfs) refuse O_DIRECT
// outright; durability still comes from fsync, as with O_DIRECT anywhere.
func (n *node) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags&^syscall.O_DIRECT)
	if errno != 0 {
		return nil, 0, errno
	}
	return n.wrap(fh), fuseFlags | fuse.FOPEN_KEEP_CACHE, 0
}

// Create creates the backing file (see Open for O_DIRECT) and wraps its
// handle.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	inode, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags&^syscall.O_DIRECT, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return inode, n.wrap(fh), fuseFlags | fuse.FOPEN_KEEP_CACHE, 0
}

// OpendirHandle wraps the folder handle so fsync of a folder (what Pebble
// and PostgreSQL do after creating or renaming files) is delayed too.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return &dir{inner: fh, lat: n.lat}, fuseFlags, 0
}

func (n *node) wrap(fh fusefs.FileHandle) fusefs.FileHandle {
	lf, ok := fh.(*fusefs.LoopbackFile)
	if !ok {
		// Not expected from go-fuse's loopback; serve it undelayed
		// rather than fail the open.
		return fh
	}
	fd, ok := lf.PassthroughFd()
	if !ok {
		fd = -1
	}
	return &file{LoopbackFile: lf, fd: fd, lat: n.lat}
}

// file is a loopback file handle whose reads, writes and fsyncs wait first.
// Everything else (flush, release, locks, getattr, setattr, fallocate, lseek)
// is the embedded loopback handle's.
type file struct {
	*fusefs.LoopbackFile
	fd  int // the backing file's descriptor, owned by LoopbackFile until Release
	lat Latency
}

var (
	_ fusefs.FileReader          = (*file)(nil)
	_ fusefs.FileWriter          = (*file)(nil)
	_ fusefs.FileFsyncer         = (*file)(nil)
	_ fusefs.FilePassthroughFder = (*file)(nil)
)

// PassthroughFd refuses FUSE passthrough, which would let the kernel read
// and write the backing file without asking the server, skipping the delay.
// (Mount also disables the capability; this holds even if it did not.)
func (f *file) PassthroughFd() (int, bool) { return -1, false }

func (f *file) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	pause(f.lat.Read)
	return f.LoopbackFile.Read(ctx, buf, off)
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	pause(f.lat.Write)
	return f.LoopbackFile.Write(ctx, data, off)
}

// Fsync waits, then does what the caller asked of the backing file:
// fdatasync for fdatasync(2) (go-fuse's loopback would always fsync), so
// the backing cost matches what the same call costs on the backing folder.
func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	pause(f.lat.Fsync)
	if flags&fsyncFdatasync != 0 && f.fd >= 0 {
		return fusefs.ToErrno(unix.Fdatasync(f.fd))
	}
	return f.LoopbackFile.Fsync(ctx, flags)
}

// dir forwards a loopback folder handle and delays its fsync.
type dir struct {
	inner fusefs.FileHandle
	lat   Latency
}

var (
	_ fusefs.FileReaddirenter = (*dir)(nil)
	_ fusefs.FileSeekdirer    = (*dir)(nil)
	_ fusefs.FileReleasedirer = (*dir)(nil)
	_ fusefs.FileFsyncdirer   = (*dir)(nil)
)

func (d *dir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if r, ok := d.inner.(fusefs.FileReaddirenter); ok {
		return r.Readdirent(ctx)
	}
	return nil, syscall.ENOTSUP
}

func (d *dir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if s, ok := d.inner.(fusefs.FileSeekdirer); ok {
		return s.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (d *dir) Releasedir(ctx context.Context, flags uint32) {
	if r, ok := d.inner.(fusefs.FileReleasedirer); ok {
		r.Releasedir(ctx, flags)
	}
}

func (d *dir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	pause(d.lat.Fsync)
	if s, ok := d.inner.(fusefs.FileFsyncdirer); ok {
		return s.Fsyncdir(ctx, flags)
	}
	return syscall.ENOTSUP
}
