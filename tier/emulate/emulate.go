// Package emulate makes a folder behave like slower storage: a passthrough
// (loopback) FUSE filesystem of a backing folder whose fsync, and
// optionally reads and writes, take as long as the emulated device's.
//
// Tierbench uses it for tiers that stand for storage the machine does not
// have (a SATA SSD, an HDD, network block storage): the data lives on a real
// folder, and the FUSE layer makes each delayed operation last as long as
// it was asked to.
//
// # A helper process serves the mount
//
// Start runs the FUSE server in a helper process (this same executable,
// re-executed; see Start), never in the process that uses the mount. A
// process that serves its own mount cannot survive kill -9: its dying
// threads wait, uninterruptibly, for FUSE answers that its own dead server
// threads will never send, and it stays a zombie for ever. With a helper,
// the killed process's last requests are answered and it exits; the helper
// then notices that its owner is gone, unmounts (lazily if still in use)
// and exits once the last open file in the mount is closed. Tierbench
// records the helper in its ledger, so `tierbench cleanup` kills it if it
// is still there, and Abort frees processes stuck on a mount whose server
// was stopped.
//
// # What each latency means
//
// Each latency is the whole time the operation takes as the application
// sees it, not an amount added on top: the server times the backing
// folder's own fsync (or read, or write), and waits only the rest, minus
// the layer's own cost (the FUSE round trip and the sleep's overshoot),
// which it measures when it mounts (Calibration). So `fsync: 2ms` on a
// tmpfs or a RAM-backed loop device gives fsyncs of about 2 ms; on a
// backing folder whose own fsync is slower than asked, fsync takes what
// the backing folder takes, plus the layer's round trip.
//
//   - Fsync applies to fsync(2) and fdatasync(2) of files and of folders.
//   - Write applies to every write(2)/pwrite(2) of an application: without
//     the FUSE writeback cache each write goes to the server synchronously
//     (write-through), split into FUSE WRITE requests of at most 1 MiB, and
//     each request takes Write. Page-cache writeback of shared writable
//     mmaps also arrives as WRITE requests.
//   - Read applies to reads that miss the mount's page cache and reach the
//     server: first reads of data, kernel readahead (one delay per readahead
//     request, up to 1 MiB, not per read(2)), mmap page faults, and all reads
//     of files opened with O_DIRECT. A re-read of cached data costs nothing,
//     as on a real device. Dropping caches (vm.drop_caches, fadvise
//     DONTNEED) makes reads pay again.
//
// When neither Read nor Write is asked for (and the mount is not
// crashable), files are opened with FUSE passthrough (Linux 6.9 and later,
// as root): the kernel reads and writes the backing file itself, without
// a round trip to the server, so reads and writes cost what they cost on
// the backing folder, and only fsync reaches the server. Where
// passthrough is not available, reads and writes go through the server
// undelayed and pay its round trip.
//
// Metadata operations (lookup, stat, create, mkdir, rename, unlink, readdir,
// fallocate, truncate) are passed through without delay: they are not what
// the emulated devices are slower at in a way the benchmarks measure, and
// FUSE already adds a round trip to each.
//
// # Caveats that follow from FUSE
//
//   - An operation cannot be faster than the layer's own round trip plus the
//     backing folder's cost: about 0.05 to 0.5 ms on a 2-core VM (more when
//     the machine is idle and its CPUs must wake up, less under load). The
//     calibration at mount takes the round trip it measured then off every
//     delay; the probe's fio run is what tells the tier's real latency.
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
//
// # Crashable mounts
//
// A mount started with Options.Crashable can lose power as LazyFS lets a
// test lose every write that was not fsynced (Ramos et al., "When Amnesia
// Strikes", VLDB 2024): PowerCut rolls the backing folder back to its
// durable state. What is durable:
//
//   - File data written with write(2) or pwrite(2), or by the writeback of
//     a shared writable mapping (which arrives as a write), is durable once
//     an fsync(2) or fdatasync(2) of the file, through any of its handles,
//     completes after it (msync with MS_SYNC is one). A write through a
//     handle opened with O_SYNC, O_DSYNC or O_DIRECT is durable when it
//     returns; for O_SYNC and O_DSYNC the kernel follows each write with an
//     fsync of the file, which makes the file's earlier writes durable too.
//   - A file's size follows its data: a size change (a write past the end,
//     truncate, ftruncate, O_TRUNC, fallocate) is undone unless the file
//     is fsynced after it. A rolled-back file gets back its durable size
//     and its durable bytes.
//   - A directory entry made or removed (create, mknod, mkdir, symlink,
//     link, unlink, rmdir, rename) is durable once an fsync of the folder
//     that holds the entry completes after the change; an fsync of the
//     file does not make its entry durable. A rename is durable once its
//     destination folder is fsynced, whatever becomes of the source
//     folder: one fsync makes it, atomically, the new state.
//   - The cut undoes what is not durable, newest first: an entry made is
//     removed, with its contents; an entry removed comes back, with its
//     durable content; a rename is reversed, and the entry it replaced
//     comes back. Where a durable change leaves an older one nothing to
//     undo (its entry moved on, or its old name is taken again), the
//     durable one wins.
//   - Settle makes everything done so far durable. Nothing else is lost
//     without a cut: when the mount closes, its state stays as it is.
//   - sync(2), syncfs(2) and sync_file_range(2) do not reach the server
//     (see the caveats above), so they make nothing durable. Modes,
//     owners, times and extended attributes are not rolled back.
//
// So a file created and fsynced in a folder that was not fsynced is gone
// after the cut, and a file created, its folder fsynced, then written and
// not fsynced, is there, empty.
//
// PowerCut waits for the operations under way, then fails every
// operation that reaches the server with EIO, without touching the backing
// folder, until PowerOn. It rolls the backing folder back and makes the
// kernel drop what it cached (data, attributes, the entries the rollback
// changed), so that reads after the cut reach the server and fail, and a
// reader after PowerOn sees only the durable state. A folder the cut
// brings back after an rmdir or a rename over it reaches the kernel as a
// new inode (a generation of its own): the kernel marked the old one dead,
// and would fail every readdir of it. Pages of shared
// mappings dirtied after the cut are dropped at PowerOn, before they can
// be written back. The runner kills the processes using the mount in
// between: they get EIO meanwhile, and do not hang. PowerOn then reads,
// with one syncfs(2), the write-back error the killed processes' failed
// writes left on the mount, which the kernel would otherwise report to
// the next syncfs of any file there (PostgreSQL's start does one) and a
// machine rebooted after a power loss would not.
//
// PowerCutModel cuts the power under a power-loss model (Model, in
// crashmodel.go) that keeps some of the unsynced data instead of putting
// it all back: ModelSurvive keeps each unsynced 4 KiB page with a
// probability (write-back got part of the way), ModelTorn each aligned
// atomic-write unit (Options.AtomicWrite, 512 B unless given), so a
// write larger than the unit can be part new, part old. Which units are
// kept is a hash of the model's seed, the file's inode and the unit's
// index, the same whatever order the rollback visits them in. Every model
// still cuts files back to their durable size and undoes directory
// changes (a file's growth is never kept), keeps no bytes a shrink cut
// off, never tears inside a unit, and never reorders across an fsync; a
// synced page has no pre-image, so no model loses it. Writes through
// O_SYNC or O_DSYNC handles are durable when they return, so no model
// tears them; so are O_DIRECT ones, unless Options.VolatileCache says the
// device keeps them in a volatile cache until an fsync.
//
// ModelReorder (crashreorder.go) keeps each write made since its file's
// last fsync whole, with the probability, and applies the kept ones in
// their order over the durable bytes: any subset of the writes between
// two flushes. Pre-images cannot tell it an earlier write's bytes under a
// later one, so it needs a mount started with Options.LogWrites, which
// copies each unsynced write into the helper's memory until its file's
// fsync (Options.WriteLogCap bytes at once over the mount, 256 MiB unless
// given; a write past the cap is lost whole at the cut, and Loss counts
// it). A mount without the flag logs nothing and refuses the model.
//
// What it costs:
//
//   - Reads and writes always go through the server (no passthrough).
//     The models add nothing to them: they read the same pre-images at
//     the cut. With Options.LogWrites each unsynced write is also copied
//     into memory (its bytes, up to the cap), which BenchmarkCrashableOverhead
//     could not tell from the machine's noise.
//   - The first change of a page since its file's last fsync copies the
//     page's durable bytes (4 KiB pages, below the durable size only, so
//     appends copy nothing; a truncation copies all it cuts off) to a
//     spill file next to the backing folder: disk space on the backing
//     filesystem up to the bytes overwritten since their file's last
//     fsync, and a map entry (tens of bytes) of the helper's memory per
//     page. The helper also keeps a few open files per file with changes
//     to undo, and a record per entry change not yet durable.
//   - An entry removed, or replaced by a rename, keeps its inode in the
//     hidden folder until its folder is fsynced: its space is not freed
//     before, and an unlinked file still open shows a link count of 1.
//   - ioctl(2) on a file fails with ENOTTY: some ioctls change a file
//     unseen.
//
// The hidden folder is a sibling of the backing folder (named
// .tierbench-crash-NAME for a backing folder NAME), so that moving an
// inode there is a rename on the same mount; a backing folder that is a
// mount point of its own is refused. It is outside the mount's view and
// removed when the helper exits; one left by a helper killed with SIGKILL
// is removed by the next crashable mount of the same backing folder
// (HiddenFolder names it, for tierbench's ledger, whose cleanup removes
// it too).
//
// The helper takes Settle, PowerCut and PowerOn from its owner as
// commands on a pipe (see control.go).
package emulate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
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

