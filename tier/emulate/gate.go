package emulate

import (
	"github.com/hanwen/go-fuse/v2/fuse"
)

// gated is a crashable mount's FUSE filesystem: every request goes
// through the power gate, which fails it with EIO, untouched, once the
// power is cut, and holds the cut until the requests under way are done.
//
// Requests that answer nothing (FORGET, RELEASE, RELEASEDIR) still go
// through: they only let go of what the kernel held, and the kernel
// cannot be told they failed.
type gated struct {
	fuse.RawFileSystem
	c *crash
}

// do runs op through the gate.
func (g *gated) do(op func() fuse.Status) fuse.Status {
	if !g.c.enter() {
		return fuse.EIO
	}
	defer g.c.exit()
	return op()
}

func (g *gated) Lookup(cancel <-chan struct{}, header *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Lookup(cancel, header, name, out) })
}

func (g *gated) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.GetAttr(cancel, in, out) })
}

func (g *gated) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.SetAttr(cancel, in, out) })
}

func (g *gated) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Mknod(cancel, in, name, out) })
}

func (g *gated) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Mkdir(cancel, in, name, out) })
}

func (g *gated) Unlink(cancel <-chan struct{}, header *fuse.InHeader, name string) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Unlink(cancel, header, name) })
}

func (g *gated) Rmdir(cancel <-chan struct{}, header *fuse.InHeader, name string) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Rmdir(cancel, header, name) })
}

func (g *gated) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Rename(cancel, in, oldName, newName) })
}

func (g *gated) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Link(cancel, in, name, out) })
}

func (g *gated) Symlink(cancel <-chan struct{}, header *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Symlink(cancel, header, target, name, out) })
}

func (g *gated) Readlink(cancel <-chan struct{}, header *fuse.InHeader) (out []byte, code fuse.Status) {
	code = g.do(func() fuse.Status {
		out, code = g.RawFileSystem.Readlink(cancel, header)
		return code
	})
	return out, code
}

func (g *gated) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Access(cancel, in) })
}

func (g *gated) GetXAttr(cancel <-chan struct{}, header *fuse.InHeader, attr string, dest []byte) (sz uint32, code fuse.Status) {
	code = g.do(func() fuse.Status {
		sz, code = g.RawFileSystem.GetXAttr(cancel, header, attr, dest)
		return code
	})
	return sz, code
}

func (g *gated) ListXAttr(cancel <-chan struct{}, header *fuse.InHeader, dest []byte) (sz uint32, code fuse.Status) {
	code = g.do(func() fuse.Status {
		sz, code = g.RawFileSystem.ListXAttr(cancel, header, dest)
		return code
	})
	return sz, code
}

func (g *gated) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.SetXAttr(cancel, in, attr, data) })
}

func (g *gated) RemoveXAttr(cancel <-chan struct{}, header *fuse.InHeader, attr string) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.RemoveXAttr(cancel, header, attr) })
}

func (g *gated) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Create(cancel, in, name, out) })
}

func (g *gated) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Tmpfile(cancel, in, out) })
}

func (g *gated) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Open(cancel, in, out) })
}

// Read reads within the gate: the file handles of a crashable mount read
// into buf themselves (file.Read) rather than leave the read to go-fuse
// after they return.
func (g *gated) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (res fuse.ReadResult, code fuse.Status) {
	code = g.do(func() fuse.Status {
		res, code = g.RawFileSystem.Read(cancel, in, buf)
		return code
	})
	return res, code
}

func (g *gated) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Lseek(cancel, in, out) })
}

func (g *gated) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.GetLk(cancel, in, out) })
}

func (g *gated) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.SetLk(cancel, in) })
}

// SetLkw is refused once the power is cut but does not hold the gate
// while it waits: a lock can wait for ever for another process, and would
// hold up the cut; a lock changes nothing on disk.
func (g *gated) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	if !g.c.up() {
		return fuse.EIO
	}
	return g.RawFileSystem.SetLkw(cancel, in)
}

func (g *gated) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (n uint32, code fuse.Status) {
	code = g.do(func() fuse.Status {
		n, code = g.RawFileSystem.Write(cancel, in, data)
		return code
	})
	return n, code
}

func (g *gated) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (n uint32, code fuse.Status) {
	code = g.do(func() fuse.Status {
		n, code = g.RawFileSystem.Writev(cancel, in, data)
		return code
	})
	return n, code
}

func (g *gated) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (n uint32, code fuse.Status) {
	code = g.do(func() fuse.Status {
		n, code = g.RawFileSystem.CopyFileRange(cancel, in)
		return code
	})
	return n, code
}

func (g *gated) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf) })
}

func (g *gated) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Flush(cancel, in) })
}

func (g *gated) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Fsync(cancel, in) })
}

func (g *gated) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Fallocate(cancel, in) })
}

func (g *gated) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.OpenDir(cancel, in, out) })
}

func (g *gated) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.ReadDir(cancel, in, out) })
}

func (g *gated) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.ReadDirPlus(cancel, in, out) })
}

func (g *gated) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.FsyncDir(cancel, in) })
}

func (g *gated) StatFs(cancel <-chan struct{}, header *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.StatFs(cancel, header, out) })
}

func (g *gated) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	return g.do(func() fuse.Status { return g.RawFileSystem.Statx(cancel, in, out) })
}
