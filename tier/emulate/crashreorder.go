package emulate

import (
	"fmt"
	"sync/atomic"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// ModelReorder keeps each write made to a file since its last fsync with
// probability Keep, whole and independently, and applies the kept ones
// in their original order over the file's durable bytes: every subset is
// what some order of persisting those writes leaves when the power goes
// (CrashMonkey and ACE's replay between flushes, ALICE's reorderings,
// LazyFS's torn sequences). Page pre-images cannot do it (a later write
// to a page hides an earlier one's bytes), so a mount that may be cut
// under it logs each unsynced write's bytes (Options.LogWrites). A write
// is one write request as the layer gets it: the kernel sends a write(2)
// over 1 MiB (the mount's max_write) in pieces, each kept or lost alone.
const ModelReorder = "reorder"

// DefaultWriteLogCap is the bytes of unsynced writes a mount logs for
// ModelReorder at most, over all its files, when Options.WriteLogCap is
// 0: 256 MiB of the helper's memory. A write that would pass the cap is
// not logged, so a reorder cut loses it whole as plain power does, and
// the cut says how many writes that was (Loss.Unlogged).
const DefaultWriteLogCap = 256 << 20

// writeLog is a mount's budget of logged bytes: shared by its files,
// given back as each file is fsynced (its log is then dropped).
type writeLog struct {
	cap  int64
	used atomic.Int64
}

// take reserves n bytes, false if the cap would be passed.
func (l *writeLog) take(n int64) bool {
	if l.used.Add(n) > l.cap {
		l.used.Add(-n)
		return false
	}
	return true
}

// logged is one unsynced write: its bytes at off. seq numbers it among
// its file's writes since the last fsync, for the cut's draw; a write a
// durable one overwrote in part keeps its seq in each piece left.
type logged struct {
	seq  int64
	off  int64
	data []byte
}

// fileLog is an undo record's log of the writes since its file's last
// fsync, kept only on a mount with a writeLog.
type fileLog struct {
	budget  *writeLog
	writes  []logged
	next    int64 // seq of the next write
	charged int64 // bytes taken from budget
	// unlogged counts the writes (and their bytes) the cap kept out of
	// the log since the last fsync: a reorder cut loses them whole.
	unlogged, unloggedBytes int64
}

// add logs data written at off; the bytes are copied (go-fuse reuses its
// buffers).
func (l *fileLog) add(data []byte, off int64) {
	seq := l.next
	l.next++
	n := int64(len(data))
	if !l.budget.take(n) {
		l.unlogged++
		l.unloggedBytes += n
		return
	}
	l.charged += n
	l.writes = append(l.writes, logged{seq: seq, off: off, data: append([]byte(nil), data...)})
}

// forget drops the log and gives its bytes back: the file was fsynced, or
// its record dropped.
func (l *fileLog) forget() {
	l.budget.used.Add(-l.charged)
	*l = fileLog{budget: l.budget}
}

// durable cuts [off, off+n) out of every logged write: a durable write
// made it so, and no cut may put an older write's bytes over it.
func (l *fileLog) durable(off, n int64) {
	end := off + n
	var out []logged
	for _, w := range l.writes {
		wEnd := w.off + int64(len(w.data))
		if wEnd <= off || w.off >= end {
			out = append(out, w)
			continue
		}
		if w.off < off {
			out = append(out, logged{seq: w.seq, off: w.off, data: w.data[:off-w.off]})
		}
		if wEnd > end {
			out = append(out, logged{seq: w.seq, off: end, data: w.data[end-w.off:]})
		}
	}
	l.writes = out
}

// replay writes the logged writes model m keeps, in their order, to fd,
// a file already put back to its durable state of size bytes; ino names
// the file to the draws. Bytes at or past size are not written: a file's
// growth is lost under every model. It returns the bytes written.
func (l *fileLog) replay(fd int, size int64, m Model, ino uint64) (kept int64, err error) {
	for _, w := range l.writes {
		if !m.keeps(ino, w.seq) || w.off >= size {
			continue
		}
		b := w.data[:min(int64(len(w.data)), size-w.off)]
		if _, err := unix.Pwrite(fd, b, w.off); err != nil {
			return kept, fmt.Errorf("roll back: write a kept write again: %w", err)
		}
		kept += int64(len(b))
	}
	return kept, nil
}

// changeWrite is change for a write of data at off through op (which
// reports the bytes written): on a mount that logs writes, what op wrote
// is logged under the file's record.
func (c *crash) changeWrite(ino uint64, inode *fusefs.Inode, open func() (int, error), data []byte, off int64, op func() (int, syscall.Errno)) syscall.Errno {
	u, errno := c.fileFor(ino, inode, open)
	if errno != 0 {
		return errno
	}
	defer u.mu.Unlock()
	if err := u.save(off, off+int64(len(data))); err != nil {
		return errnoOf(err)
	}
	n, errno := op()
	if u.log != nil && n > 0 {
		u.log.add(data[:n], off)
	}
	return errno
}

// rollbackReorder puts u's file back to its durable bytes (of a file of
// size bytes at the cut) and writes again the logged writes m keeps; it
// returns the bytes put back and those written again.
func (u *undoFile) rollbackReorder(size int64, m Model, ino uint64) (restored, kept int64, err error) {
	if restored, _, err = u.restore(size, Model{}, ino, 0); err != nil {
		return restored, 0, err
	}
	kept, err = u.log.replay(u.fd, u.size, m, ino)
	return restored, kept, err
}

// unloggedWrites are the writes since the last fsync that the cap kept
// out of the log, and their bytes.
func (u *undoFile) unloggedWrites() (n, bytes int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.log == nil || u.gone {
		return 0, 0
	}
	return u.log.unlogged, u.log.unloggedBytes
}