// fsServer is a mount served in this process. Only the helper process
// (serveHelper) uses it: see the package doc for why.
type fsServer struct {
	mountPoint string
	server     *fuse.Server
	delays     *delays
	crash      *crash // nil unless crashable
}

// checkFolders resolves backing and mountPoint and refuses a mount point
// that is not empty or lies inside its backing folder.
func checkFolders(backing, mountPoint string) (string, string, error) {
	backing, err := realDir(backing)
	if err != nil {
		return "", "", fmt.Errorf("backing folder: %w", err)
	}
	mountPoint, err = realDir(mountPoint)
	if err != nil {
		return "", "", fmt.Errorf("mount point: %w", err)
	}
	// A mount point inside its own backing folder would make the server
	// look itself up through the mount and hang.
	if mountPoint == backing || strings.HasPrefix(mountPoint, backing+"/") {
		return "", "", fmt.Errorf("mount point %s is inside the backing folder %s", mountPoint, backing)
	}
	if err := checkEmpty(mountPoint); err != nil {
		return "", "", err
	}
	return backing, mountPoint, nil
}

// serve mounts a delaying loopback of backing on mountPoint and serves it
// in this process; a crashable one if asked (see "Crashable mounts").
func serve(backing, mountPoint string, lat Latency, crashable bool) (*fsServer, error) {
	root, err := fusefs.NewLoopbackRoot(backing)
	if err != nil {
		return nil, fmt.Errorf("loopback of %s: %w", backing, err)
	}
	lb, ok := root.(*fusefs.LoopbackNode)
	if !ok {
		return nil, fmt.Errorf("go-fuse loopback root is %T, not *fs.LoopbackNode", root)
	}
	d := newDelays(lat)
	top := &node{LoopbackNode: lb, delays: d, passthrough: lat.passthrough() && !crashable}
	if crashable {
		if top.crash, err = newCrash(backing); err != nil {
			return nil, err
		}
	}
	server, err := mount(mountPoint, top, mountOptions(backing, lat, crashable))
	if err != nil {
		if top.crash != nil {
			top.crash.close()
		}
		return nil, fmt.Errorf("mount FUSE of %s on %s: %w (run emulate.Supported for what is missing)", backing, mountPoint, err)
	}
	if top.crash != nil {
		top.crash.root = top.EmbeddedInode()
	}
	return &fsServer{mountPoint: mountPoint, server: server, delays: d, crash: top.crash}, nil
}

