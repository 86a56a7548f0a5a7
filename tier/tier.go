// Package tier turns a tier's folder into facts (filesystem, mount options,
// backing device, whether fsync means anything there), decides each tier's
// layering once from its kind's abilities (Kind, Abilities, Layering:
// backing, delay path, power-loss layer, atomic-write unit), provisions the
// tiers tierbench creates (tmpfs, loop, PMEM, emulated), formats and mounts the
// storage of served tiers that another package makes (rbd: a Ceph image,
// see engine/ceph/rbdtier and Volumes), and keeps the ledger of everything it made so
// `tierbench cleanup` can undo it after a kill. A study's Workspace holds
// its provisioned tiers, its scratch folder, the fresh per-run folders
// that engines' components live in, and the sync delays of tiers emulated
// at the sync calls (SyncDelays, package syncdelay), which engines start
// under.
package tier

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/mountinfo"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/profile"
)

// Info is what tierbench records about a tier.
type Info struct {
	Name         string `json:"name"`
	Path         string `json:"path"`
	FSType       string `json:"fs_type"`
	MountPoint   string `json:"mount_point"`
	MountOptions string `json:"mount_options"`
	// Device is the mount source; for a loop device, BackingFile names its file.
	Device      string `json:"device"`
	BackingFile string `json:"backing_file,omitempty"`
	// Durable is false where fsync cannot reach stable storage (tmpfs, ramfs,
	// or a loop device whose file lives on one).
	Durable bool `json:"durable"`
	// Emulated marks tiers whose speed is injected rather than real;
	// Emulation says how, and EmulationCheck what a probe found.
	Emulated       bool   `json:"emulated"`
	Emulation      string `json:"emulation,omitempty"`
	EmulationCheck string `json:"emulation_check,omitempty"`
	// Note says why Durable is false, in words for reports.
	Note string `json:"note,omitempty"`
	// LayerDurable marks a tier whose Durable holds only under
	// tierbench's power-loss layer (Stack.DurableByLayer: RAM made
	// persistent-memory-like, pmem_emulated), so reports can say so
	// beside every figure from it. Its JSON name is the one records
	// stored before it was named for what it says.
	LayerDurable bool `json:"pmem_emulated,omitempty"`
	// AtomicWrite is the tier's atomic-write unit in bytes (Stack.
	// AtomicWrite), AtomicWriteFrom where it comes from, and
	// DeviceAtomicWrite what the device under the tier reports of its
	// own, a stated fact (DeviceAtomicWrite).
	AtomicWrite       int64  `json:"atomic_write,omitempty"`
	AtomicWriteFrom   string `json:"atomic_write_from,omitempty"`
	DeviceAtomicWrite string `json:"device_atomic_write,omitempty"`
	// VolatileCache: the tier was declared with a volatile write cache
	// (Stack.VolatileCache), which the power-loss layer empties at a cut.
	VolatileCache bool `json:"volatile_cache,omitempty"`
	// Profile names the device profile the tier emulates (profile:), and
	// Fidelity is each of its figures against what the study's probe of
	// the tier achieved (only when the study probed: probe quick or full).
	Profile  string        `json:"profile,omitempty"`
	Fidelity []profile.Row `json:"fidelity,omitempty"`
}

// volatileFS are filesystems whose contents live only in memory.
var volatileFS = map[string]bool{"tmpfs": true, "ramfs": true, "devtmpfs": true}

