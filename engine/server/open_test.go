package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRunDirs(t *testing.T) {
	got, err := RunDirs(map[string]string{"data": "/a/data", "wal": "rel/wal"}, "data", "wal")
	wd, _ := os.Getwd()
	if err != nil || !slices.Equal(got, []string{"/a/data", filepath.Join(wd, "rel/wal")}) {
		t.Errorf("RunDirs = %q, %v", got, err)
	}
	// The runner adds "open ENGINE: " to an Open's error.
	_, err = RunDirs(map[string]string{"data": "/a/data"}, "data", "wal")
	if err == nil || err.Error() != "need folders for components data and wal" {
		t.Errorf("missing folder: %v", err)
	}
}

func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(src, []byte("template"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CopyFile(src, dst, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dst)
	st, _ := os.Stat(dst)
	if err != nil || string(b) != "template" || st.Mode().Perm() != 0o600 {
		t.Errorf("copy %q %v mode %v", b, err, st.Mode())
	}
	if err := CopyFile(src, dst, 0o600); err == nil {
		t.Error("CopyFile overwrote an existing file")
	}
}

// TestCopyTree copies a template whose wal/ goes to another folder, as a
// run's copy puts a component on its own tier: folders, files and
// symlinks arrive with their modes, a folder dest names that exists is
// used, what dest skips and what is not state (a socket) are not copied.
func TestCopyTree(t *testing.T) {
	src, data, wal := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{"base/1", "wal/archive", "skipped"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, mode := range map[string]os.FileMode{"PG_VERSION": 0o600, "base/1/table": 0o640, "wal/0001": 0o600, "skipped/x": 0o644} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("base/1/table", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", filepath.Join(src, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	err = CopyTree(src, func(rel string) string {
		switch {
		case rel == "skipped":
			return ""
		case rel == "wal" || strings.HasPrefix(rel, "wal/"):
			return filepath.Join(wal, strings.TrimPrefix(strings.TrimPrefix(rel, "wal"), "/"))
		}
		return filepath.Join(data, rel)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, root := range []string{data, wal} {
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if path == root {
				return nil
			}
			info, _ := d.Info()
			rel, _ := filepath.Rel(filepath.Dir(root), path)
			if root == data {
				rel = strings.Replace(rel, filepath.Base(data), "data", 1)
			} else {
				rel = strings.Replace(rel, filepath.Base(wal), "wal", 1)
			}
			got = append(got, fmt.Sprintf("%s %v", rel, info.Mode()))
			return nil
		})
	}
	want := []string{"data/PG_VERSION -rw-------", "data/base drwx------", "data/base/1 drwx------",
		"data/base/1/table -rw-r-----", "data/link Lrwxrwxrwx", "wal/0001 -rw-------", "wal/archive drwx------"}
	if !slices.Equal(got, want) {
		t.Errorf("copied\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
