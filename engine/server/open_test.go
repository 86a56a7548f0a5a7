package server

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRunDirs(t *testing.T) {
	got, err := RunDirs("pg", map[string]string{"data": "/a/data", "wal": "rel/wal"}, "data", "wal")
	wd, _ := os.Getwd()
	if err != nil || !slices.Equal(got, []string{"/a/data", filepath.Join(wd, "rel/wal")}) {
		t.Errorf("RunDirs = %q, %v", got, err)
	}
	_, err = RunDirs("pg", map[string]string{"data": "/a/data"}, "data", "wal")
	if err == nil || err.Error() != "open pg: need folders for components data and wal" {
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
