package emulate

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// pageSize is the granularity of pre-images: the first change to a page
// since its file's last fsync saves the page's durable bytes.
const pageSize = 4096

// undoFile is what it takes to put one file back to its durable state:
// its durable size, and the durable bytes of every page changed since its
// last fsync. The pages are saved in a spill file (unnamed, in the hidden
// folder) rather than in memory, so that a database that overwrites
// gigabytes between fsyncs costs disk space next to its data, not the
// helper's memory; the helper keeps a map entry per saved page.
//
// Bytes at or past the durable size need no pre-image: cutting the file
// back to its durable size removes them. So appends cost no copy.
type undoFile struct {
	mu sync.Mutex
	// gone is set once the record is dropped (the mount settled or rolled
	// back, the file's last handle closed while it was durable): a writer
	// that waited for it takes a new one.
	gone bool
	// changed says the file changed since it was last durable. An fsync
	// resets the record rather than drop it, so that a file written and
	// fsynced in turn does not open and close its files each time.
	changed bool
	// fd is the file, opened for this record so that it can be rolled
	// back whatever became of the handles and names it was written
	// through; -1 until the first change.
	fd   int
	size int64 // the durable size
	// pages maps a page index to its slot in the spill file; a slot holds
	// the page's durable bytes below size. (Slots are reused after a
	// reset: every byte of a slot below size is written before it is
	// read.)
	pages    map[int64]int64
	spill    int   // the spill file, -1 until a page is saved
	slots    int64 // slots used in the spill file
	spillDir int   // where to make the spill file
	// inode is the kernel's inode of the file, whose cache is invalidated
	// after a rollback.
	inode *fusefs.Inode
	// log holds the writes since the last fsync, on a mount that logs
	// them for ModelReorder (crashreorder.go); nil elsewhere.
	log *fileLog
}

func newUndoFile(spillDir int) *undoFile {
	return &undoFile{fd: -1, spill: -1, spillDir: spillDir, pages: map[int64]int64{}}
}

