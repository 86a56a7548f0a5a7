package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// What the server engines share while opening a run, beside starting the
// server: its folders, the study's scratch folder and the copy of a
// per-study template.

// RunDirs returns the absolute folders of components, in that order, from
// a run's component folders: the server runs in another working folder
// (and often as another user), so a relative path would name the wrong
// place. All components must have a folder.
func RunDirs(dirs map[string]string, components ...string) ([]string, error) {
	out := make([]string, len(components))
	for i, c := range components {
		if dirs[c] == "" {
			if len(components) == 1 {
				return nil, fmt.Errorf("need a folder for component %s", c)
			}
			return nil, fmt.Errorf("need folders for components %s", strings.Join(components, " and "))
		}
		abs, err := filepath.Abs(dirs[c])
		if err != nil {
			return nil, fmt.Errorf("folder of %s: %w", c, err)
		}
		out[i] = abs
	}
	return out, nil
}

// Scratch returns the study's scratch folder (engine.Config.Scratch) as an
// absolute path; without one, a new temporary folder (pattern as for
// os.MkdirTemp) that c removes, so the engine makes its template per run.
func Scratch(scratch, pattern string, c *Closers) (string, error) {
	if scratch != "" {
		abs, err := filepath.Abs(scratch)
		if err != nil {
			return "", fmt.Errorf("scratch folder: %w", err)
		}
		return abs, nil
	}
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", fmt.Errorf("scratch folder: %w", err)
	}
	c.RemoveAll(dir)
	return dir, nil
}

// CopyTree copies the folders, regular files and symlinks under src to
// where dest puts each (dest gets the path relative to src; "" skips it),
// keeping modes: a run's copy of a template, whose parts may go to
// different tiers. A folder dest names that already exists (a component's
// folder) is used as it is. Other files (a crashed bootstrap's socket) are
// not state and are skipped. Regular files are copied with CopyFile.
func CopyTree(src string, dest func(rel string) string) error {
	return filepath.WalkDir(src, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		target := dest(rel)
		if target == "" {
			if de.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		switch {
		case de.IsDir():
			err := os.Mkdir(target, info.Mode().Perm())
			if errors.Is(err, fs.ErrExist) {
				if st, serr := os.Stat(target); serr == nil && st.IsDir() {
					return nil
				}
			}
			return err
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return CopyFile(path, target, info.Mode().Perm())
		}
		return nil
	})
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
