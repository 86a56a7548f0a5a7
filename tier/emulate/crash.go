package emulate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// Loss is what a power cut undid (see "Crashable mounts" in the package
// doc).
type Loss struct {
	// Files is how many files (still named after the cut) got back their
	// durable size or durable bytes.
	Files int `json:"files"`
	// Bytes is the data those files lost: the bytes put back from
	// pre-images (whole pages, up to the durable size) plus the bytes cut
	// off past the durable size. A reorder cut puts back every pre-image
	// before it writes the kept writes again, so Bytes counts those too.
	Bytes int64 `json:"bytes"`
	// Entries is how many directory changes (creates, removals, renames,
	// links) were undone.
	Entries int `json:"entries"`
	// Kept is the unsynced data the cut's model kept (bytes of
	// overwrites below the durable size): 0 under ModelLoseAll. Under
	// ModelReorder it is the bytes of the kept writes written again, a
	// byte counted once per kept write that covers it.
	Kept int64 `json:"kept,omitempty"`
	// AtomicWrite is, for a torn cut, the atomic-write unit in bytes it
	// kept or lost whole.
	AtomicWrite int64 `json:"atomic_write,omitempty"`
	// Unlogged and UnloggedBytes are, for a reorder cut, the unsynced
	// writes (and their bytes) that found the mount's write log full
	// (Options.WriteLogCap): the cut lost them whole, as plain power
	// does, instead of drawing them.
	Unlogged      int64 `json:"unlogged,omitempty"`
	UnloggedBytes int64 `json:"unlogged_bytes,omitempty"`
}