// start opens the file for the record and takes its durable size: it is
// called before the first change since the file was last durable, so the
// file is still in its durable state.
func (u *undoFile) start(open func() (int, error)) error {
	fd, err := open()
	if err != nil {
		return fmt.Errorf("open for undo: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return fmt.Errorf("fstat for undo: %w", err)
	}
	u.fd, u.size = fd, st.Size
	return nil
}

// reset makes the record say the file is durable as it is: it was just
// fsynced.
func (u *undoFile) reset() error {
	var st unix.Stat_t
	if err := unix.Fstat(u.fd, &st); err != nil {
		return err
	}
	u.size, u.slots, u.changed = st.Size, 0, false
	clear(u.pages)
	if u.log != nil {
		u.log.forget()
	}
	return nil
}

// save saves the durable bytes of every page that [lo, hi) overlaps below
// the durable size and that is not saved yet: what a change of [lo, hi)
// is about to overwrite.
func (u *undoFile) save(lo, hi int64) error {
	u.changed = true
	hi = min(hi, u.size)
	for p := max(lo, 0) / pageSize; p*pageSize < hi; {
		if u.saved(p) {
			p++
			continue
		}
		q := p + 1
		for q*pageSize < hi && !u.saved(q) {
			q++
		}
		if err := u.capture(p, q); err != nil {
			return err
		}
		p = q
	}
	return nil
}

func (u *undoFile) saved(p int64) bool {
	_, ok := u.pages[p]
	return ok
}

// capture copies pages [p, q), none of them saved, to consecutive new
// slots.
func (u *undoFile) capture(p, q int64) error {
	if err := u.openSpill(); err != nil {
		return err
	}
	slot := u.slots
	u.slots += q - p
	start := p * pageSize
	if n := min(q*pageSize, u.size) - start; n > 0 {
		if err := copyRange(u.spill, slot*pageSize, u.fd, start, n); err != nil {
			return fmt.Errorf("save pre-image: %w", err)
		}
	}
	for i := p; i < q; i++ {
		u.pages[i] = slot + i - p
	}
	return nil
}

// openSpill makes the spill file, unnamed so that nothing is left of it
// if the helper dies.
func (u *undoFile) openSpill() error {
	if u.spill >= 0 {
		return nil
	}
	fd, err := unix.Openat(u.spillDir, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.EINVAL) {
		// No O_TMPFILE here: a named file, unlinked at once.
		name := fmt.Sprintf("spill-%d", spillNames.Add(1))
		fd, err = unix.Openat(u.spillDir, name, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err == nil {
			_ = unix.Unlinkat(u.spillDir, name, 0)
		}
	}
	if err != nil {
		return fmt.Errorf("spill file: %w", err)
	}
	u.spill = fd
	return nil
}

// spillNames names spill files where they cannot be made unnamed.
var spillNames atomic.Uint64

// writeDurable writes data at off, through a handle whose writes are
// durable when they return (O_SYNC, O_DSYNC, O_DIRECT), and makes the
// record agree: those bytes are now durable, and so is the size they
// reach, with zeros in any gap they leave past the old durable size.
func (u *undoFile) writeDurable(fd int, data []byte, off int64) (int, error) {
	u.changed = true
	if off > u.size {
		if err := u.zeroGap(u.size, off); err != nil {
			return 0, err
		}
	}
	n, err := unix.Pwrite(fd, data, off)
	if n <= 0 {
		return n, err
	}
	if oerr := u.overlay(data[:n], off); oerr != nil {
		return n, oerr
	}
	if u.log != nil {
		u.log.durable(off, int64(n))
	}
	u.size = max(u.size, off+int64(n))
	return n, err
}

// zeroGap makes [lo, hi), past the durable size, durable zeros in the
// pre-images: a durable write beyond the durable size leaves a hole.
func (u *undoFile) zeroGap(lo, hi int64) error {
	for p := lo / pageSize; p*pageSize < hi; p++ {
		if !u.saved(p) {
			if err := u.capture(p, p+1); err != nil {
				return err
			}
		}
		start := p * pageSize
		from, to := max(lo, start), min(hi, start+pageSize)
		if err := u.putSlot(p, make([]byte, to-from), from); err != nil {
			return err
		}
	}
	return nil
}

// overlay writes durable data at off into the pre-images of the pages it
// overlaps that are saved (the others hold the data themselves).
func (u *undoFile) overlay(data []byte, off int64) error {
	end := off + int64(len(data))
	for p := off / pageSize; p*pageSize < end; p++ {
		if !u.saved(p) {
			continue
		}
		start := p * pageSize
		from, to := max(off, start), min(end, start+pageSize)
		if err := u.putSlot(p, data[from-off:to-off], from); err != nil {
			return err
		}
	}
	return nil
}

// putSlot writes b, the durable bytes at file offset off, into the slot of
// page p.
func (u *undoFile) putSlot(p int64, b []byte, off int64) error {
	pos := u.pages[p]*pageSize + off - p*pageSize
	if _, err := unix.Pwrite(u.spill, b, pos); err != nil {
		return fmt.Errorf("update pre-image: %w", err)
	}
	return nil
}

// rollback puts the file back to its durable size and, as model m
// decides, its durable bytes (ino names the file to the model's draws),
// and reports how many bytes that undid, how many unsynced bytes the model
// kept and whether anything changed. A file no longer in any folder is
// left alone: no one can see it.
func (u *undoFile) rollback(m Model, ino uint64, atomicWrite int64) (undone, kept int64, changed bool, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.gone || u.fd < 0 || !u.changed {
		return 0, 0, false, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(u.fd, &st); err != nil {
		return 0, 0, false, fmt.Errorf("roll back: fstat: %w", err)
	}
	if st.Nlink == 0 {
		return 0, 0, false, nil
	}
	if err := unix.Ftruncate(u.fd, u.size); err != nil {
		return 0, 0, false, fmt.Errorf("roll back: truncate to the durable size %d: %w", u.size, err)
	}
	var restored int64
	if m.Kind == ModelReorder {
		restored, kept, err = u.rollbackReorder(st.Size, m, ino)
	} else {
		restored, kept, err = u.restore(st.Size, m, ino, atomicWrite)
	}
	cut := max(st.Size-u.size, 0)
	changed = st.Size != u.size || restored > 0
	return cut + restored, kept, changed, err
}

// restore copies back the saved bytes model m loses (of a file of size
// bytes at the cut), in runs of
// consecutive bytes and slots, and returns the bytes it put back and
// those it kept.
func (u *undoFile) restore(size int64, m Model, ino uint64, atomicWrite int64) (restored, kept int64, err error) {
	if len(u.pages) == 0 {
		return 0, 0, nil
	}
	// A slot past the spill file's end (a page saved beyond the file's
	// size, then zeroed or never written) reads as zeros.
	if err := unix.Ftruncate(u.spill, u.slots*pageSize); err != nil {
		return 0, 0, fmt.Errorf("roll back: spill file: %w", err)
	}
	pages := make([]int64, 0, len(u.pages))
	for p := range u.pages {
		pages = append(pages, p)
	}
	slices.Sort(pages)
	lost, kept := u.lostSpans(pages, size, m, ino, atomicWrite)
	for _, s := range lost {
		if err := copyRange(u.fd, s.off, u.spill, s.slot, s.n); err != nil {
			return restored, kept, fmt.Errorf("roll back: put a pre-image back: %w", err)
		}
		restored += s.n
	}
	return restored, kept, nil
}

// drop forgets the record and closes its files; its caller holds mu.
func (u *undoFile) drop() {
	u.gone = true
	if u.log != nil {
		u.log.forget()
	}
	for _, fd := range []int{u.fd, u.spill} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	u.fd, u.spill = -1, -1
}

// copyRange copies n bytes from src at srcOff to dst at dstOff, in the
// kernel where it can; a source that ends early leaves the rest as it is.
func copyRange(dst int, dstOff int64, src int, srcOff int64, n int64) error {
	for n > 0 {
		c, err := unix.CopyFileRange(src, &srcOff, dst, &dstOff, int(min(n, 1<<30)), 0)
		if err != nil {
			if errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EINVAL) ||
				errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP) {
				return copyBuffered(dst, dstOff, src, srcOff, n)
			}
			return err
		}
		if c == 0 {
			return nil
		}
		n -= int64(c)
	}
	return nil
}

// copyBuffered is copyRange through a buffer, for filesystems that cannot
// copy ranges themselves.
func copyBuffered(dst int, dstOff int64, src int, srcOff int64, n int64) error {
	buf := make([]byte, min(n, 1<<20))
	for n > 0 {
		r, err := unix.Pread(src, buf[:min(n, int64(len(buf)))], srcOff)
		if err != nil {
			return err
		}
		if r == 0 {
			return nil
		}
		if _, err := unix.Pwrite(dst, buf[:r], dstOff); err != nil {
			return err
		}
		srcOff, dstOff, n = srcOff+int64(r), dstOff+int64(r), n-int64(r)
	}
	return nil
}

// fileFor returns the undo record of inode ino, locked, starting one with
// open if the file has none (it is durable as it is).
func (c *crash) fileFor(ino uint64, inode *fusefs.Inode, open func() (int, error)) (*undoFile, syscall.Errno) {
	for {
		c.mu.Lock()
		u := c.files[ino]
		if u == nil {
			u = newUndoFile(c.hidden.fd)
			if c.writeLog != nil {
				u.log = &fileLog{budget: c.writeLog}
			}
			c.files[ino] = u
		}
		c.mu.Unlock()
		u.mu.Lock()
		if u.gone {
			u.mu.Unlock()
			continue
		}
		if u.fd < 0 {
			if err := u.start(open); err != nil {
				u.mu.Unlock()
				return nil, errnoOf(err)
			}
		}
		if inode != nil {
			u.inode = inode
		}
		return u, 0
	}
}

// existing returns inode ino's undo record, locked, or nil if the file
// is durable as it is.
func (c *crash) existing(ino uint64) *undoFile {
	for {
		c.mu.Lock()
		u := c.files[ino]
		c.mu.Unlock()
		if u == nil {
			return nil
		}
		u.mu.Lock()
		if !u.gone {
			return u
		}
		u.mu.Unlock()
	}
}

// change runs op, which changes inode ino's data or size, with the file's
// undo record locked, after saving what op overwrites: the pages
// overlapping [lo, hi).
func (c *crash) change(ino uint64, inode *fusefs.Inode, open func() (int, error), lo, hi int64, op func() syscall.Errno) syscall.Errno {
	u, errno := c.fileFor(ino, inode, open)
	if errno != 0 {
		return errno
	}
	defer u.mu.Unlock()
	if err := u.save(lo, hi); err != nil {
		// The change is refused: it could not be undone (ENOSPC, say).
		return errnoOf(err)
	}
	return op()
}

// synced runs sync, an fsync of inode ino, and once it succeeds resets
// the file's undo record: its data and size are durable. Writes that
// arrive meanwhile (writeback of shared mappings does not wait for the
// inode lock that the kernel holds over an fsync) wait for it, so they
// are not counted as durable.
func (c *crash) synced(ino uint64, sync func() syscall.Errno) syscall.Errno {
	u := c.existing(ino)
	if u == nil {
		return sync()
	}
	defer u.mu.Unlock()
	if errno := sync(); errno != 0 {
		return errno
	}
	if u.reset() != nil {
		c.dropFile(ino, u)
	}
	return 0
}

// opened counts a handle of inode ino: its undo record stays while any is
// open.
func (c *crash) opened(ino uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handles[ino]++
}

// released drops inode ino's undo record once its last handle is closed,
// if the file is durable as it is; one with changes to undo stays.
func (c *crash) released(ino uint64) {
	c.mu.Lock()
	c.handles[ino]--
	open := c.handles[ino]
	if open <= 0 {
		delete(c.handles, ino)
	}
	u := c.files[ino]
	c.mu.Unlock()
	if open > 0 || u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.gone || u.changed {
		return
	}
	c.mu.Lock()
	last := c.handles[ino] == 0 && c.files[ino] == u
	if last {
		delete(c.files, ino)
	}
	c.mu.Unlock()
	if last {
		u.drop()
	}
}

// dropFile drops u, inode ino's locked undo record.
func (c *crash) dropFile(ino uint64, u *undoFile) {
	u.drop()
	c.mu.Lock()
	if c.files[ino] == u {
		delete(c.files, ino)
	}
	c.mu.Unlock()
}

// truncateRange is what a size change from a file's durable size to
// size overwrites: nothing if it grows the file (the durable size cuts
// the growth off), the cut-off bytes if it shrinks it.
func truncateRange(size int64) (lo, hi int64) {
	return size, 1<<63 - 1
}

// allocateRange is what fallocate(2) with mode overwrites, from off for
// n bytes: nothing when it only allocates, the range when it punches or
// zeroes it, everything from off when it shifts data (collapse, insert).
func allocateRange(off, n int64, mode uint32) (lo, hi int64) {
	switch mode &^ unix.FALLOC_FL_KEEP_SIZE {
	case 0:
		return 0, 0
	case unix.FALLOC_FL_PUNCH_HOLE, unix.FALLOC_FL_ZERO_RANGE:
		return off, off + n
	}
	return off, 1<<63 - 1
}
