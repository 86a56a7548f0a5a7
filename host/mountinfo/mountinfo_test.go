package mountinfo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tierbench/tierbench/testenv"
	"golang.org/x/sys/unix"
)

// TestAt looks up mount points of this machine's own table.
func TestAt(t *testing.T) {
	for _, tc := range []struct {
		dir    string
		ok     bool
		fsType string
	}{
		{"/proc", true, "proc"},
		{"/proc/self", false, ""},
		{"/no/such/folder", false, ""},
	} {
		m, ok := At(tc.dir)
		if ok != tc.ok || (ok && m.FSType != tc.fsType) {
			t.Errorf("At(%s) = %+v, %v; want a %q mount: %v", tc.dir, m, ok, tc.fsType, tc.ok)
		}
	}
}

// TestHolders mounts a tmpfs, opens a file on it and checks that Holders
// names this process with the file, and no one once it is closed.
func TestHolders(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skipf(t, "mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tierbench-test", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a tmpfs: %v", err)
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	m, ok := At(dir)
	if !ok || m.ID == 0 {
		t.Fatalf("At(%s) = %+v, %v; want the mount with its ID", dir, m, ok)
	}
	f, err := os.Create(filepath.Join(dir, "held"))
	if err != nil {
		t.Fatal(err)
	}
	want := Holder{PID: os.Getpid(), What: f.Name()}
	var found bool
	for _, h := range Holders(m) {
		found = found || (h.PID == want.PID && h.What == want.What)
	}
	if !found {
		t.Errorf("Holders(%s) = %v; want one with %v", dir, Holders(m), want)
	}
	f.Close()
	if hs := Holders(m); len(hs) != 0 {
		t.Errorf("Holders(%s) after the close = %v; want none", dir, hs)
	}
}
