package probe

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/mountinfo"
)

// A mount table with what DefaultPaths must skip: pseudo filesystems, a
// read-only snap, /boot, a shadowed /dev/shm, a bind mount of the root
// device, a container's bind-mounted /etc/hosts, a read-only remount, and a
// space in a mount point.
const mountTable = `22 27 0:21 / /proc rw,relatime - proc proc rw
23 27 0:22 / /sys rw,relatime - sysfs sysfs rw
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684092k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
28 27 0:25 / /mnt/tools ro,nosuid,nodev,relatime - tmpfs tools ro,size=4k
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=1g
31 23 0:28 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw
40 27 8:1 / /boot rw,relatime - ext4 /dev/sda1 rw
41 27 7:0 / /snap/core/123 ro,nodev,relatime shared:5 - squashfs /dev/loop0 ro
42 27 254:0 /srv/data /srv/data rw,relatime - ext4 /dev/vda rw,discard
43 27 254:0 /etc/hosts /etc/hosts rw,relatime - ext4 /dev/vda rw
44 27 259:1 / /mnt/fast\040disk rw,noatime shared:7 - xfs /dev/nvme0n1p1 rw,attr2
45 27 259:2 / /mnt/archive ro,noatime - xfs /dev/nvme0n1p2 ro
46 27 259:3 / /mnt/pm rw,noatime - xfs /dev/pmem0 rw,dax=always
47 27 0:40 / /tmp rw,nosuid - tmpfs tmpfs rw
48 27 0:41 / /var/lib/docker/overlay2/x/merged rw - overlay overlay rw,lowerdir=a
`

func TestDataPaths(t *testing.T) {
	all, err := mountinfo.Parse(strings.NewReader(mountTable))
	if err != nil {
		t.Fatal(err)
	}
	ms := mountEntries(all)
	everyFolder := func(point string) string {
		if point == "/" {
			return "/var/tmp"
		}
		if point == "/etc/hosts" {
			return "" // a file
		}
		return point
	}
	cases := []struct {
		name   string
		folder func(string) string
		want   []string
	}{
		// /dev/shm comes after / because the mount that shadows the first
		// /dev/shm comes after /.
		{"all writable", everyFolder, []string{"/var/tmp", "/dev/shm", "/mnt/fast disk", "/mnt/pm"}},
		{"root not writable keeps its bind mount", func(p string) string {
			if p == "/" {
				return ""
			}
			return everyFolder(p)
		}, []string{"/dev/shm", "/srv/data", "/mnt/fast disk", "/mnt/pm"}},
		{"nothing writable", func(string) string { return "" }, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := dataPaths(ms, tc.folder)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseMountsUnescapes(t *testing.T) {
	all, err := mountinfo.Parse(strings.NewReader(mountTable))
	if err != nil {
		t.Fatal(err)
	}
	ms := mountEntries(all)
	for _, m := range ms {
		if m.devID == "259:1" {
			if m.point != "/mnt/fast disk" || m.fsType != "xfs" || m.source != "/dev/nvme0n1p1" ||
				m.mountOpts != "rw,noatime" || m.superOpts != "rw,attr2" {
				t.Errorf("parsed %+v", m)
			}
			return
		}
	}
	t.Error("mount 259:1 not parsed")
}

// TestDefaultPathsHere checks the real mount table: /dev/shm is listed, and
// every path is a folder the test can write.
func TestDefaultPathsHere(t *testing.T) {
	paths, err := DefaultPaths()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("default paths: %q", paths)
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		found := false
		for _, p := range paths {
			found = found || p == "/dev/shm"
		}
		if !found {
			t.Errorf("/dev/shm missing from %q", paths)
		}
	}
	for _, p := range paths {
		if p == "/dev/shm" {
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() || unix.Access(p, unix.W_OK) != nil {
			t.Errorf("%s is not a writable folder", p)
		}
	}
}