// String says what the cut cost, for the run's record.
func (l Loss) String() string {
	var parts []string
	if l.Files > 0 || l.Bytes > 0 {
		parts = append(parts, fmt.Sprintf("rolled back %d %s (%d bytes of data lost)",
			l.Files, plural(l.Files, "file", "files"), l.Bytes))
	}
	if l.Entries > 0 {
		parts = append(parts, fmt.Sprintf("undid %d directory %s", l.Entries, plural(l.Entries, "change", "changes")))
	}
	if l.Kept > 0 {
		parts = append(parts, fmt.Sprintf("kept %d bytes of unsynced data", l.Kept))
	}
	if l.Unlogged > 0 {
		parts = append(parts, fmt.Sprintf("lost whole %d unsynced %s (%d bytes) the full write log could not reorder",
			l.Unlogged, plural(int(l.Unlogged), "write", "writes"), l.UnloggedBytes))
	}
	unit := ""
	if l.AtomicWrite > 0 {
		unit = fmt.Sprintf(" (writes torn at %d-byte units)", l.AtomicWrite)
	}
	if len(parts) == 0 {
		return "the power cut lost nothing: every change was durable" + unit
	}
	return "the power cut " + strings.Join(parts, " and ") + unit
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// crash is what a crashable mount keeps to undo every change that is not
// yet durable, and the switch that cuts its power.
type crash struct {
	// gate is held for reading by every operation of the mount (see
	// gated) and for writing while the power is cut or the mount settled,
	// so that an operation either completes before the cut or fails after
	// it.
	gate sync.RWMutex
	down bool // the power is cut; guarded by gate

	hidden  *hidden
	rootIno uint64
	// root is the mount's root inode, once mounted: the kernel's caches
	// are invalidated from it.
	root *fusefs.Inode

	mu sync.Mutex
	// files are the data undo records, by inode number.
	files map[uint64]*undoFile
	// handles counts the open handles of each inode that has an undo
	// record or may get one.
	handles map[uint64]int
	// changes are the directory changes not yet durable, by the inode
	// number of the folder whose fsync makes them durable.
	changes map[uint64][]*entryChange
	dirs    map[uint64]*dirRef
	seq     uint64
	kept    atomic.Uint64 // names the inodes kept in hidden
	// reborn are the folders a power cut put back after an rmdir or a
	// rename over them, by inode number: the generation lookups give
	// them from now on (see rebirth).
	reborn  map[uint64]uint64
	lastGen uint64
	// atomicWrite is the device's atomic-write unit in bytes, which
	// ModelTorn keeps or loses whole.
	atomicWrite int64
	// volatileCache makes O_DIRECT writes unsynced until an fsync, as on
	// a device with a volatile write cache (Options.VolatileCache).
	volatileCache bool
	// writeLog, set on a mount that logs its unsynced writes
	// (Options.LogWrites), bounds the bytes logged for ModelReorder.
	writeLog *writeLog
}

// newCrash prepares the undo state of a crashable mount of backing.
func newCrash(backing string) (*crash, error) {
	var st unix.Stat_t
	if err := unix.Stat(backing, &st); err != nil {
		return nil, fmt.Errorf("crashable mount: %w", err)
	}
	h, err := openHidden(backing)
	if err != nil {
		return nil, fmt.Errorf("crashable mount: %w", err)
	}
	return &crash{
		hidden:  h,
		rootIno: st.Ino,
		files:   map[uint64]*undoFile{},
		handles: map[uint64]int{},
		changes: map[uint64][]*entryChange{},
		dirs:    map[uint64]*dirRef{},

		atomicWrite: DefaultAtomicWrite,
	}, nil
}

// enter admits an operation, which must call exit when done; false once
// the power is cut.
func (c *crash) enter() bool {
	c.gate.RLock()
	if c.down {
		c.gate.RUnlock()
		return false
	}
	return true
}

func (c *crash) exit() { c.gate.RUnlock() }

// up reports whether the power is on.
func (c *crash) up() bool {
	c.gate.RLock()
	defer c.gate.RUnlock()
	return !c.down
}

// settle makes everything done so far durable.
func (c *crash) settle() error {
	c.gate.Lock()
	defer c.gate.Unlock()
	if c.down {
		return errors.New("the power is cut: PowerOn first")
	}
	return c.forgetAll()
}

// powerCut fails every operation from now on, rolls the backing folder
// back to its durable state (as model m has it) and makes the kernel drop what it cached of
// the rest.
func (c *crash) powerCut(m Model) (Loss, error) {
	if err := m.Check(); err != nil {
		return Loss{}, err
	}
	if m.Kind == ModelReorder && c.writeLog == nil {
		return Loss{}, errors.New("power-loss model reorder needs the mount to log its unsynced writes: start it with Options.LogWrites")
	}
	c.gate.Lock()
	if c.down {
		c.gate.Unlock()
		return Loss{}, errors.New("the power is already cut")
	}
	c.down = true
	// Operations fail from here on, so the rollback runs alone; it runs
	// without the gate held, so that those failures are answered while
	// it runs (the kernel holds folder locks while it waits for them,
	// which the invalidation below needs).
	c.gate.Unlock()
	loss, touched, inodes, err := c.rollback(m)
	if m.Kind == ModelTorn {
		loss.AtomicWrite = c.atomicWrite
	}
	c.invalidate(touched, inodes)
	return loss, err
}

// powerOn lets operations succeed again, with the rolled-back state as
// the durable one.
func (c *crash) powerOn() error {
	if c.up() {
		return nil
	}
	// Pages of shared writable mappings dirtied after the cut (by the
	// processes killed since) would be written back once the power is
	// on: invalidating them now sends them while writes still fail.
	c.invalidate(nil, nil)
	c.gate.Lock()
	defer c.gate.Unlock()
	err := c.forgetAll()
	c.down = false
	return err
}

// run is one command of the owner's (see control.go).
func (c *crash) run(cmd command) reply {
	var err error
	var r reply
	switch op := cmd.Op; op {
	case opSettle:
		err = c.settle()
	case opCut:
		var loss Loss
		loss, err = c.powerCut(cmd.Model)
		r.Loss = &loss
	case opOn:
		err = c.powerOn()
	default:
		err = fmt.Errorf("unknown command %q", op)
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// rollback undoes every change not durable: directory changes newest
// first, then file data, of which model m may keep some. It returns what it undid, the entries it
// touched and the inodes whose data it rolled back, for invalidation.
func (c *crash) rollback(m Model) (Loss, []entryName, []*fusefs.Inode, error) {
	c.mu.Lock()
	var changes []*entryChange
	for _, l := range c.changes {
		changes = append(changes, l...)
	}
	files := maps.Clone(c.files)
	c.mu.Unlock()
	slices.SortFunc(changes, func(a, b *entryChange) int { return cmp.Compare(b.seq, a.seq) })

	var loss Loss
	var errs []error
	var touched []entryName
	for _, e := range changes {
		changed, err := c.undo(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("undo %s: %w", e, err))
		}
		if changed {
			loss.Entries++
			touched = append(touched, e.names()...)
		}
	}
	var inodes []*fusefs.Inode
	for ino, u := range files {
		bytes, kept, changed, err := u.rollback(m, ino, c.atomicWrite)
		if err != nil {
			errs = append(errs, err)
		}
		loss.Kept += kept
		if m.Kind == ModelReorder {
			n, b := u.unloggedWrites()
			loss.Unlogged += n
			loss.UnloggedBytes += b
		}
		if changed {
			loss.Files++
			loss.Bytes += bytes
			inodes = append(inodes, u.inode)
		}
	}
	if err := c.forgetAll(); err != nil {
		errs = append(errs, err)
	}
	return loss, touched, inodes, errors.Join(errs...)
}

// forgetAll drops every undo record: what they would undo is durable
// from now on.
func (c *crash) forgetAll() error {
	c.mu.Lock()
	changes := c.changes
	files := c.files
	c.changes = map[uint64][]*entryChange{}
	c.files = map[uint64]*undoFile{}
	c.mu.Unlock()
	for _, l := range changes {
		for _, e := range l {
			c.forget(e)
		}
	}
	for _, u := range files {
		u.mu.Lock()
		u.drop()
		u.mu.Unlock()
	}
	return c.hidden.clear()
}

// invalidate makes the kernel forget what it cached of the state before
// the cut: the entries the rollback touched, and the data and attributes
// of every inode it knows (all of them rather than those rolled back, so
// that no dirty page of a shared mapping survives to be written back
// later) and of those rolled back that are in no folder it knows.
func (c *crash) invalidate(touched []entryName, inodes []*fusefs.Inode) {
	if c.root == nil {
		return
	}
	live := c.liveInodes()
	for _, t := range touched {
		if p := live[t.dir]; p != nil {
			// go-fuse's tree must follow the backing folder too: a path
			// is what the loopback opens.
			p.RmChild(t.name)
			_ = p.NotifyEntry(t.name)
		}
	}
	for _, n := range live {
		_ = n.NotifyContent(0, 0)
	}
	for _, n := range inodes {
		if n != nil {
			_ = n.NotifyContent(0, 0)
		}
	}
}

// rebirth gives folder ino, which a power cut put back, a generation of
// its own, so that go-fuse hands the kernel a new node for it. The kernel
// marked the folder dead when it was removed; should it still hold that
// inode when the folder is looked up again (it may, until it forgets it),
// a lookup answered with the old node would revive the dead inode, on
// which every readdir fails with ENOENT.
func (c *crash) rebirth(ino uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reborn == nil {
		c.reborn = map[uint64]uint64{}
	}
	// go-fuse's own generations are birth times in ns, far below 2^63.
	c.lastGen++
	c.reborn[ino] = 1<<63 | c.lastGen
}

// unbirth forgets the generation of ino, made anew through the mount: an
// inode number the backing filesystem reused.
func (c *crash) unbirth(ino uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.reborn, ino)
}

// rebornGen is the generation of ino if a power cut put it back.
func (c *crash) rebornGen(ino uint64) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gen, ok := c.reborn[ino]
	return gen, ok
}

