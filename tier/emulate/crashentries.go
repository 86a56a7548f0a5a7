package emulate

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// changeKind is what a directory change did.
type changeKind uint8

const (
	// created made name (create, mknod, mkdir, symlink, link).
	created changeKind = iota
	// removed removed name (unlink, rmdir); its inode waits in the hidden
	// folder, as kept.
	removed
	// renamed moved name to toName; the inode it replaced there, if any,
	// waits in the hidden folder as kept.
	renamed
	// exchanged swapped name and toName (RENAME_EXCHANGE).
	exchanged
)

// entryChange is one directory change since the last fsync of the folder
// that makes it durable (its home): the folder of name, or for a rename
// the destination folder.
type entryChange struct {
	seq    uint64
	kind   changeKind
	dir    *dirRef
	name   string
	to     *dirRef // renamed, exchanged
	toName string
	// ino is the inode that name held (created, removed) or that moved
	// from name (renamed, exchanged); toIno the one toName held before an
	// exchange, or before a rename replaced it.
	ino, toIno uint64
	kept       string // the inode's name in the hidden folder
	keptDir    bool
}

// home is the folder whose fsync makes the change durable.
func (e *entryChange) home() *dirRef {
	if e.to != nil {
		return e.to
	}
	return e.dir
}

// touches reports whether the change made or moved an entry named name in
// folder dir.
func (e *entryChange) touches(dir uint64, name string) bool {
	return (e.dir.ino == dir && e.name == name) || (e.to != nil && e.to.ino == dir && e.toName == name)
}

// names are the entries the change touched, for the kernel to forget.
func (e *entryChange) names() []entryName {
	n := []entryName{{e.dir.ino, e.name}}
	if e.to != nil {
		n = append(n, entryName{e.to.ino, e.toName})
	}
	return n
}

func (e *entryChange) String() string {
	switch e.kind {
	case created:
		return fmt.Sprintf("the creation of %q", e.name)
	case removed:
		return fmt.Sprintf("the removal of %q", e.name)
	case renamed:
		return fmt.Sprintf("the rename of %q to %q", e.name, e.toName)
	}
	return fmt.Sprintf("the exchange of %q and %q", e.name, e.toName)
}

// entryName is an entry of the folder whose inode number is dir.
type entryName struct {
	dir  uint64
	name string
}

// dirRef is a folder, open, that changes refer to: they are undone where
// the folder is at the time, whatever was renamed since.
type dirRef struct {
	fd   int // O_PATH
	ino  uint64
	refs int
}