// CheckPath reports whether path is usable as a tier without changing
// anything: it must be a writable folder, or not exist yet with a writable
// parent folder (Prepare creates it). The path's symlinks are followed (see
// Resolve) and the real path must not be a system folder or on a pseudo
// filesystem such as proc or sysfs.
func CheckPath(path string) error {
	real, err := Resolve(path)
	if err != nil {
		return err
	}
	shown := path
	if real != filepath.Clean(path) {
		shown = fmt.Sprintf("%s (a symlink to %s)", path, real)
	}
	if why := systemFolder(real); why != "" {
		return fmt.Errorf("path %s is %s, not a place for a tier: tierbench creates, fills and removes folders inside a tier; choose a folder of its own such as /var/tmp/tierbench", shown, why)
	}
	st, err := os.Stat(real)
	switch {
	case err == nil:
		if !st.IsDir() {
			return fmt.Errorf("path %s is a file, not a folder: choose a folder", shown)
		}
		if err := checkFS(shown, real); err != nil {
			return err
		}
		if err := unix.Access(real, unix.W_OK|unix.X_OK); err != nil {
			return fmt.Errorf("folder %s is not writable: fix its permissions or choose another", shown)
		}
		return nil
	case errors.Is(err, os.ErrNotExist):
		parent := filepath.Dir(real)
		pst, perr := os.Stat(parent)
		if perr != nil || !pst.IsDir() {
			return fmt.Errorf("cannot create %s: its parent folder %s does not exist; create it first", shown, parent)
		}
		if err := checkFS(shown, parent); err != nil {
			return err
		}
		if err := unix.Access(parent, unix.W_OK|unix.X_OK); err != nil {
			return fmt.Errorf("cannot create %s: parent folder %s is not writable", shown, parent)
		}
		return nil
	default:
		return fmt.Errorf("cannot use %s: %w", shown, err)
	}
}

// Resolve returns the real path of an absolute tier path: its symlinks
// followed once, here, so that every later step uses the folder that was
// checked (a symlink swapped after validation changes nothing). A path that
// does not exist yet resolves through its parent folder.
func Resolve(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("path %q is not absolute: give a full path such as /var/tmp/tierbench", path)
	}
	clean := filepath.Clean(path)
	real, err := filepath.EvalSymlinks(clean)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("cannot use %s: %w", path, err)
	}
	if _, lerr := os.Lstat(clean); lerr == nil {
		return "", fmt.Errorf("path %s is a symlink to a folder that does not exist: fix the link or give the real folder", path)
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(clean))
	if err != nil {
		// CheckPath says which parent is missing.
		return clean, nil
	}
	return filepath.Join(parent, filepath.Base(clean)), nil
}

// systemFolders are folders (with everything below them) that belong to the
// operating system; allowedBelow are the exceptions that are meant for data
// (/dev/shm is the RAM tier every Linux has; /run/user/<uid> is a user's own
// tmpfs). A tier in one of them would have tierbench create and remove
// folders among the system's files, and a probe write gigabytes there.
var (
	systemFolders = []string{"/etc", "/proc", "/sys", "/dev", "/boot", "/usr", "/bin", "/sbin",
		"/lib", "/lib32", "/lib64", "/libx32", "/run"}
	allowedBelow = []string{"/dev/shm", "/run/shm", "/run/user"}
)

// systemFolder says why real (a resolved, clean path) is a system folder,
// or "" when it is not.
func systemFolder(real string) string {
	if real == "/" {
		return "the root folder"
	}
	for _, a := range allowedBelow {
		if within(real, a) {
			if real == "/run/user" {
				return "a system folder (/run/user holds one folder per user; use yours, /run/user/<uid>)"
			}
			return ""
		}
	}
	for _, s := range systemFolders {
		if within(real, s) {
			return "a system folder (" + s + ")"
		}
	}
	return ""
}

// pseudoFS are filesystems that hold no data: kernel interfaces whose files
// are views of kernel state. A tier or probe there measures nothing, and
// writes to them change the kernel's settings.
var pseudoFS = map[string]bool{
	"proc": true, "sysfs": true, "devtmpfs": true, "devpts": true, "cgroup": true, "cgroup2": true,
	"securityfs": true, "debugfs": true, "tracefs": true, "configfs": true, "fusectl": true,
	"pstore": true, "bpf": true, "mqueue": true, "hugetlbfs": true, "autofs": true,
	"binfmt_misc": true, "efivarfs": true, "rpc_pipefs": true, "nsfs": true, "selinuxfs": true,
}

// PseudoFS reports whether fsType is a kernel interface rather than storage.
func PseudoFS(fsType string) bool { return pseudoFS[fsType] }

// checkFS refuses a folder on a pseudo filesystem; shown is the path as the
// user gave it.
func checkFS(shown, dir string) error {
	m, err := mountOf(dir)
	if err != nil {
		return nil // Inspect reports an unreadable mount table
	}
	if PseudoFS(m.FSType) {
		return fmt.Errorf("path %s is on %s (mounted at %s), a kernel interface that holds no data: choose a folder on real storage or /dev/shm", shown, m.FSType, m.Point)
	}
	return nil
}

