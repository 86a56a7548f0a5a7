package tier

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/procfs"
	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/throttle"
)

// Resource kinds tierbench creates and must undo.
const (
	KindDir = "dir" // a folder tierbench created (removed with its contents)
	// KindTierDir is a folder tier's folder that tierbench created because
	// it was missing: removed while it is empty, so what a run kept there
	// (--keep) stays, and the folder with it.
	KindTierDir = "tier-dir"
	KindFile    = "file"  // a file tierbench created (a loop device's backing file)
	KindMount   = "mount" // a filesystem tierbench mounted
	KindLoop    = "loop"  // a loop device attached to Backing
	// KindCgroup is a block I/O throttle group (see package throttle).
	KindCgroup = throttle.LedgerKind
	// KindProcess is a server process group tierbench started.
	KindProcess = "process"
	// KindFuseServer is the helper process that serves an emulated tier's
	// FUSE mount (Path is the mount point; see emulate.Start).
	KindFuseServer = "fuse-server"
	// KindStudy is a study being run: undoing it after a kill marks it
	// interrupted in its results store, which a package above tier does
	// (see RegisterKind).
	KindStudy = "study"
)

// KindFuncs are how a ledger kind recorded by a package above tier is
// undone and described; that package registers them (RegisterKind), so
// tier need not know what the kind is. Undo must be idempotent, as Undo
// is.
type KindFuncs struct {
	Undo func(Resource) error
	// Describe names the resource for cleanup's output; nil: its kind and
	// path.
	Describe func(Resource) string
}

var (
	kindsMu sync.RWMutex
	kinds   = map[string]KindFuncs{}
)

// RegisterKind makes kind undoable by Undo, Cleanup and described by
// Resource.String. A package above tier calls it from an init function,
// so any binary that can record the kind can also undo it (cleanup links
// them all). It panics on a kind registered twice or without Undo.
func RegisterKind(kind string, f KindFuncs) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[kind]; dup || f.Undo == nil {
		panic(fmt.Sprintf("tier: ledger kind %q registered twice or without Undo", kind))
	}
	kinds[kind] = f
}

func registered(kind string) (KindFuncs, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	f, ok := kinds[kind]
	return f, ok
}

