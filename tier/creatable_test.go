package tier

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCreatable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, want string // want: a fragment of the error, "" for none
	}{
		{"existing folder", dir, ""},
		{"folders to make", filepath.Join(dir, "a", "b", "c"), ""},
		{"a file", file, "is a file, not a folder"},
		{"below a file", filepath.Join(file, "state"), "is below a file, not a folder"},
		{"in /proc", "/proc/tierbench-hdr", "folder /proc is on proc (mounted at /proc), a kernel interface"},
		{"in /sys", "/sys/kernel/tierbench", "is on sysfs"},
	}
	for _, c := range cases {
		err := CheckCreatable(c.path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Error("CheckCreatable made a folder")
	}
}
