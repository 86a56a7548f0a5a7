package tier

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/tier/profile"
)

// recordAtomicWrite puts stack's atomic-write unit, what the device
// under the tier reports, and its write cache, in the tier's record.
func recordAtomicWrite(info *Info, st Stack) {
	info.AtomicWrite, info.AtomicWriteFrom = st.AtomicWrite, st.AtomicWriteFrom
	info.VolatileCache = st.VolatileCache
	info.DeviceAtomicWrite = DeviceAtomicWrite(info.Device)
}

// DeviceAtomicWrite says what block device dev (a mount's source, such
// as /dev/vda1) reports of its atomic writes: the kernel's
// atomic_write_unit_max_bytes (or atomic_write_max_bytes) where the
// device offers atomic writes, else its logical block size, stated as a
// fact and not a promise (a device may tear within a block it does not
// promise). "" when dev is no block device this machine describes.
func DeviceAtomicWrite(dev string) string {
	if !strings.HasPrefix(dev, "/dev/") {
		return ""
	}
	name := filepath.Base(dev)
	sys, err := filepath.EvalSymlinks(filepath.Join("/sys/class/block", name))
	if err != nil {
		return ""
	}
	queue := filepath.Join(sys, "queue")
	if _, err := os.Stat(queue); err != nil {
		queue = filepath.Join(filepath.Dir(sys), "queue") // a partition's disk
	}
	for _, f := range []string{"atomic_write_unit_max_bytes", "atomic_write_max_bytes"} {
		if n := readBytes(filepath.Join(queue, f)); n > 0 {
			return fmt.Sprintf("device %s promises atomic writes up to %s (%s)", name, profile.AtomicWriteText(n), f)
		}
	}
	if n := readBytes(filepath.Join(queue, "logical_block_size")); n > 0 {
		return fmt.Sprintf("device %s promises no atomic writes; its logical block is %s (a fact, not a promise that a block is written whole)", name, profile.AtomicWriteText(n))
	}
	return ""
}

// readBytes reads a sysfs number, 0 when absent.
func readBytes(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}
