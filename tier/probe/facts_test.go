package probe

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestHasDAXOption(t *testing.T) {
	cases := map[string]bool{
		"rw,relatime,rw,dax":          true,
		"rw,relatime,rw,dax=always":   true,
		"rw,relatime,rw,dax=inode":    false,
		"rw,relatime,rw,dax=never":    false,
		"rw,relatime,rw,nodax,errors": false,
		"":                            false,
	}
	for opts, want := range cases {
		if got := hasDAXOption(opts); got != want {
			t.Errorf("hasDAXOption(%q) = %v, want %v", opts, got, want)
		}
	}
}

func TestNdctlMode(t *testing.T) {
	one := []byte(`{"dev":"namespace0.0","mode":"fsdax","map":"dev","size":16909336576,"uuid":"x","sector_size":512,"align":2097152,"blockdev":"pmem0"}`)
	many := []byte(`[{"dev":"namespace1.0","mode":"sector","size":1,"blockdev":"pmem1s"},
	{"dev":"namespace0.0","mode":"fsdax","blockdev":"pmem0"},{"dev":"namespace2.0","mode":"devdax","chardev":"dax2.0"}]`)
	cases := []struct {
		out  []byte
		dev  string
		want string
	}{
		{one, "pmem0", "fsdax"},
		{one, "pmem1", ""},
		{many, "pmem1s", "sector"},
		{many, "pmem0", "fsdax"},
		{[]byte("garbage"), "pmem0", ""},
	}
	for _, tc := range cases {
		if got := ndctlMode(tc.out, tc.dev); got != tc.want {
			t.Errorf("ndctlMode(%s, %s) = %q, want %q", tc.out, tc.dev, got, tc.want)
		}
	}
}

// TestDescribeDevice checks the sysfs lookup on this machine: a disk folder
// resolves to a whole disk listed in /sys/block (unless it has no block
// device, as on overlay), and tmpfs resolves to nothing.
func TestDescribeDevice(t *testing.T) {
	dir := t.TempDir()
	d := describeDevice(context.Background(), "", dir)
	if d.name != "" {
		if _, err := os.Stat(filepath.Join("/sys/block", d.name, "queue")); err != nil {
			t.Errorf("%s resolved to %q, which /sys/block does not list: %v", dir, d.name, err)
		}
	}
	if shm := describeDevice(context.Background(), "tmpfs", "/dev/shm"); shm != (device{}) {
		t.Errorf("/dev/shm resolved to %+v, want no device", shm)
	}
}

func TestDirectIOAndDAXChecksLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	directIOWorks(dir)
	statxDAX(dir)
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("files left in %s: %v", dir, left)
	}
}
