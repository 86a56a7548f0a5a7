package mountinfo

import "testing"

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