// mount mounts top and serves it, as go-fuse's Mount does, through the
// power gate on a crashable mount.
func mount(mountPoint string, top *node, opts *fusefs.Options) (*fuse.Server, error) {
	if top.crash == nil {
		return fusefs.Mount(mountPoint, top, opts)
	}
	raw := &gated{RawFileSystem: fusefs.NewNodeFS(top, opts), c: top.crash}
	server, err := fuse.NewServer(raw, mountPoint, &opts.MountOptions)
	if err != nil {
		return nil, err
	}
	go server.Serve()
	if err := server.WaitMount(); err != nil {
		return nil, err
	}
	return server, nil
}

// mountOptions are the go-fuse options of an emulated tier.
func mountOptions(backing string, lat Latency, crashable bool) *fusefs.Options {
	// The backing folder is only changed through this mount, so the
	// kernel's attribute and name caches stay right; one second matches
	// go-fuse's default and keeps stat-heavy code from paying a FUSE round
	// trip per call.
	sec := time.Second
	mo := fuse.MountOptions{
		FsName: backing,
		Name:   fsSubtype,
		// As root, mount(2) directly: no fusermount needed, and a dead
		// mount is removable with umount(2).
		DirectMount: true,
		// Databases run as their own users (PostgreSQL refuses to run as
		// root); allow_other lets them in, and default_permissions makes
		// the kernel check file modes, since the server runs as root and
		// would allow everything. Non-root mounts need user_allow_other in
		// /etc/fuse.conf for allow_other, so they stay private.
		AllowOther: os.Geteuid() == 0,
		Options:    []string{"default_permissions"},
		// Fewer, larger requests for big writes: one delay per MiB rather
		// than per 128 KiB, closer to one device I/O.
		MaxWrite: fuse.MAX_KERNEL_WRITE,
		// The data cache is kept across opens (FOPEN_KEEP_CACHE) and not
		// dropped whenever mtime changes: every change comes through this
		// mount's own page cache, so it is never stale, and a local
		// filesystem would not drop it either.
		ExplicitDataCacheControl: true,
		// Splicing a 1 MiB read plus its header into the kernel's 1 MiB
		// pipe always fails, and go-fuse logs every failure before it
		// falls back to copying: copy at once.
		DisableSplice: true,
		// go-fuse's log says nothing a user can act on (the mount's
		// errors come back as errors); it must not reach the terminal.
		Logger: log.New(io.Discard, "", 0),
	}
	if !lat.passthrough() || crashable {
		// Passthrough would let the kernel read and write the backing
		// file without asking the server, skipping the delay, and the
		// records of a crashable mount.
		mo.DisabledCapabilities = fuse.CAP_PASSTHROUGH
	}
	return &fusefs.Options{EntryTimeout: &sec, AttrTimeout: &sec, MountOptions: mo}
}

