package tier

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// CheckCreatable reports, without changing anything, whether dir is a
// folder this user can write in, or one os.MkdirAll can make: its nearest
// existing parent is such a folder. run makes the state folder and the
// results folder before anything else; validate asks this so that it
// refuses what run could only fail at.
func CheckCreatable(dir string) error {
	d := filepath.Clean(dir)
	for {
		st, err := os.Stat(d)
		switch {
		case err == nil && !st.IsDir():
			return fmt.Errorf("%s is a file, not a folder", d)
		case err == nil:
			// /proc and /sys pass the access check as root, and refuse
			// the mkdir only later, after the work it was for.
			if m, err := mountOf(d); err == nil && PseudoFS(m.FSType) {
				return fmt.Errorf("folder %s is on %s (mounted at %s), a kernel interface that holds no files of ours", d, m.FSType, m.Point)
			}
			if err := unix.Access(d, unix.W_OK|unix.X_OK); err != nil {
				return fmt.Errorf("folder %s is not writable by this user", d)
			}
			return nil
		case errors.Is(err, unix.ENOTDIR):
			return fmt.Errorf("%s is below a file, not a folder", d)
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("cannot use %s: %w", d, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return fmt.Errorf("no folder above %s exists", dir)
		}
		d = parent
	}
}
