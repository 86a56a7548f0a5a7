package throttle

import (
	"strings"
	"testing"
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

func mounts(t *testing.T, s string) []mountEntry {
	t.Helper()
	ms, err := parseMountinfo(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	var out []mountEntry
	for _, m := range ms {
		if m.fstype == "cgroup" || m.fstype == "cgroup2" {
			out = append(out, m)
		}
	}
	return out
}

func TestPickHierarchy(t *testing.T) {
	ctrl := func(list string) func(string) string { return func(string) string { return list } }
	cases := []struct {
		name, mountinfo, controllers string
		want                         hierarchy
		wantErr                      bool
	}{
		{"hybrid with io bound to v1", hybridMountinfo, "hugetlb\n", hierarchy{1, "/sys/fs/cgroup/blkio", "/"}, false},
		{"hybrid with io on v2", hybridMountinfo, "cpu io memory\n", hierarchy{2, "/sys/fs/cgroup/unified", "/"}, false},
		{"pure v2 preferred over v1", pureV2Mountinfo, "cpuset cpu io memory pids\n", hierarchy{2, "/sys/fs/cgroup", "/"}, false},
		{"v1 escaped and co-mounted", pureV2Mountinfo, "memory\n", hierarchy{1, "/mnt/my cg", "/docker/abc"}, false},
		{"nothing", "31 23 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "memory pids\n", hierarchy{}, true},
	}
	for _, c := range cases {
		got, err := pickHierarchy(mounts(t, c.mountinfo), ctrl(c.controllers))
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v (error %v)", c.name, got, err, c.want, c.wantErr)
		}
	}
}

func TestCgroupLineAndDir(t *testing.T) {
	const self = "9:name=systemd:/\n7:blkio:/docker/abc/x\n4:memory:/m\n0::/user.slice/s.scope\n"
	v1, err := cgroupLine(strings.NewReader(self), 1)
	if err != nil || v1 != "/docker/abc/x" {
		t.Errorf("v1 line = %q, %v", v1, err)
	}
	v2, err := cgroupLine(strings.NewReader(self), 2)
	if err != nil || v2 != "/user.slice/s.scope" {
		t.Errorf("v2 line = %q, %v", v2, err)
	}
	if _, err := cgroupLine(strings.NewReader("4:memory:/m\n"), 1); err == nil {
		t.Error("found a blkio line where there is none")
	}
	h := hierarchy{1, "/sys/fs/cgroup/blkio", "/docker/abc"}
	for cg, want := range map[string]string{
		"/docker/abc/x": "/sys/fs/cgroup/blkio/x",
		"/docker/abc":   "/sys/fs/cgroup/blkio",
		"/elsewhere":    "/sys/fs/cgroup/blkio", // not visible: the root
	} {
		if got := h.dirOf(cg); got != want {
			t.Errorf("dirOf(%s) = %s, want %s", cg, got, want)
		}
	}
	if got := (hierarchy{2, "/sys/fs/cgroup", "/"}).dirOf("/a/b"); got != "/sys/fs/cgroup/a/b" {
		t.Errorf("v2 dirOf = %s", got)
	}
}

func TestLimitsString(t *testing.T) {
	got := Limits{ReadIOPS: 200, WriteBPS: 4 << 20}.String()
	if want := "riops=200 wiops=max rbps=max wbps=4194304"; got != want {
		t.Errorf("io.max limits = %q, want %q", got, want)
	}
	if err := (Limits{WriteIOPS: -1}).validate(); err == nil {
		t.Error("negative limit accepted")
	}
}

func TestValidName(t *testing.T) {
	for _, n := range []string{"", ".", "..", "a/b", leafName} {
		if validName(n) == nil {
			t.Errorf("name %q accepted", n)
		}
	}
	if err := validName("tierbench-s1-slow"); err != nil {
		t.Error(err)
	}
}