// Resource is one thing tierbench created. It is written to the ledger
// before it is created, so a killed tierbench leaves a record of it.
type Resource struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`              // folder, file, mount point, or loop device once known
	Backing string `json:"backing,omitempty"` // loop: the backing file (finds the device if Path is empty)
	// PID and StartTicks identify a process (its start time tells it from a
	// later process that reuses the pid).
	PID        int    `json:"pid,omitempty"`
	StartTicks uint64 `json:"start_ticks,omitempty"`
	// Pending marks a folder recorded before its Mkdir and not yet
	// confirmed: undoing it removes it only if it is empty, since a folder
	// that existed before was not tierbench's (see Ledger.Mkdir).
	Pending bool `json:"pending,omitempty"`
	// Study is a study id (KindStudy: Path is its results folder).
	Study string `json:"study,omitempty"`
	// Extra is the record's own data for a kind a package above tier
	// registered, in that package's JSON, which tier keeps as it is and
	// never reads (platform/kube: how to reach the cluster again). Its
	// key is "kube" because platform/kube's cluster reference was the
	// first such data, once a field of tier's own: keeping the key lets a
	// ledger written before or after this field became generic be read
	// and cleaned up by either tierbench.
	Extra json.RawMessage `json:"kube,omitempty"`
	Owner int             `json:"owner_pid"`
	Since time.Time       `json:"since"`
}

func (r Resource) String() string {
	if r.Kind == KindProcess {
		return fmt.Sprintf("server process %d (%s)", r.PID, r.Path)
	}
	if r.Kind == KindFuseServer {
		return fmt.Sprintf("latency server process %d of %s", r.PID, r.Path)
	}
	if r.Kind == KindLoop {
		return fmt.Sprintf("loop device %s backed by %s", orUnknown(r.Path), r.Backing)
	}
	if r.Kind == KindStudy {
		return fmt.Sprintf("study %s (results in %s)", r.Study, r.Path)
	}
	if f, ok := registered(r.Kind); ok && f.Describe != nil {
		return f.Describe(r)
	}
	return r.Kind + " " + r.Path
}

func orUnknown(s string) string {
	if s == "" {
		return "(not yet attached)"
	}
	return s
}

// Ledger is the state file of what tierbench created and has not undone.
// Every change takes an exclusive lock on the file, so concurrent tierbench
// processes do not lose each other's records.
type Ledger struct {
	dir string
}

// StateDir is where tierbench keeps its ledger and the mount points and
// images of provisioned tiers: $TIERBENCH_STATE_DIR, else /var/lib/tierbench
// for root, else ~/.local/state/tierbench.
func StateDir() string {
	if d := os.Getenv("TIERBENCH_STATE_DIR"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/lib/tierbench"
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "state", "tierbench")
}

// VenvDir is where setup makes the Python virtualenv called name for a
// standard tool or generator (venv-tpch, venv-osb): $env when set, else
// name in the state folder.
func VenvDir(name, env string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return filepath.Join(StateDir(), name)
}

// OpenLedger opens (creating) the ledger in dir.
func OpenLedger(dir string) (*Ledger, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create state folder %s: %w", dir, err)
	}
	return &Ledger{dir: dir}, nil
}

// Dir is the ledger's state folder.
func (l *Ledger) Dir() string { return l.dir }

func (l *Ledger) path() string { return filepath.Join(l.dir, "ledger.json") }

// update runs fn on the ledger's records under an exclusive lock and writes
// the result atomically.
func (l *Ledger) update(fn func([]Resource) []Resource) error {
	lock, err := os.OpenFile(filepath.Join(l.dir, "ledger.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("lock ledger: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock ledger: %w", err)
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	rs, err := l.read()
	if err != nil {
		return err
	}
	rs = fn(rs)
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return fmt.Errorf("encode ledger: %w", err)
	}
	tmp := l.path() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write ledger: %w", err)
	}
	if err := os.Rename(tmp, l.path()); err != nil {
		return fmt.Errorf("write ledger: %w", err)
	}
	return nil
}

func (l *Ledger) read() ([]Resource, error) {
	b, err := os.ReadFile(l.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	var rs []Resource
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("ledger %s is corrupt (%v): inspect and delete it by hand", l.path(), err)
	}
	return rs, nil
}

// Intend records r (owned by this process) before it is created.
func (l *Ledger) Intend(r Resource) (Resource, error) {
	r.Owner, r.Since = os.Getpid(), time.Now().UTC()
	return r, l.update(func(rs []Resource) []Resource { return append(rs, r) })
}

// Update replaces the record of old with r (e.g. once a loop device is known).
func (l *Ledger) Update(old, r Resource) error {
	return l.update(func(rs []Resource) []Resource {
		for i := range rs {
			if same(rs[i], old) {
				rs[i] = r
			}
		}
		return rs
	})
}

// Done forgets r once it is undone.
func (l *Ledger) Done(r Resource) error {
	return l.update(func(rs []Resource) []Resource {
		out := rs[:0]
		for _, x := range rs {
			if !same(x, r) {
				out = append(out, x)
			}
		}
		return out
	})
}

func same(a, b Resource) bool {
	return a.Kind == b.Kind && a.Path == b.Path && a.Backing == b.Backing && a.Owner == b.Owner && a.PID == b.PID &&
		a.Study == b.Study
}

// ProcessResource describes process pid for the ledger; label says what it is.
func ProcessResource(pid int, label string) Resource {
	return Resource{Kind: KindProcess, Path: label, PID: pid, StartTicks: startTicks(pid)}
}

// startTicks reads a process's start time (field 22 of /proc/PID/stat), 0
// when it cannot be read.
func startTicks(pid int) uint64 {
	st, _ := procfs.Of(pid)
	return st.StartTicks
}

// All lists every record, live owners' included.
func (l *Ledger) All() ([]Resource, error) { return l.read() }

// Leftovers lists records whose owning process is gone: what a killed
// tierbench left behind.
func (l *Ledger) Leftovers() ([]Resource, error) {
	rs, err := l.read()
	if err != nil {
		return nil, err
	}
	var out []Resource
	for _, r := range rs {
		if !alive(r.Owner) {
			out = append(out, r)
		}
	}
	return out, nil
}

// alive reports whether process pid can still undo what it recorded. A
// process that is exiting cannot: a zombie, or one that was killed or is
// exiting but is still there, typically stuck in D state in the kernel's
// request_wait_answer, waiting for a FUSE answer from a server that is
// dead or stopped (Cleanup frees it by killing that server and aborting
// the connection).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !exiting(pid)
}

// Process facts in /proc that tell a dying process.
const (
	// pfExiting is PF_EXITING in the flags of /proc/PID/task/TID/stat: the
	// thread is in do_exit.
	pfExiting = 0x4
	// sigkillBit is SIGKILL's bit in the pending-signal masks of
	// /proc/PID/task/TID/status.
	sigkillBit = 1 << (syscall.SIGKILL - 1)
)

// exiting reports whether process pid is a zombie, or any of its threads
// is exiting or has SIGKILL pending.
func exiting(pid int) bool {
	if procState(pid) == 'Z' {
		return true
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		if st, err := procfs.Read(filepath.Join(task, "stat")); err == nil && st.Flags&pfExiting != 0 {
			return true
		}
		if sigkillPending(filepath.Join(task, "status")) {
			return true
		}
	}
	return false
}

// procState is the state letter of /proc/PID/stat (R, S, D, Z, ...), or 0
// if it cannot be read.
func procState(pid int) byte {
	st, _ := procfs.Of(pid)
	return st.State
}

// sigkillPending reports whether a /proc status file shows SIGKILL
// pending, for the thread or for its whole process.
func sigkillPending(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(val), 16, 64); err == nil && mask&sigkillBit != 0 {
			return true
		}
	}
	return false
}

// Cleanup undoes every leftover, newest first (mounts before the loop
// devices under them, loop devices before their files), and returns what it
// undid; but the processes first. A resource already gone counts as undone.
// What fails is tried once more after the others: a run folder on a
// filesystem whose device died with tierbench (an rbd tier's, read-only
// after its I/O errors) cannot be emptied, but is gone once its mount is
// undone.
//
// The processes go first because a server can hold the storage under the
// rest: an rbd tier's rbd-fuse, left waiting on an OSD that died with a
// killed tierbench, holds every I/O of the filesystem above it, so even
// removing an empty run folder there waits for ever until rbd-fuse is
// killed and those I/Os fail.
func (l *Ledger) Cleanup() ([]Resource, error) {
	left, err := l.Leftovers()
	if err != nil {
		return nil, err
	}
	procsFirst := make([]Resource, 0, len(left))
	for _, r := range left {
		if r.Kind != KindProcess {
			procsFirst = append(procsFirst, r)
		}
	}
	for _, r := range left {
		if r.Kind == KindProcess {
			procsFirst = append(procsFirst, r) // undone first: the loop runs backwards
		}
	}
	left = procsFirst
	var done, failed []Resource
	for i := len(left) - 1; i >= 0; i-- {
		if l.undo(left[i]) != nil {
			failed = append(failed, left[i])
			continue
		}
		done = append(done, left[i])
	}
	var errs []error
	for _, r := range failed {
		if err := l.undo(r); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, r)
	}
	return done, errors.Join(errs...)
}

// CleanupOwnedBy undoes, newest first, the leftovers a dead process
// owner recorded, and forgets each: what one killed process left (a
// node's serve process), without touching other leftovers.
func (l *Ledger) CleanupOwnedBy(owner int) ([]Resource, error) {
	left, err := l.Leftovers()
	if err != nil {
		return nil, err
	}
	var done []Resource
	var errs []error
	for i := len(left) - 1; i >= 0; i-- {
		if left[i].Owner != owner {
			continue
		}
		if err := l.undo(left[i]); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, left[i])
	}
	return done, errors.Join(errs...)
}

// undo undoes one leftover and forgets it.
func (l *Ledger) undo(r Resource) error {
	if err := Undo(r); err != nil {
		return err
	}
	return l.Done(r)
}

// Undo reverses one resource, of tier's kinds or of a registered one (see
// RegisterKind); it is idempotent.
func Undo(r Resource) error {
	if f, ok := registered(r.Kind); ok {
		return f.Undo(r)
	}
	switch r.Kind {
	case KindMount:
		m, err := mountOf(r.Path)
		if err != nil || m.Point != filepath.Clean(r.Path) {
			return nil // not mounted
		}
		if m.FSType == emulate.FSName {
			// A latency layer whose server may be dead or stopped: end
			// its connection first, so that nothing stays stuck waiting
			// for it (the processes inside get ENOTCONN) and the unmount
			// goes through.
			if err := emulate.Abort(m.DevID); err != nil {
				return fmt.Errorf("unmount %s: %w", r.Path, err)
			}
		}
		if err := unix.Unmount(r.Path, 0); err != nil {
			// A busy mount (a process still inside) is detached lazily so
			// nothing is left mounted; the kernel frees it when unused.
			if err2 := unix.Unmount(r.Path, unix.MNT_DETACH); err2 != nil {
				return fmt.Errorf("unmount %s: %w", r.Path, err)
			}
		}
		return nil
	case KindLoop:
		for _, dev := range loopDevices(r) {
			out, err := exec.Command("losetup", "-d", dev).CombinedOutput()
			if err != nil && !strings.Contains(string(out), "No such device") {
				return fmt.Errorf("detach %s: %v: %s", dev, err, strings.TrimSpace(string(out)))
			}
		}
		return nil
	case KindCgroup:
		return throttle.Remove(r.Path)
	case KindPortLock:
		return tcpport.Unlock(r.Path)
	case KindMemoryGroup:
		return undoMemoryGroup(r)
	case KindProcess:
		if r.PID <= 0 || startTicks(r.PID) != r.StartTicks {
			return nil // gone, or the pid now belongs to another process
		}
		owner := proc.OwnerName(r.PID)
		if err := proc.KillGroup(r.PID); err != nil {
			return fmt.Errorf("kill %s: %w", r, err)
		}
		proc.RemoveEmptyPerfData(owner)
		return nil
	case KindFuseServer:
		return killFuseServer(r)
	case KindFile:
		if err := os.Remove(r.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", r.Path, err)
		}
		return nil
	case KindTierDir:
		return removePending(r.Path)
	case KindDir:
		if isMountPoint(r.Path) {
			return fmt.Errorf("remove %s: still a mount point; undo its mount first", r.Path)
		}
		if r.Pending {
			return removePending(r.Path)
		}
		if err := os.RemoveAll(r.Path); err != nil {
			return fmt.Errorf("remove %s: %w", r.Path, err)
		}
		return nil
	}
	return fmt.Errorf("unknown resource kind %q in the ledger", r.Kind)
}

// fuseServerExit bounds how long killFuseServer waits for a killed latency
// server to be gone.
const fuseServerExit = 5 * time.Second

// killFuseServer kills a latency server left behind (its own process
// group) and waits until it has exited, so that its FUSE connection is
// closed and its files in the backing folder are released before the
// mount and the folders under it are undone. A server whose parent is
// itself dead but not reaped stays a zombie; that counts as exited.
func killFuseServer(r Resource) error {
	if r.PID <= 0 || startTicks(r.PID) != r.StartTicks {
		return nil // gone, or the pid now belongs to another process
	}
	if err := proc.KillGroup(r.PID); err != nil {
		return fmt.Errorf("kill %s: %w", r, err)
	}
	for deadline := time.Now().Add(fuseServerExit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if startTicks(r.PID) != r.StartTicks || procState(r.PID) == 'Z' {
			return nil
		}
	}
	return fmt.Errorf("kill %s: still running %v after SIGKILL", r, fuseServerExit)
}

// loopDevices finds the loop devices attached to r's backing file (or r.Path).
func loopDevices(r Resource) []string {
	var devs []string
	if r.Backing != "" {
		devs = loopsBackedBy(r.Backing)
	}
	if len(devs) == 0 && r.Path != "" {
		if _, err := os.Stat(filepath.Join("/sys/block", filepath.Base(r.Path), "loop")); err == nil {
			devs = append(devs, r.Path)
		}
	}
	return devs
}

// loopsBackedBy lists the loop devices whose backing file is file, from
// what the kernel says of each (/sys/block/loopN/loop/backing_file),
// never touching the file: losetup -j stats it, which hangs for ever
// when it lives on a FUSE mount whose server waits on a dead one (an rbd
// tier's image, once its OSD died with a killed tierbench).
func loopsBackedBy(file string) []string {
	paths, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	var devs []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)") == filepath.Clean(file) {
			devs = append(devs, "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(p))))
		}
	}
	return devs
}

// isMountPoint reports whether path is exactly a mount point.
func isMountPoint(path string) bool {
	m, err := mountOf(path)
	return err == nil && m.Point == filepath.Clean(path)
}