// refDir returns folder n, open, with a reference the caller drops with
// unrefDir.
func (c *crash) refDir(n *node) (*dirRef, syscall.Errno) {
	ino := n.ino()
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.dirs[ino]; d != nil {
		d.refs++
		return d, 0
	}
	fd, err := unix.Open(n.backingPath(), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errnoOf(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Ino != ino {
		// The path no longer leads to the folder the kernel means.
		unix.Close(fd)
		return nil, syscall.ESTALE
	}
	d := &dirRef{fd: fd, ino: ino, refs: 1}
	c.dirs[ino] = d
	return d, 0
}

func (c *crash) unrefDir(d *dirRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unrefDirLocked(d)
}

func (c *crash) unrefDirLocked(d *dirRef) {
	if d.refs--; d.refs == 0 {
		unix.Close(d.fd)
		delete(c.dirs, d.ino)
	}
}

// log records e, which the caller's operation has just done.
func (c *crash) log(e *entryChange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	e.seq = c.seq
	e.dir.refs++
	if e.to != nil {
		e.to.refs++
	}
	home := e.home().ino
	c.changes[home] = append(c.changes[home], e)
}

// keptName is a new name in the hidden folder.
func (c *crash) keptName() string {
	return fmt.Sprintf("k%d", c.kept.Add(1))
}

// dirSynced makes durable the changes whose home is folder ino, up to
// seq: the folder was fsynced after them.
func (c *crash) dirSynced(ino, seq uint64) {
	c.mu.Lock()
	var done, left []*entryChange
	for _, e := range c.changes[ino] {
		if e.seq <= seq {
			done = append(done, e)
		} else {
			left = append(left, e)
		}
	}
	if len(left) == 0 {
		delete(c.changes, ino)
	} else {
		c.changes[ino] = left
	}
	c.mu.Unlock()
	for _, e := range done {
		c.forget(e)
	}
}

// lastSeq is the newest change's sequence number.
func (c *crash) lastSeq() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// forget drops a change that needs no undoing any more, and the inode it
// kept.
func (c *crash) forget(e *entryChange) {
	if e.kept != "" {
		c.removeKept(e.kept, e.keptDir)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unrefDirLocked(e.dir)
	if e.to != nil {
		c.unrefDirLocked(e.to)
	}
}

func (c *crash) removeKept(name string, dir bool) {
	if dir {
		_ = os.RemoveAll(fdPath(c.hidden.fd, name))
		return
	}
	_ = unix.Unlinkat(c.hidden.fd, name, 0)
}

// cancel drops e, the creation of an entry that is being removed before
// it was durable: neither needs undoing.
func (c *crash) cancel(e *entryChange) {
	c.mu.Lock()
	home := e.home().ino
	l := c.changes[home]
	for i := range l {
		if l[i] == e {
			l = append(l[:i:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(c.changes, home)
	} else {
		c.changes[home] = l
	}
	c.mu.Unlock()
	c.forget(e)
}

// youngest is the newest change logged in folder dir that touches name,
// or nil. (A rename away from dir is logged in its destination, but the
// name it leaves free can only be taken again by a change logged here.)
func (c *crash) youngest(dir uint64, name string) *entryChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.changes[dir]
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].touches(dir, name) {
			return l[i]
		}
	}
	return nil
}

func (c *crash) pending(dir uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.changes[dir]) > 0
}

// made runs op, which makes entry name in folder n, and logs it.
func (c *crash) made(n *node, name string, out *fuse.EntryOut, op func() (*fusefs.Inode, syscall.Errno)) (*fusefs.Inode, syscall.Errno) {
	d, errno := c.refDir(n)
	if errno != 0 {
		return nil, errno
	}
	defer c.unrefDir(d)
	ch, errno := op()
	if errno == 0 {
		c.log(&entryChange{kind: created, dir: d, name: name, ino: out.Attr.Ino})
		c.unbirth(out.Attr.Ino)
	}
	return ch, errno
}

// remove removes entry name of folder n (a folder if rmdir): into the
// hidden folder, from where it can be put back, unless it was made since
// the folder's last fsync, when it goes for good with the record of its
// making.
func (c *crash) remove(n *node, name string, rmdir bool) syscall.Errno {
	d, errno := c.refDir(n)
	if errno != 0 {
		return errno
	}
	defer c.unrefDir(d)
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return errnoOf(err)
	}
	if e := c.youngest(d.ino, name); e != nil && e.kind == created && e.ino == st.Ino && !(rmdir && c.pending(st.Ino)) {
		// (A folder whose own changes are pending stays: undoing them
		// needs it.)
		flags := 0
		if rmdir {
			flags = unix.AT_REMOVEDIR
		}
		if err := unix.Unlinkat(d.fd, name, flags); err != nil {
			return errnoOf(err)
		}
		c.cancel(e)
		return 0
	}
	if rmdir {
		if errno := checkEmptyAt(d.fd, name); errno != 0 {
			return errno
		}
	}
	kept := c.keptName()
	if err := unix.Renameat(d.fd, name, c.hidden.fd, kept); err != nil {
		return errnoOf(err)
	}
	c.log(&entryChange{kind: removed, dir: d, name: name, ino: st.Ino, kept: kept, keptDir: rmdir})
	return 0
}

// rename renames name in folder n to newName in folder np, keeping a
// replaced inode in the hidden folder.
func (c *crash) rename(n *node, name string, np *node, newName string, flags uint32) syscall.Errno {
	if flags&unix.RENAME_WHITEOUT != 0 {
		return syscall.EINVAL
	}
	d, errno := c.refDir(n)
	if errno != 0 {
		return errno
	}
	defer c.unrefDir(d)
	to, errno := c.refDir(np)
	if errno != 0 {
		return errno
	}
	defer c.unrefDir(to)
	var src, dst unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &src, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return errnoOf(err)
	}
	replaces := unix.Fstatat(to.fd, newName, &dst, unix.AT_SYMLINK_NOFOLLOW) == nil
	e := &entryChange{kind: renamed, dir: d, name: name, to: to, toName: newName, ino: src.Ino}
	switch {
	case replaces && dst.Ino == src.Ino:
		// Two names of one inode: rename(2) leaves both; nothing to undo.
		return errnoOf(unix.Renameat2(d.fd, name, to.fd, newName, uint(flags)))
	case flags&unix.RENAME_EXCHANGE != 0:
		e.kind, e.toIno = exchanged, dst.Ino
	case replaces && flags&unix.RENAME_NOREPLACE == 0:
		e.keptDir, e.toIno = dst.Mode&unix.S_IFMT == unix.S_IFDIR, dst.Ino
		if e.kept, errno = c.keep(to, newName, e.keptDir); errno != 0 {
			return errno
		}
	}
	if err := unix.Renameat2(d.fd, name, to.fd, newName, uint(flags)); err != nil {
		if e.kept != "" {
			c.unkeep(to, newName, e)
		}
		return errnoOf(err)
	}
	c.log(e)
	return 0
}

