package emulate

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The node and file methods below record, on a crashable mount, what each
// change needs to be undone (see crash.go); on any other mount they are
// the loopback's.

var (
	_ fusefs.NodeLookuper   = (*node)(nil)
	_ fusefs.NodeMkdirer    = (*node)(nil)
	_ fusefs.NodeMknoder    = (*node)(nil)
	_ fusefs.NodeSymlinker  = (*node)(nil)
	_ fusefs.NodeLinker     = (*node)(nil)
	_ fusefs.NodeUnlinker   = (*node)(nil)
	_ fusefs.NodeRmdirer    = (*node)(nil)
	_ fusefs.NodeRenamer    = (*node)(nil)
	_ fusefs.NodeSetattrer  = (*node)(nil)
	_ fusefs.FileAllocater  = (*file)(nil)
	_ fusefs.FileReleaser   = (*file)(nil)
	_ fusefs.FileIoctler    = (*file)(nil)
	_ fusefs.FileWritever   = (*file)(nil)
	_ fusefs.FileFsyncdirer = (*dir)(nil)
)

// ino is the node's inode number in the backing folder.
func (n *node) ino() uint64 {
	if n.IsRoot() {
		// go-fuse numbers the root 1, not as the backing folder does.
		return n.crash.rootIno
	}
	return n.StableAttr().Ino
}

// backingPath is the node's path in the backing folder.
func (n *node) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