// anyReborn reports whether any folder was put back by a power cut.
func (c *crash) anyReborn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reborn) > 0
}

// liveInodes are the inodes go-fuse knows, by backing inode number.
func (c *crash) liveInodes() map[uint64]*fusefs.Inode {
	live := map[uint64]*fusefs.Inode{c.rootIno: c.root}
	for todo := []*fusefs.Inode{c.root}; len(todo) > 0; {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, ch := range n.Children() {
			ino := ch.StableAttr().Ino
			if _, seen := live[ino]; seen {
				continue
			}
			live[ino] = ch
			if ch.IsDir() {
				todo = append(todo, ch)
			}
		}
	}
	return live
}

// close removes the hidden folder when the mount is gone: what it kept
// stays removed, as it would on a machine that did not crash.
func (c *crash) close() error {
	return c.hidden.close()
}

// hidden is the folder where a crashable mount keeps the inodes of entries
// removed or replaced since their folder's last fsync, until they are
// durable or put back, and the spill files of data pre-images. It is a
// sibling of the backing folder, on the same mount (so moving an inode
// there is a rename, which keeps it and costs nothing), and outside what
// the mount shows.
type hidden struct {
	path string
	fd   int // O_PATH
}

// HiddenFolder is where a crashable mount of backing keeps what a power
// cut would put back (a sibling of backing, outside the mount's view). The
// helper removes it when it exits; one a killed helper left is the
// caller's to record and remove (tierbench's ledger does).
func HiddenFolder(backing string) string { return hiddenPath(backing) }