// CheckInRAM reports whether the folder path (or, not made yet, its
// parent) is on a filesystem that keeps its data in RAM (tmpfs, ramfs):
// what a pmem_emulated tier stands on.
func CheckInRAM(path string) error {
	real, err := Resolve(path)
	if err != nil {
		return err
	}
	dir := real
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		dir = filepath.Dir(real)
	}
	m, err := mountOf(dir)
	if err != nil {
		return err
	}
	if !volatileFS[m.FSType] {
		return fmt.Errorf("folder %s is on %s (%s, mounted at %s), not in RAM", path, m.FSType, m.Source, m.Point)
	}
	return nil
}

// MaxNameLen bounds a name a study gives (its own, a tier's, a
// placement's): names become parts of paths, labels and report columns.
const MaxNameLen = 64

// nameRe is what a name may be: a tier's becomes part of mount points,
// image files and cgroup names, so it must not carry a path.
var nameRe = regexp.MustCompile(fmt.Sprintf(`^[A-Za-z0-9][A-Za-z0-9_-]{0,%d}$`, MaxNameLen-1))

// CheckName reports whether name can name a tier: letters, digits, - and _,
// starting with a letter or digit, at most 64 characters. Paths tierbench
// builds from a tier name then always stay in the folder they are built in.
func CheckName(name string) error {
	return CheckIdentifier("tier", name, "ssd or pm_1", "tierbench builds mount points and image files from it")
}

// CheckIdentifier is the one check of every name a study gives (CheckName
// for tiers): letters, digits, - and _, starting with a letter or digit,
// at most MaxNameLen. what is what the name names ("placement"), example a
// good one, why what tierbench makes of it. A name too long, or holding a
// control or bidirectional character (an escape sequence, a newline, NUL,
// U+202E), is said so and shown cut short and escaped, so the message is
// one short line a terminal prints as it is.
func CheckIdentifier(what, name, example, why string) error {
	if nameRe.MatchString(name) {
		return nil
	}
	rule := fmt.Sprintf("use letters, digits, - and _ (at most %d, starting with a letter or digit), e.g. %s; %s", MaxNameLen, example, why)
	if n := utf8.RuneCountInString(name); n > MaxNameLen {
		return fmt.Errorf("%s name %s is too long (%d characters): %s", what, Excerpt(name), n, rule)
	}
	if i := strings.IndexFunc(name, hidden); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Errorf("%s name %s holds a control or bidirectional character (U+%04X), which terminals and reports would act on: %s", what, Excerpt(name), r, rule)
	}
	return fmt.Errorf("%s name %q is not an identifier: %s", what, name, rule)
}

// hidden reports a character a terminal acts on rather than shows: a
// control character (ESC, newline, NUL), a format character (U+202E
// right-to-left override, zero-width space) or a line or paragraph
// separator.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError
}

// Excerpt quotes s for a message, escaped (Go syntax) and cut to its first
// 24 characters when longer than 40, so a 100,000-character value stays a
// short line.
func Excerpt(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:24])) + "..."
}

