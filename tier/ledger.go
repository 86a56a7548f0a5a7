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
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/tier/throttle"
)

// Resource kinds tierbench creates and must undo.
const (
	KindDir   = "dir"   // a folder tierbench created (removed with its contents)
	KindFile  = "file"  // a file tierbench created (a loop device's backing file)
	KindMount = "mount" // a filesystem tierbench mounted
	KindLoop  = "loop"  // a loop device attached to Backing
	// KindCgroup is a block I/O throttle group (see package throttle).
	KindCgroup = throttle.LedgerKind
	// KindProcess is a server process group tierbench started.
	KindProcess = "process"
)

// Resource is one thing tierbench created. It is written to the ledger
// before it is created, so a killed tierbench leaves a record of it.
type Resource struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`              // folder, file, mount point, or loop device once known
	Backing string `json:"backing,omitempty"` // loop: the backing file (finds the device if Path is empty)
	// PID and StartTicks identify a process (its start time tells it from a
	// later process that reuses the pid).
	PID        int       `json:"pid,omitempty"`
	StartTicks uint64    `json:"start_ticks,omitempty"`
	Owner      int       `json:"owner_pid"`
	Since      time.Time `json:"since"`
}

func (r Resource) String() string {
	if r.Kind == KindProcess {
		return fmt.Sprintf("server process %d (%s)", r.PID, r.Path)
	}
	if r.Kind == KindLoop {
		return fmt.Sprintf("loop device %s backed by %s", orUnknown(r.Path), r.Backing)
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
	return a.Kind == b.Kind && a.Path == b.Path && a.Backing == b.Backing && a.Owner == b.Owner && a.PID == b.PID
}

// ProcessResource describes process pid for the ledger; label says what it is.
func ProcessResource(pid int, label string) Resource {
	return Resource{Kind: KindProcess, Path: label, PID: pid, StartTicks: startTicks(pid)}
}

// startTicks reads a process's start time (field 22 of /proc/PID/stat).
func startTicks(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
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

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Cleanup undoes every leftover, newest first (mounts before the loop
// devices under them, loop devices before their files), and returns what it
// undid. A resource already gone counts as undone.
func (l *Ledger) Cleanup() ([]Resource, error) {
	left, err := l.Leftovers()
	if err != nil {
		return nil, err
	}
	var done []Resource
	var errs []error
	for i := len(left) - 1; i >= 0; i-- {
		r := left[i]
		if err := Undo(r); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := l.Done(r); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, r)
	}
	return done, errors.Join(errs...)
}

// Undo reverses one resource; it is idempotent.
func Undo(r Resource) error {
	switch r.Kind {
	case KindMount:
		if !isMountPoint(r.Path) {
			return nil
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
	case KindProcess:
		if r.PID <= 0 || startTicks(r.PID) != r.StartTicks {
			return nil // gone, or the pid now belongs to another process
		}
		if err := syscall.Kill(-r.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("kill %s: %w", r, err)
		}
		return nil
	case KindFile:
		if err := os.Remove(r.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", r.Path, err)
		}
		return nil
	case KindDir:
		if isMountPoint(r.Path) {
			return fmt.Errorf("remove %s: still a mount point; undo its mount first", r.Path)
		}
		if err := os.RemoveAll(r.Path); err != nil {
			return fmt.Errorf("remove %s: %w", r.Path, err)
		}
		return nil
	}
	return fmt.Errorf("unknown resource kind %q in the ledger", r.Kind)
}

// loopDevices finds the loop devices attached to r's backing file (or r.Path).
func loopDevices(r Resource) []string {
	var devs []string
	if r.Backing != "" {
		out, _ := exec.Command("losetup", "-j", r.Backing, "-O", "NAME", "-n").Output()
		for _, f := range strings.Fields(string(out)) {
			devs = append(devs, f)
		}
	}
	if len(devs) == 0 && r.Path != "" {
		if _, err := os.Stat(filepath.Join("/sys/block", filepath.Base(r.Path), "loop")); err == nil {
			devs = append(devs, r.Path)
		}
	}
	return devs
}

// isMountPoint reports whether path is exactly a mount point.
func isMountPoint(path string) bool {
	m, err := mountOf(path)
	return err == nil && m.Point == filepath.Clean(path)
}