// hiddenPath is the hidden folder of backing.
func hiddenPath(backing string) string {
	return filepath.Join(filepath.Dir(backing), ".tierbench-crash-"+filepath.Base(backing))
}

// openHidden makes the hidden folder of backing afresh: one left by a
// helper that was killed holds nothing anyone needs.
func openHidden(backing string) (*hidden, error) {
	path := hiddenPath(backing)
	if err := os.RemoveAll(path); err != nil {
		return nil, fmt.Errorf("remove a stale %s: %w", path, err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	h := &hidden{path: path, fd: -1}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		h.close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	h.fd = fd
	if err := sameMount(backing, path); err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

// sameMount refuses a backing folder that is a mount point of its own:
// its hidden folder, a sibling, would be on another mount, where renames
// and links from the backing folder fail.
func sameMount(backing, hidden string) error {
	a, err := mountID(backing)
	if err != nil {
		return err
	}
	b, err := mountID(hidden)
	if err != nil {
		return err
	}
	if a != b {
		return fmt.Errorf("a crashable mount keeps removed files next to its backing folder, in %s, which is on another mount than %s: use a folder inside that mount as the backing folder", hidden, backing)
	}
	return nil
}

// mountID identifies the mount path is on (its device where statx cannot
// say, Linux before 5.8).
func mountID(path string) (uint64, error) {
	var x unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &x); err != nil {
		return 0, fmt.Errorf("statx %s: %w", path, err)
	}
	if x.Mask&unix.STATX_MNT_ID == 0 {
		return unix.Mkdev(x.Dev_major, x.Dev_minor), nil
	}
	return x.Mnt_id, nil
}

// clear removes everything kept.
func (h *hidden) clear() error {
	names, err := readNames(h.path)
	if err != nil {
		return fmt.Errorf("clear %s: %w", h.path, err)
	}
	var errs []error
	for _, name := range names {
		if err := os.RemoveAll(filepath.Join(h.path, name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (h *hidden) close() error {
	if h.fd >= 0 {
		unix.Close(h.fd)
		h.fd = -1
	}
	if err := os.RemoveAll(h.path); err != nil {
		return fmt.Errorf("remove %s: %w", h.path, err)
	}
	return nil
}

func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// errnoOf is the errno err carries: 0 for nil, EIO if it carries none.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}
