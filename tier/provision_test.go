package tier

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/testenv"
)

func needRoot(t *testing.T, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to mount and attach loop devices")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skipf(t, "%s not installed", tool)
		}
	}
}

func newProvisioner(t *testing.T) *Provisioner {
	t.Helper()
	l, err := OpenLedger(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Provisioner{Ledger: l, Tag: "test"}
}

func mounted(path string) bool { return isMountPoint(path) }

func TestTmpfsTierIsMountedAndUndone(t *testing.T) {
	needRoot(t)
	p := newProvisioner(t)
	dir, err := p.Tmpfs("scratch", TmpfsSpec{Size: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	info, err := Inspect("scratch", dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.FSType != "tmpfs" || info.Durable || !strings.Contains(info.MountOptions, "size=16384k") {
		t.Errorf("tier info %+v", info)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if mounted(dir) {
		t.Error("tmpfs still mounted after Close")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("mount point left behind")
	}
	if left, _ := p.Ledger.Leftovers(); len(left) != 0 {
		t.Errorf("ledger still lists %v", left)
	}
}

func TestLoopTierOnRAMIsMountedAndUndone(t *testing.T) {
	needRoot(t, "losetup", "mkfs.ext4", "mount")
	p := newProvisioner(t)
	dir, err := p.Loop(context.Background(), "pm", LoopSpec{Backing: "ram", Size: 32 << 20, FS: "ext4", MountOptions: "noatime"})
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	info, err := Inspect("pm", dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.FSType != "ext4" || !strings.HasPrefix(info.Device, "/dev/loop") || !strings.HasPrefix(info.BackingFile, "/dev/shm/") ||
		info.Durable || !strings.Contains(info.MountOptions, "noatime") {
		t.Errorf("tier info %+v", info)
	}
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if mounted(dir) {
		t.Error("still mounted")
	}
	if _, err := os.Stat(info.BackingFile); !os.IsNotExist(err) {
		t.Error("image left behind")
	}
	if out, _ := exec.Command("losetup", "-j", info.BackingFile).Output(); len(out) != 0 {
		t.Errorf("loop device still attached: %s", out)
	}
}

func TestMountPointMustBeFresh(t *testing.T) {
	needRoot(t)
	p := newProvisioner(t)
	dir := filepath.Join(p.Ledger.Dir(), "mnt", "test-busy")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "precious"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Tmpfs("busy", TmpfsSpec{Size: 1 << 20}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("err %v, want a refusal to mount over a non-empty folder", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "precious")); err != nil {
		t.Error("the refused folder's contents were touched")
	}
}

// TestCleanupUndoesWhatADeadProcessLeft writes records owned by a process
// that has exited, as a tierbench killed with -9 leaves them.
func TestCleanupUndoesWhatADeadProcessLeft(t *testing.T) {
	needRoot(t)
	p := newProvisioner(t)
	dir, err := p.Tmpfs("orphan", TmpfsSpec{Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite the owner of every record to a pid that is gone.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	if err := p.Ledger.update(func(rs []Resource) []Resource {
		for i := range rs {
			rs[i].Owner = dead
		}
		return rs
	}); err != nil {
		t.Fatal(err)
	}
	left, err := p.Ledger.Leftovers()
	if err != nil || len(left) != 2 {
		t.Fatalf("leftovers %v, %v; want the mount point and the mount", left, err)
	}
	done, err := p.Ledger.Cleanup()
	if err != nil || len(done) != 2 {
		t.Fatalf("cleanup undid %v, err %v", done, err)
	}
	if mounted(dir) {
		t.Error("still mounted")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("mount point left")
	}
	if left, _ := p.Ledger.Leftovers(); len(left) != 0 {
		t.Errorf("ledger still lists %v", left)
	}
	// Undo is idempotent: cleaning again finds nothing and fails nothing.
	if done, err := p.Ledger.Cleanup(); err != nil || len(done) != 0 {
		t.Errorf("second cleanup: %v %v", done, err)
	}
}

func TestPmemWithoutHardwareSaysSo(t *testing.T) {
	p := newProvisioner(t)
	cases := []struct{ dev, want string }{
		{"/dev/pmem-does-not-exist", "no persistent memory device"},
		{"/dev/null", "not a block device"},
	}
	for _, tc := range cases {
		_, err := p.Pmem(context.Background(), "pm", PmemSpec{Device: tc.dev, FS: "xfs", DAX: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.dev, err, tc.want)
		}
	}
	if loops, _ := filepath.Glob("/dev/loop[0-9]*"); len(loops) > 0 {
		if _, err := p.Pmem(context.Background(), "pm", PmemSpec{Device: loops[0], FS: "xfs"}); err == nil || !strings.Contains(err.Error(), "not a persistent memory device") {
			t.Errorf("a loop device was accepted as pmem: %v", err)
		}
	}
}

// TestCleanupOwnedByLeavesOtherOwners undoes what one dead process left
// and nothing another dead process left (cluster down after a killed
// node's serve process).
func TestCleanupOwnedByLeavesOtherOwners(t *testing.T) {
	led, err := OpenLedger(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if _, err := led.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	deadPID := func() int {
		cmd := exec.Command("true")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		return cmd.Process.Pid
	}
	owners := map[string]int{a: deadPID(), b: deadPID()}
	if err := led.update(func(rs []Resource) []Resource {
		for i := range rs {
			rs[i].Owner = owners[rs[i].Path]
		}
		return rs
	}); err != nil {
		t.Fatal(err)
	}
	done, err := led.CleanupOwnedBy(owners[a])
	if err != nil || len(done) != 1 || done[0].Path != a {
		t.Fatalf("undid %v, err %v; want folder a alone", done, err)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Error("folder a left")
	}
	if left, _ := led.Leftovers(); len(left) != 1 || left[0].Path != b {
		t.Errorf("left %v, want folder b's record alone", left)
	}
}