// busyGrace is how long unmount retries a busy mount before detaching it
// lazily.
const busyGrace = 2 * time.Second

// unmount detaches the mount, lazily if it is in use: the server then
// serves the files still open in it until they are closed, and its loops
// end after that. A mount busy for a moment (a file closed just before,
// whose release is still on its way) gets a short while to be let go
// before it is detached lazily.
func (s *fsServer) unmount() error {
	var err error
	for deadline := time.Now().Add(busyGrace); ; time.Sleep(busyGrace / 40) {
		err = unix.Unmount(s.mountPoint, 0)
		if err == nil || errors.Is(err, unix.EINVAL) {
			return nil // EINVAL: no longer mounted
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			break
		}
	}
	if derr := unix.Unmount(s.mountPoint, unix.MNT_DETACH); derr != nil && !errors.Is(derr, unix.EINVAL) {
		return fmt.Errorf("unmount %s: %v; lazy unmount: %w", s.mountPoint, err, derr)
	}
	return nil
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

// node is a loopback node whose open files are delayed. Every node in the
// tree is one: WrapChild wraps each child go-fuse creates.
type node struct {
	*fusefs.LoopbackNode
	delays      *delays
	passthrough bool
	crash       *crash // nil unless the mount is crashable (crashnode.go)
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
		return &node{LoopbackNode: lb, delays: n.delays, passthrough: n.passthrough, crash: n.crash}
	}
	return ops
}

