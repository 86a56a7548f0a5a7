package tier

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/host/mountinfo"
	"github.com/tierbench/tierbench/testenv"
)

func TestCheckPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, wantErr string
	}{
		{"existing folder", dir, ""},
		{"creatable folder", filepath.Join(dir, "new"), ""},
		{"relative", "tiers/ram", "not absolute"},
		{"a file", file, "is a file"},
		{"missing parent", filepath.Join(dir, "no", "such"), "parent folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPath(tc.path)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want it to mention %q", err, tc.wantErr)
			}
		})
	}
}

func TestPrepareCreatesAndInspects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tier")
	info, err := Prepare("disk", path)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		t.Fatalf("tier folder not created: %v", err)
	}
	if info.FSType == "" || info.Device == "" || info.MountPoint == "" {
		t.Errorf("incomplete info: %+v", info)
	}
	ents, _ := os.ReadDir(path)
	if len(ents) != 0 {
		t.Errorf("write check left %d files behind", len(ents))
	}
}

func TestTmpfsIsNotDurable(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		testenv.Skip(t, "no /dev/shm")
	}
	info, err := Inspect("ram", "/dev/shm")
	if err != nil {
		t.Fatal(err)
	}
	if info.FSType != "tmpfs" || info.Durable || info.Note == "" {
		t.Errorf("/dev/shm: %+v, want tmpfs, not durable, with a note", info)
	}
}

// TestLoopOnTmpfsIsNotDurable builds a real ext4 filesystem on a loop device
// whose file lives in /dev/shm: fsync there reaches RAM only.
func TestLoopOnTmpfsIsNotDurable(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root for losetup and mount")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skipf(t, "%s not installed", tool)
		}
	}
	img, err := os.CreateTemp("/dev/shm", "tierbench-test-*.img")
	if err != nil {
		testenv.Skip(t, "cannot write /dev/shm")
	}
	img.Close()
	defer os.Remove(img.Name())
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("truncate", "-s", "32M", img.Name())
	dev := run("losetup", "--find", "--show", img.Name())
	defer exec.Command("losetup", "-d", dev).Run()
	run("mkfs.ext4", "-q", dev)
	mnt := t.TempDir()
	run("mount", dev, mnt)
	defer exec.Command("umount", mnt).Run()

	info, err := Inspect("pm", mnt)
	if err != nil {
		t.Fatal(err)
	}
	if info.FSType != "ext4" || info.Device != dev || info.BackingFile != img.Name() {
		t.Errorf("got %+v, want ext4 on %s backed by %s", info, dev, img.Name())
	}
	if info.Durable {
		t.Error("a loop device on tmpfs was reported durable")
	}
}

func TestParseMountinfo(t *testing.T) {
	line := `36 35 98:0 /mnt1 /mnt/with\040space rw,noatime master:1 - ext3 /dev/root rw,errors=continue`
	m, ok := mountinfo.ParseLine(line)
	if !ok {
		t.Fatal("not parsed")
	}
	if m.Point != "/mnt/with space" || m.FSType != "ext3" || m.Source != "/dev/root" || m.Options() != "rw,noatime,rw,errors=continue" || m.DevID != "98:0" {
		t.Errorf("got %+v", m)
	}
	if _, ok := mountinfo.ParseLine("garbage"); ok {
		t.Error("garbage parsed")
	}
}