// Prepare creates the tier folder if needed, proves it writable, and
// inspects it. A symlinked path is resolved once, here: the folder created,
// checked and recorded is the real one.
func Prepare(name, path string) (Info, error) {
	if err := CheckPath(path); err != nil {
		return Info{}, fmt.Errorf("tier %s: %w", name, err)
	}
	real, err := Resolve(path)
	if err != nil {
		return Info{}, fmt.Errorf("tier %s: %w", name, err)
	}
	if err := os.Mkdir(real, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return Info{}, fmt.Errorf("tier %s: create %s: %w", name, real, err)
	}
	probe, err := os.CreateTemp(real, ".tierbench-write-check-*")
	if err != nil {
		return Info{}, fmt.Errorf("tier %s: %s is not writable: %w", name, real, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return Inspect(name, real)
}

// Inspect finds the mount that holds path and describes it.
func Inspect(name, path string) (Info, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return Info{}, fmt.Errorf("tier %s: resolve %s: %w", name, path, err)
	}
	m, err := mountOf(real)
	if err != nil {
		return Info{}, fmt.Errorf("tier %s: %w", name, err)
	}
	info := Info{Name: name, Path: path, FSType: m.FSType, MountPoint: m.Point,
		MountOptions: m.Options(), Device: m.Source, Durable: true}
	if volatileFS[m.FSType] {
		info.Durable = false
		info.Note = m.FSType + " keeps data in RAM: fsync is a no-op and nothing survives a power loss"
	}
	if PseudoFS(m.FSType) {
		info.Durable = false
		info.Note = m.FSType + " is a kernel interface, not storage: nothing written there is stored"
	}
	if m.FSType == emulate.FSName {
		// A latency layer: its storage, device and durability are those of
		// the folder it passes through to (the mount's source).
		b, err := Inspect(name, m.Source)
		if err != nil {
			return Info{}, fmt.Errorf("inspect the folder behind latency layer %s: %w", m.Point, err)
		}
		info.Device, info.BackingFile, info.Durable, info.Note = b.Device, b.BackingFile, b.Durable, b.Note
		info.Emulated = true
		return info, nil
	}
	if strings.HasPrefix(m.Source, "/dev/loop") {
		info.BackingFile = loopBackingFile(m.Source)
		if info.BackingFile != "" {
			if bm, err := mountOf(info.BackingFile); err == nil && volatileFS[bm.FSType] {
				info.Durable = false
				info.Note = "loop device backed by a file on " + bm.FSType + ": fsync reaches RAM only"
			}
		}
	}
	return info, nil
}

// Mount is one mounted filesystem.
type Mount = mountinfo.Mount

// Mounts lists this process's mount table in mount order.
func Mounts() ([]Mount, error) { return mountinfo.Read() }

// ParseMountinfo reads mountinfo lines.
func ParseMountinfo(r io.Reader) ([]Mount, error) { return mountinfo.Parse(r) }

// mountOf returns the mount whose mount point is the longest prefix of path
// (later mounts shadow earlier ones).
func mountOf(path string) (Mount, error) {
	ms, err := Mounts()
	if err != nil {
		return Mount{}, err
	}
	var best Mount
	for _, m := range ms {
		if within(path, m.Point) && len(m.Point) >= len(best.Point) {
			best = m
		}
	}
	if best.Point == "" {
		return Mount{}, fmt.Errorf("no mount holds %s", path)
	}
	return best, nil
}

func within(path, point string) bool {
	if point == "/" {
		return true
	}
	return path == point || strings.HasPrefix(path, point+"/")
}

func loopBackingFile(dev string) string {
	b, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// CheckLoopTools reports whether the programs a loop tier with filesystem
// fs needs are installed, naming the package that installs a missing one.
func CheckLoopTools(fs string) error {
	mkfs, ok := mkfsTools[fs]
	if !ok {
		return fmt.Errorf("filesystem %q is not supported: use %s", fs, strings.Join(FilesystemNames(), " or "))
	}
	if _, err := exec.LookPath(mkfs[0]); err != nil {
		return fmt.Errorf("%s is not installed: run `make setup` or apt-get install %s", mkfs[0], mkfsPackage[fs])
	}
	if _, err := exec.LookPath("losetup"); err != nil {
		return errors.New("losetup is not installed: run `make setup` or apt-get install mount")
	}
	return nil
}

// CheckPmem reports whether dev is a persistent-memory block device, as
// Pmem checks before mounting it.
func CheckPmem(dev string) error { return checkPmemDevice(dev) }

// FreeBytes is the space an unprivileged write could use on the filesystem
// holding path, or on that of its nearest existing parent folder when path
// does not exist yet (a state folder tierbench has not created).
func FreeBytes(path string) (int64, string, error) {
	dir := filepath.Clean(path)
	for {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		if err == nil {
			return int64(st.Bavail) * int64(st.Bsize), dir, nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, unix.ENOENT) || parent == dir {
			return 0, dir, fmt.Errorf("free space of %s: %w", dir, err)
		}
		dir = parent
	}
}

// ImageDir is the folder a loop tier's image file is created in: /dev/shm
// for backing: ram (the image lives in memory), the state folder's img/
// for backing: disk. It is what Preflight measures the free space of.
func ImageDir(stateDir, backing string) string {
	if backing == "ram" {
		return "/dev/shm"
	}
	return filepath.Join(stateDir, "img")
}
