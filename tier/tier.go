// Package tier turns a tier's folder into facts (filesystem, mount options,
// backing device, whether fsync means anything there) and manages the fresh
// per-run folders that engines' components live in.
package tier

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/mountinfo"
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
}

// volatileFS are filesystems whose contents live only in memory.
var volatileFS = map[string]bool{"tmpfs": true, "ramfs": true, "devtmpfs": true}

// CheckPath reports whether path is usable as a tier without changing
// anything: it must be a writable folder, or not exist yet with a writable
// parent folder (Prepare creates it).
func CheckPath(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("path %q is not absolute: give a full path such as /var/tmp/tierbench", path)
	}
	st, err := os.Stat(path)
	switch {
	case err == nil:
		if !st.IsDir() {
			return fmt.Errorf("path %s is a file, not a folder: choose a folder", path)
		}
		if err := unix.Access(path, unix.W_OK|unix.X_OK); err != nil {
			return fmt.Errorf("folder %s is not writable: fix its permissions or choose another", path)
		}
		return nil
	case errors.Is(err, os.ErrNotExist):
		parent := filepath.Dir(path)
		pst, perr := os.Stat(parent)
		if perr != nil || !pst.IsDir() {
			return fmt.Errorf("cannot create %s: its parent folder %s does not exist; create it first", path, parent)
		}
		if err := unix.Access(parent, unix.W_OK|unix.X_OK); err != nil {
			return fmt.Errorf("cannot create %s: parent folder %s is not writable", path, parent)
		}
		return nil
	default:
		return fmt.Errorf("cannot use %s: %w", path, err)
	}
}

// Prepare creates the tier folder if needed, proves it writable, and
// inspects it.
func Prepare(name, path string) (Info, error) {
	if err := CheckPath(path); err != nil {
		return Info{}, fmt.Errorf("tier %s: %w", name, err)
	}
	if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return Info{}, fmt.Errorf("tier %s: create %s: %w", name, path, err)
	}
	probe, err := os.CreateTemp(path, ".tierbench-write-check-*")
	if err != nil {
		return Info{}, fmt.Errorf("tier %s: %s is not writable: %w", name, path, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return Inspect(name, path)
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
