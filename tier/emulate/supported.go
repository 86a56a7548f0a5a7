package emulate

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// capSysAdmin is CAP_SYS_ADMIN's bit in /proc/self/status CapEff: mount(2)
// needs it.
const capSysAdmin = 21

// Supported reports whether this process can mount an emulated tier, and
// if not, what to install or enable. It checks without mounting anything,
// so it leaves nothing behind to clean up.
func Supported() error {
	st, err := os.Stat("/dev/fuse")
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("emulated tiers need FUSE, and /dev/fuse is missing: load the module (modprobe fuse); in a container, pass --device /dev/fuse and --cap-add SYS_ADMIN")
	}
	if err != nil {
		return fmt.Errorf("emulated tiers need FUSE: %w", err)
	}
	if st.Mode()&os.ModeCharDevice == 0 {
		return fmt.Errorf("emulated tiers need FUSE, and /dev/fuse is not a character device (%v)", st.Mode())
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("emulated tiers need FUSE, and /dev/fuse cannot be opened: %w (in a container, pass --device /dev/fuse; otherwise check its permissions: crw-rw-rw- is usual)", err)
	}
	f.Close()

	// Mounting directly needs CAP_SYS_ADMIN (root outside a restricted
	// container); without it go-fuse uses the setuid fusermount3 helper.
	if hasCap(capSysAdmin) {
		return nil
	}
	if _, err := exec.LookPath("fusermount3"); err == nil {
		return nil
	}
	if _, err := exec.LookPath("fusermount"); err == nil {
		return nil
	}
	return errors.New("emulated tiers need to mount FUSE: run tierbench as root (with CAP_SYS_ADMIN), or install fusermount3 (apt-get install fuse3; a non-root mount is private to its user)")
}

// hasCap reports whether capability bit c is in this process's effective
// set.
func hasCap(c uint) bool {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return os.Geteuid() == 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "CapEff:")
		if !ok {
			continue
		}
		bits, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			return os.Geteuid() == 0
		}
		return bits&(1<<c) != 0
	}
	return os.Geteuid() == 0
}
