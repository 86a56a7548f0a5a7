package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/host/procfs"
	"golang.org/x/sys/unix"
)

// Holder is a process that keeps a mount busy: a file open on it, or its
// working or root folder there.
type Holder struct {
	PID  int
	Comm string
	// What is the open file's path (as the process sees it) or "cwd" or
	// "root".
	What string
}

func (h Holder) String() string { return fmt.Sprintf("pid %d (%s): %s", h.PID, h.Comm, h.What) }

// Holders lists the processes that keep mount m busy (m as At found it,
// before any unmount), which is what an unmount refused with EBUSY, or a
// lazy unmount that never finishes, leaves a user asking. It asks with
// AT_STATX_DONT_SYNC, which a FUSE or network filesystem answers from its
// cache: a stuck server on some other mount must not hang the question.
// Processes that exit while it looks are skipped. A file of a mount
// detached lazily is named under m.Point, as it was opened, though the
// kernel now names it from the detached mount's root.
func Holders(m Mount) []Holder {
	pids, _ := procfs.PIDs()
	var out []Holder
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid)
		st, err := procfs.Of(pid)
		if err != nil {
			continue // gone
		}
		h := Holder{PID: pid, Comm: st.Comm}
		for _, link := range []string{"cwd", "root"} {
			if onMount(filepath.Join(dir, link), m.ID) {
				h.What = link
				out = append(out, h)
			}
		}
		fds, _ := os.ReadDir(filepath.Join(dir, "fd"))
		for _, fd := range fds {
			link := filepath.Join(dir, "fd", fd.Name())
			if onMount(link, m.ID) {
				h.What, _ = os.Readlink(link)
				if h.What != m.Point && !strings.HasPrefix(h.What, m.Point+"/") {
					h.What = filepath.Join(m.Point, h.What)
				}
				out = append(out, h)
			}
		}
	}
	return out
}

// onMount reports whether path (a /proc magic link) leads to a file on the
// mount with ID id.
func onMount(path string, id int) bool {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_STATX_DONT_SYNC, unix.STATX_MNT_ID, &st); err != nil {
		return false
	}
	return st.Mask&unix.STATX_MNT_ID != 0 && int(st.Mnt_id) == id
}