// Open opens the backing file without O_DIRECT and wraps its handle.
//
// O_DIRECT is honoured by the kernel on the FUSE side (the I/O bypasses the
// mount's page cache and every read and write reaches the server, or with
// passthrough the backing file, opened by the kernel with the caller's
// flags), but the server's own buffers are not aligned as O_DIRECT on the
// backing file would demand, and some backing filesystems refuse O_DIRECT
// outright; durability still comes from fsync, as with O_DIRECT anywhere.
func (n *node) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags&^syscall.O_DIRECT)
	if errno != 0 {
		return nil, 0, errno
	}
	return n.wrap(fh, n.EmbeddedInode(), flags), fuseFlags | fuse.FOPEN_KEEP_CACHE, 0
}

// Create creates the backing file (see Open for O_DIRECT) and wraps its
// handle.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	if n.crash != nil {
		return n.crashCreate(ctx, name, flags, mode, out)
	}
	inode, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags&^syscall.O_DIRECT, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return inode, n.wrap(fh, inode, flags), fuseFlags | fuse.FOPEN_KEEP_CACHE, 0
}

// OpendirHandle wraps the folder handle so fsync of a folder (what Pebble
// and PostgreSQL do after creating or renaming files) is delayed too.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	d := &dir{inner: fh, delays: n.delays}
	if n.crash != nil {
		d.crash, d.ino = n.crash, n.ino()
	}
	return d, fuseFlags, 0
}

// wrap wraps the handle of the file inode, opened with flags.
func (n *node) wrap(fh fusefs.FileHandle, inode *fusefs.Inode, flags uint32) fusefs.FileHandle {
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
	f := &file{LoopbackFile: lf, fd: fd, delays: n.delays, passthrough: n.passthrough,
		direct: flags&(syscall.O_DIRECT|syscall.O_SYNC|syscall.O_DSYNC) != 0}
	if n.crash != nil {
		f.track(n.crash, inode, flags)
	}
	return f
}

// file is a loopback file handle whose reads, writes and fsyncs take their
// asked time. Everything else (flush, release, locks, getattr, setattr,
// lseek) is the embedded loopback handle's, and so is fallocate unless the
// mount is crashable.
type file struct {
	*fusefs.LoopbackFile
	fd          int // the backing file's descriptor, owned by LoopbackFile until Release
	delays      *delays
	passthrough bool
	// On a crashable mount, the changes made through the handle are
	// recorded under the file's inode number (crashnode.go).
	crash *crash
	ino   uint64
	inode *fusefs.Inode
	// durable says each write is durable when it returns (O_SYNC,
	// O_DSYNC, O_DIRECT), on a crashable mount.
	durable bool
	// direct says the handle was opened O_DIRECT, O_SYNC or O_DSYNC: its
	// writes reach the device before they return.
	direct bool
	// readWrite says the handle can both read and write, so an undo
	// record can share its open file rather than open it again.
	readWrite bool
}

