package cgroupfs

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/host/mountinfo"
)

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

const pureV2Mountinfo = `25 21 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
26 21 0:23 /docker/abc /mnt/my\040cg rw - cgroup cgroup rw,blkio,cpu
`

func TestPick(t *testing.T) {
	ctrl := func(list string) func(string) string { return func(string) string { return list } }
	cases := []struct {
		name, mountinfo, v2, v1, controllers string
		want                                 Hierarchy
		ok                                   bool
	}{
		{"hybrid with io bound to v1", hybridMountinfo, "io", "blkio", "hugetlb\n", Hierarchy{1, "/sys/fs/cgroup/blkio", "/", "blkio"}, true},
		{"hybrid with io on v2", hybridMountinfo, "io", "blkio", "cpu io memory\n", Hierarchy{2, "/sys/fs/cgroup/unified", "/", "io"}, true},
		{"hybrid memory on v1", hybridMountinfo, "memory", "memory", "io\n", Hierarchy{1, "/sys/fs/cgroup/memory", "/", "memory"}, true},
		{"pure v2 preferred over v1", pureV2Mountinfo, "io", "blkio", "cpuset cpu io memory pids\n", Hierarchy{2, "/sys/fs/cgroup", "/", "io"}, true},
		{"v1 escaped and co-mounted", pureV2Mountinfo, "io", "blkio", "memory\n", Hierarchy{1, "/mnt/my cg", "/docker/abc", "blkio"}, true},
		{"nothing", "31 23 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "io", "blkio", "memory pids\n", Hierarchy{}, false},
	}
	for _, c := range cases {
		all, err := mountinfo.Parse(strings.NewReader(c.mountinfo))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := pick(cgroupOnly(all), c.v2, c.v1, ctrl(c.controllers))
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestCgroupLineAndDir(t *testing.T) {
	const self = "9:name=systemd:/\n7:blkio:/docker/abc/x\n4:memory:/m\n0::/user.slice/s.scope\n"
	v1, err := cgroupLine(strings.NewReader(self), 1, "blkio")
	if err != nil || v1 != "/docker/abc/x" {
		t.Errorf("v1 line = %q, %v", v1, err)
	}
	if m, err := cgroupLine(strings.NewReader(self), 1, "memory"); err != nil || m != "/m" {
		t.Errorf("v1 memory line = %q, %v", m, err)
	}
	v2, err := cgroupLine(strings.NewReader(self), 2, "io")
	if err != nil || v2 != "/user.slice/s.scope" {
		t.Errorf("v2 line = %q, %v", v2, err)
	}
	if _, err := cgroupLine(strings.NewReader("4:memory:/m\n"), 1, "blkio"); err == nil {
		t.Error("found a blkio line where there is none")
	}
	h := Hierarchy{1, "/sys/fs/cgroup/blkio", "/docker/abc", "blkio"}
	for cg, want := range map[string]string{
		"/docker/abc/x": "/sys/fs/cgroup/blkio/x",
		"/docker/abc":   "/sys/fs/cgroup/blkio",
		"/elsewhere":    "/sys/fs/cgroup/blkio", // not visible: the root
	} {
		if got := h.dirOf(cg); got != want {
			t.Errorf("dirOf(%s) = %s, want %s", cg, got, want)
		}
	}
	if got := (Hierarchy{Version: 2, Mount: "/sys/fs/cgroup", Root: "/"}).dirOf("/a/b"); got != "/sys/fs/cgroup/a/b" {
		t.Errorf("v2 dirOf = %s", got)
	}
}