// openForUndo opens the node's backing file for an undo record, when no
// handle of it is at hand (truncate(2) by path).
func (n *node) openForUndo() (int, error) {
	return unix.Open(n.backingPath(), unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// Lookup is the loopback's, except for a folder a power cut put back: it
// gets its generation of rebirth, so a new node (see crash.rebirth).
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if n.crash == nil || !n.crash.anyReborn() {
		return n.LoopbackNode.Lookup(ctx, name, out)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(n.backingPath(), name), &st); err != nil {
		return nil, fusefs.ToErrno(err)
	}
	gen, ok := n.crash.rebornGen(st.Ino)
	if !ok || st.Dev != n.RootData.Dev {
		return n.LoopbackNode.Lookup(ctx, name, out)
	}
	out.Attr.FromStat(&st)
	attr := fusefs.StableAttr{Mode: st.Mode & syscall.S_IFMT, Ino: st.Ino, Gen: gen}
	// NewInode wraps the loopback node as WrapChild does any child.
	return n.NewInode(ctx, &fusefs.LoopbackNode{RootData: n.RootData}, attr), 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	op := func() (*fusefs.Inode, syscall.Errno) { return n.LoopbackNode.Mkdir(ctx, name, mode, out) }
	if n.crash == nil {
		return op()
	}
	return n.crash.made(n, name, out, op)
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	op := func() (*fusefs.Inode, syscall.Errno) { return n.LoopbackNode.Mknod(ctx, name, mode, rdev, out) }
	if n.crash == nil {
		return op()
	}
	return n.crash.made(n, name, out, op)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	op := func() (*fusefs.Inode, syscall.Errno) { return n.LoopbackNode.Symlink(ctx, target, name, out) }
	if n.crash == nil {
		return op()
	}
	return n.crash.made(n, name, out, op)
}

func (n *node) Link(ctx context.Context, target fusefs.InodeEmbedder, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	op := func() (*fusefs.Inode, syscall.Errno) { return n.LoopbackNode.Link(ctx, target, name, out) }
	if n.crash == nil {
		return op()
	}
	return n.crash.made(n, name, out, op)
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if n.crash == nil {
		return n.LoopbackNode.Unlink(ctx, name)
	}
	return n.crash.remove(n, name, false)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	if n.crash == nil {
		return n.LoopbackNode.Rmdir(ctx, name)
	}
	return n.crash.remove(n, name, true)
}

func (n *node) Rename(ctx context.Context, name string, newParent fusefs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if n.crash == nil {
		return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
	}
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	return n.crash.rename(n, name, np, newName, flags)
}

// Setattr records a size change (truncate, ftruncate, O_TRUNC) before it
// is made.
func (n *node) Setattr(ctx context.Context, fh fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	op := func() syscall.Errno { return n.LoopbackNode.Setattr(ctx, fh, in, out) }
	size, ok := in.GetSize()
	if n.crash == nil || !ok {
		return op()
	}
	open := n.openForUndo
	if f, ok := fh.(*file); ok && f.crash != nil {
		open = f.reopen
	}
	lo, hi := truncateRange(int64(size))
	return n.crash.change(n.ino(), n.EmbeddedInode(), open, lo, hi, op)
}

// crashCreate is Create on a crashable mount: it logs the creation. The
// kernel asks to create only a name it found free; should the name exist
// after all, the file is opened as it is, not logged (and truncated, if
// asked, as a recorded change).
func (n *node) crashCreate(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	var fh fusefs.FileHandle
	var fuseFlags uint32
	inode, errno := n.crash.made(n, name, out, func() (inode *fusefs.Inode, errno syscall.Errno) {
		inode, fh, fuseFlags, errno = n.LoopbackNode.Create(ctx, name, (flags|syscall.O_EXCL)&^syscall.O_DIRECT, mode, out)
		return inode, errno
	})
	truncate := false
	if errno == syscall.EEXIST && flags&syscall.O_EXCL == 0 {
		inode, fh, fuseFlags, errno = n.LoopbackNode.Create(ctx, name, flags&^(syscall.O_DIRECT|syscall.O_TRUNC), mode, out)
		truncate = flags&syscall.O_TRUNC != 0
	}
	if errno != 0 {
		return nil, nil, 0, errno
	}
	h := n.wrap(fh, inode, flags)
	if f, ok := h.(*file); ok && truncate {
		if errno := f.truncate(); errno != 0 {
			f.Release(ctx)
			return nil, nil, 0, errno
		}
	}
	return inode, h, fuseFlags | fuse.FOPEN_KEEP_CACHE, 0
}

// track makes the handle record its changes under the file's inode.
func (f *file) track(c *crash, inode *fusefs.Inode, flags uint32) {
	f.crash, f.inode, f.ino = c, inode, inode.StableAttr().Ino
	// O_SYNC includes O_DSYNC's bit. An O_DIRECT write reaches the
	// device, durable unless the device keeps it in a volatile cache.
	f.durable = flags&syscall.O_DSYNC != 0 || (flags&syscall.O_DIRECT != 0 && !c.volatileCache)
	f.readWrite = flags&syscall.O_ACCMODE == syscall.O_RDWR
	c.opened(f.ino)
}

// Release lets a crashable mount forget the file's undo record once no
// handle has it open and it has nothing to undo.
func (f *file) Release(ctx context.Context) syscall.Errno {
	errno := f.LoopbackFile.Release(ctx)
	if f.crash != nil {
		f.crash.released(f.ino)
	}
	return errno
}

// reopen opens the handle's file for an undo record: a duplicate of the
// handle if it reads and writes, else a new open of the same inode (the
// record reads pre-images and writes them back).
func (f *file) reopen() (int, error) {
	if f.readWrite {
		return unix.FcntlInt(uintptr(f.fd), unix.F_DUPFD_CLOEXEC, 0)
	}
	return unix.Open(fmt.Sprintf("/proc/self/fd/%d", f.fd), unix.O_RDWR|unix.O_CLOEXEC, 0)
}

// write writes through the handle, recording what it overwrites on a
// crashable mount.
func (f *file) write(ctx context.Context, data []byte, off int64) (n uint32, errno syscall.Errno) {
	op := func() syscall.Errno {
		n, errno = f.LoopbackFile.Write(ctx, data, off)
		return errno
	}
	switch {
	case f.crash == nil:
		op()
	case f.durable:
		n, errno = f.writeDurable(ctx, data, off)
	default:
		errno = f.crash.changeWrite(f.ino, f.inode, f.reopen, data, off, func() (int, syscall.Errno) {
			errno := op()
			return int(n), errno
		})
	}
	return n, errno
}

// writeDurable writes through a handle whose writes are durable at once:
// the file's undo record, if it has one, learns that the bytes written
// are durable; with none, the file is durable as it is, and stays so.
func (f *file) writeDurable(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	u := f.crash.existing(f.ino)
	if u == nil {
		return f.LoopbackFile.Write(ctx, data, off)
	}
	defer u.mu.Unlock()
	n, err := u.writeDurable(f.fd, data, off)
	return uint32(max(n, 0)), errnoOf(err)
}

// truncate cuts the file to nothing, as a recorded change.
func (f *file) truncate() syscall.Errno {
	return f.crash.change(f.ino, f.inode, f.reopen, 0, 1<<63-1, func() syscall.Errno {
		return errnoOf(unix.Ftruncate(f.fd, 0))
	})
}

// Allocate records what fallocate(2) overwrites or extends, on a
// crashable mount.
func (f *file) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	op := func() syscall.Errno { return f.LoopbackFile.Allocate(ctx, off, size, mode) }
	if f.crash == nil {
		return op()
	}
	lo, hi := allocateRange(int64(off), int64(size), mode)
	return f.crash.change(f.ino, f.inode, f.reopen, lo, hi, op)
}

// Ioctl refuses ioctls on a crashable mount: some change a file in ways
// no record would see.
func (f *file) Ioctl(ctx context.Context, cmd uint32, arg uint64, input []byte, output []byte) (int32, syscall.Errno) {
	if f.crash != nil {
		return 0, syscall.ENOTTY
	}
	return f.LoopbackFile.Ioctl(ctx, cmd, arg, input, output)
}