// keep saves the inode that a rename is about to replace at name in
// folder to, in the hidden folder: a hard link, so the rename stays one
// atomic step, or for a folder (which cannot be linked, and must be
// empty) a move.
func (c *crash) keep(to *dirRef, name string, dir bool) (string, syscall.Errno) {
	kept := c.keptName()
	if !dir {
		return kept, errnoOf(unix.Linkat(to.fd, name, c.hidden.fd, kept, 0))
	}
	if errno := checkEmptyAt(to.fd, name); errno != 0 {
		return "", errno
	}
	return kept, errnoOf(unix.Renameat(to.fd, name, c.hidden.fd, kept))
}

// unkeep undoes keep after the rename failed.
func (c *crash) unkeep(to *dirRef, name string, e *entryChange) {
	if e.keptDir {
		_ = unix.Renameat(c.hidden.fd, e.kept, to.fd, name)
		return
	}
	_ = unix.Unlinkat(c.hidden.fd, e.kept, 0)
}

// undo reverses e in the backing folder, wherever its folders are now,
// and reports whether that changed anything. A change that a later,
// durable one made impossible to undo (its entry moved on, its old name
// taken) is left as it is: what is durable wins.
func (c *crash) undo(e *entryChange) (bool, error) {
	switch e.kind {
	case created:
		return removeIf(e.dir.fd, e.name, e.ino)
	case removed:
		back, err := moveBack(c.hidden.fd, e.kept, e.dir.fd, e.name)
		if back && e.keptDir {
			c.rebirth(e.ino)
		}
		return back, err
	case renamed:
		moved, err := moveIf(e.to.fd, e.toName, e.ino, e.dir.fd, e.name)
		if err != nil || e.kept == "" {
			return moved, err
		}
		back, err := moveBack(c.hidden.fd, e.kept, e.to.fd, e.toName)
		if back && e.keptDir {
			c.rebirth(e.toIno)
		}
		return moved || back, err
	case exchanged:
		if inoAt(e.dir.fd, e.name) != e.toIno || inoAt(e.to.fd, e.toName) != e.ino {
			return false, nil
		}
		return true, unix.Renameat2(e.to.fd, e.toName, e.dir.fd, e.name, unix.RENAME_EXCHANGE)
	}
	return false, fmt.Errorf("unknown change kind %d", e.kind)
}

// removeIf removes entry name of folder dir, with its contents, if it is
// still inode ino.
func removeIf(dir int, name string, ino uint64) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Ino != ino {
		return false, nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return true, os.RemoveAll(fdPath(dir, name))
	}
	return true, unix.Unlinkat(dir, name, 0)
}

// moveIf moves entry name of folder from back to toName in folder to if
// it is still inode ino and toName is free.
func moveIf(from int, name string, ino uint64, to int, toName string) (bool, error) {
	if inoAt(from, name) != ino {
		return false, nil
	}
	return moveBack(from, name, to, toName)
}

// moveBack moves from/name to to/toName unless toName is taken (by a
// durable change) or name is gone.
func moveBack(from int, name string, to int, toName string) (bool, error) {
	err := unix.Renameat2(from, name, to, toName, unix.RENAME_NOREPLACE)
	if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOENT) {
		return false, nil
	}
	return err == nil, err
}

// inoAt is the inode number of entry name of folder dir, 0 if none.
func inoAt(dir int, name string) uint64 {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0
	}
	return st.Ino
}

// checkEmptyAt fails with ENOTEMPTY unless folder name of dir is empty, as
// rmdir(2) would.
func checkEmptyAt(dir int, name string) syscall.Errno {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	names, _ := f.Readdirnames(1)
	if len(names) > 0 {
		return syscall.ENOTEMPTY
	}
	return 0
}

// fdPath names entry name of the folder open as fd, for calls that take
// a path.
func fdPath(fd int, name string) string {
	return fmt.Sprintf("/proc/self/fd/%d/%s", fd, name)
}