var (
	_ fusefs.FileReader          = (*file)(nil)
	_ fusefs.FileWriter          = (*file)(nil)
	_ fusefs.FileFsyncer         = (*file)(nil)
	_ fusefs.FilePassthroughFder = (*file)(nil)
)

// PassthroughFd offers the backing file for FUSE passthrough only when
// reads and writes are not delayed: passthrough reads and writes never
// reach the server.
func (f *file) PassthroughFd() (int, bool) {
	if !f.passthrough || f.fd < 0 {
		return -1, false
	}
	return f.fd, true
}

// Read reads the backing file into buf and waits the rest of the asked
// read latency. It reads here rather than leaving the read to go-fuse's
// reply (as the loopback does), so the backing read's own time is known.
func (f *file) Read(ctx context.Context, buf []byte, off int64) (res fuse.ReadResult, errno syscall.Errno) {
	if f.fd < 0 {
		f.delays.finish(f.delays.read, 0)
		return f.LoopbackFile.Read(ctx, buf, off)
	}
	f.delays.timed(f.delays.read, f.delays.readSpread, func() {
		n, err := unix.Pread(f.fd, buf, off)
		if err != nil {
			errno = fusefs.ToErrno(err)
			return
		}
		res = fuse.ReadResultData(buf[:n])
	})
	return res, errno
}

// Write writes to the backing file and waits the rest of the asked write
// latency.
func (f *file) Write(ctx context.Context, data []byte, off int64) (n uint32, errno syscall.Errno) {
	if f.delays.directWrites && !f.direct {
		return f.write(ctx, data, off) // a buffered write: the device is paid at fsync
	}
	f.delays.timed(f.delays.write, f.delays.writeSpread, func() { n, errno = f.write(ctx, data, off) })
	return n, errno
}

// Writev is Write, for the write requests that go-fuse hands over in
// pieces: otherwise the embedded loopback handle would take them, unseen
// by the delay and by a crashable mount's records.
func (f *file) Writev(ctx context.Context, data [][]byte, off int64) (uint32, syscall.Errno) {
	return f.Write(ctx, bytes.Join(data, nil), off)
}

// Fsync does what the caller asked of the backing file, fdatasync for
// fdatasync(2) (go-fuse's loopback would always fsync) so the backing cost
// matches what the same call costs on the backing folder, and waits the
// rest of the asked fsync latency.
func (f *file) Fsync(ctx context.Context, flags uint32) (errno syscall.Errno) {
	f.delays.timedSync(func() {
		if f.crash != nil {
			errno = f.crash.synced(f.ino, func() syscall.Errno { return f.fsync(ctx, flags) })
			return
		}
		errno = f.fsync(ctx, flags)
	})
	return errno
}

func (f *file) fsync(ctx context.Context, flags uint32) syscall.Errno {
	if flags&fsyncFdatasync != 0 && f.fd >= 0 {
		return fusefs.ToErrno(unix.Fdatasync(f.fd))
	}
	return f.LoopbackFile.Fsync(ctx, flags)
}

// dir forwards a loopback folder handle and delays its fsync.
type dir struct {
	inner  fusefs.FileHandle
	delays *delays
	// crash and ino are set on a crashable mount: an fsync makes the
	// folder's entry changes durable.
	crash *crash
	ino   uint64
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

func (d *dir) Fsyncdir(ctx context.Context, flags uint32) (errno syscall.Errno) {
	d.delays.timedSync(func() {
		var upTo uint64
		if d.crash != nil {
			upTo = d.crash.lastSeq()
		}
		errno = syscall.ENOTSUP
		if s, ok := d.inner.(fusefs.FileFsyncdirer); ok {
			errno = s.Fsyncdir(ctx, flags)
		}
		if errno == 0 && d.crash != nil {
			d.crash.dirSynced(d.ino, upTo)
		}
	})
	return errno
}
