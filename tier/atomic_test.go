package tier

import (
	"strings"
	"testing"
)

// TestDeviceAtomicWrite states what the device under a folder reports of
// its atomic writes, from the kernel's own files: a unit it promises, or
// its logical block as a fact, never a promise; nothing for a filesystem
// without a device (tmpfs).
func TestDeviceAtomicWrite(t *testing.T) {
	info, err := Inspect("disk", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got := DeviceAtomicWrite(info.Device)
	switch {
	case !strings.HasPrefix(info.Device, "/dev/"):
		if got != "" {
			t.Errorf("%s (no device) reports %q", info.Device, got)
		}
	case got == "":
		t.Skipf("%s has no queue this machine describes", info.Device)
	case !strings.Contains(got, "promises atomic writes up to") && !strings.Contains(got, "not a promise"):
		t.Errorf("%s: %q; want a promised unit or the logical block stated as no promise", info.Device, got)
	}
	t.Logf("%s: %s", info.Device, got)
	if got := DeviceAtomicWrite("tmpfs"); got != "" {
		t.Errorf("tmpfs reports %q", got)
	}
}
