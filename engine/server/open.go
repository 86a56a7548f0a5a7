package server

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// What the server engines (postgres, mariadb) share while opening a run,
// beside starting the server: its folders, its numeric options and the
// copy of a per-study template. Errors start with "open ENGINE:", as the
// engines' own Open errors do.

// RunDirs returns the absolute folders of components, in that order, from
// a run's component folders: the server runs in another working folder
// (and often as another user), so a relative path would name the wrong
// place. All components must have a folder.
func RunDirs(engineName string, dirs map[string]string, components ...string) ([]string, error) {
	out := make([]string, len(components))
	for i, c := range components {
		if dirs[c] == "" {
			return nil, fmt.Errorf("open %s: need folders for components %s", engineName, strings.Join(components, " and "))
		}
		out[i] = dirs[c]
	}
	for i, d := range out {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", engineName, err)
		}
		out[i] = abs
	}
	return out, nil
}

// CopyFile copies regular file src to dst, which must not exist, with mode
// perm: one file of a template a run copies. The copy goes through
// copy_file_range, so it is a reflink or an in-kernel copy where the
// filesystem can.
func CopyFile(src, dst string, perm os.FileMode) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}
