package emulate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/mountinfo"
)

// fusectlDir is where the fusectl filesystem shows one folder per FUSE
// connection, named by the minor device number of the connection's mounts.
const fusectlDir = "/sys/fs/fuse/connections"

// Abort ends the FUSE connection of the mount whose device is devID (as
// mountinfo gives it, "0:55"): every request waiting on it, and every
// later one, fails at once with ENOTCONN. It frees processes that wait,
// uninterruptibly, for a server that will never answer (a killed process
// that served its own mount, or a stopped server), so that the mount can
// then be unmounted and those processes can exit. It mounts fusectl for
// the purpose if it is not mounted, and unmounts it again. A connection
// that is already gone is not an error.
func Abort(devID string) error {
	major, minor, ok := strings.Cut(devID, ":")
	if !ok || major != "0" || minor == "" {
		return fmt.Errorf("abort FUSE connection: %q is not a FUSE mount's device (0:N)", devID)
	}
	if !fusectlMounted() {
		if err := unix.Mount("fusectl", fusectlDir, "fusectl", 0, ""); err != nil {
			return fmt.Errorf("abort FUSE connection %s: mount fusectl on %s: %w", minor, fusectlDir, err)
		}
		// Lazily: another cleanup may be using it at the same moment.
		defer unix.Unmount(fusectlDir, unix.MNT_DETACH)
	}
	err := os.WriteFile(filepath.Join(fusectlDir, minor, "abort"), []byte("1"), 0)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("abort FUSE connection %s: %w", minor, err)
	}
	return nil
}

func fusectlMounted() bool {
	m, ok := mountinfo.At(fusectlDir)
	return ok && m.FSType == "fusectl"
}
