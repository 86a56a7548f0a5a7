package tier

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// PmemSpec asks for real persistent memory: a pmem block device that
// already holds a filesystem, mounted by tierbench (with -o dax when asked).
// tierbench never formats it: the device and its data are the user's.
type PmemSpec struct {
	Device string
	FS     string
	DAX    bool
}

// Pmem verifies a persistent-memory device and mounts it; it returns the
// mount point. Where there is no such device, the error says so.
func (p *Provisioner) Pmem(ctx context.Context, name string, spec PmemSpec) (string, error) {
	if err := checkPmemDevice(spec.Device); err != nil {
		return "", fmt.Errorf("tier %s: %w", name, err)
	}
	if ms, err := Mounts(); err == nil {
		for _, m := range ms {
			if m.Source == spec.Device {
				return "", fmt.Errorf("tier %s: %s is already mounted on %s; use that folder as a path tier instead", name, spec.Device, m.Point)
			}
		}
	}
	out, err := exec.CommandContext(ctx, "blkid", "-o", "value", "-s", "TYPE", spec.Device).Output()
	fs := strings.TrimSpace(string(out))
	if err != nil || fs == "" {
		return "", fmt.Errorf("tier %s: %s holds no filesystem; tierbench never formats a device it did not create: make one first (e.g. mkfs.%s %s)", name, spec.Device, spec.FS, spec.Device)
	}
	if fs != spec.FS {
		return "", fmt.Errorf("tier %s: %s holds %s, not %s; set fs: %s or reformat it yourself", name, spec.Device, fs, spec.FS, fs)
	}
	dir, err := p.mountPoint(name, "")
	if err != nil {
		return "", fmt.Errorf("tier %s: %w", name, err)
	}
	opts := ""
	if spec.DAX {
		opts = "dax"
	}
	_, err = p.step(Resource{Kind: KindMount, Path: dir}, func() error {
		return unix.Mount(spec.Device, dir, spec.FS, 0, opts)
	})
	if err != nil {
		return "", fmt.Errorf("tier %s: mount %s on %s (%s): %w", name, spec.Device, dir, spec.FS, err)
	}
	return dir, nil
}

// checkPmemDevice verifies that dev is a persistent-memory block device.
func checkPmemDevice(dev string) error {
	st, err := os.Stat(dev)
	if err != nil {
		return fmt.Errorf("no persistent memory device %s on this machine (%v); list them with `ndctl list -N` or `ls /dev/pmem*`", dev, err)
	}
	if st.Mode()&os.ModeDevice == 0 || st.Mode()&os.ModeCharDevice != 0 {
		return fmt.Errorf("%s is not a block device; give a pmem block device such as /dev/pmem0 (a devdax /dev/daxX.Y cannot hold a filesystem)", dev)
	}
	if !strings.HasPrefix(strings.TrimPrefix(dev, "/dev/"), "pmem") {
		return fmt.Errorf("%s is not a persistent memory device (/dev/pmemN); for other block devices use a path tier on their filesystem", dev)
	}
	return nil
}
