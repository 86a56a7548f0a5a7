package images

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// fileTime is the modification time of Files: fixed, so that a
// Files-only recipe makes the same layer, and so the same image id, on
// every machine.
var fileTime = time.Unix(1, 0).UTC()

// checkFiles rejects paths that would put a file outside the root or
// twice into it.
func checkFiles(files []File) error {
	seen := map[string]bool{}
	for _, f := range files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return fmt.Errorf("file path %q: not a clean absolute path below /", f.Path)
		}
		if seen[f.Path] {
			return fmt.Errorf("file path %q: given twice", f.Path)
		}
		seen[f.Path] = true
		switch f.Mode.Type() {
		case 0, os.ModeDir, os.ModeSymlink:
		default:
			return fmt.Errorf("file path %q: mode %v is neither a file, a folder nor a link", f.Path, f.Mode)
		}
	}
	return nil
}

// writeLayer writes the image's one layer to w: the entries of base
// (mmdebstrap's tarball; nil for none) less device nodes (the runtime
// mounts its own /dev) and the paths that Files replace, then Files,
// after the parent folders that neither gives.
func writeLayer(w io.Writer, base io.Reader, files []File) error {
	files = sortedFiles(files)
	replaced := map[string]bool{}
	for _, f := range files {
		replaced[tarName(f.Path)] = true
	}
	tw := tar.NewWriter(w)
	have := map[string]bool{} // entries written, by tar name without a trailing /
	if base != nil {
		tr := tar.NewReader(base)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("reading the Debian root: %w", err)
			}
			name := tarName(hdr.Name)
			switch {
			case name == "" || replaced[name]:
				continue // the root folder itself is the runtime's
			case hdr.Typeflag == tar.TypeChar || hdr.Typeflag == tar.TypeBlock || hdr.Typeflag == tar.TypeFifo:
				continue
			}
			hdr.Name = name
			if hdr.Typeflag == tar.TypeDir {
				hdr.Name += "/"
			}
			if hdr.Typeflag == tar.TypeLink {
				hdr.Linkname = tarName(hdr.Linkname)
			}
			// Let the writer pick the format: GNU tar's headers come in
			// as GNU, whose access and change times a layer does not need.
			hdr.Format = tar.FormatUnknown
			hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
			if err := tw.WriteHeader(hdr); err != nil {
				return fmt.Errorf("writing %s into the layer: %w", name, err)
			}
			if _, err := io.Copy(tw, tr); err != nil {
				return fmt.Errorf("copying %s into the layer: %w", name, err)
			}
			have[name] = true
		}
	}
	for _, f := range files {
		name := tarName(f.Path)
		for _, dir := range parents(name) {
			if have[dir] {
				continue
			}
			hdr := &tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: fileTime}
			if err := tw.WriteHeader(hdr); err != nil {
				return fmt.Errorf("writing folder %s into the layer: %w", dir, err)
			}
			have[dir] = true
		}
		if err := tw.WriteHeader(fileHeader(name, f)); err != nil {
			return fmt.Errorf("writing %s into the layer: %w", f.Path, err)
		}
		if f.Mode.IsRegular() {
			if _, err := tw.Write(f.Data); err != nil {
				return fmt.Errorf("writing %s into the layer: %w", f.Path, err)
			}
		}
		have[name] = true
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing the layer: %w", err)
	}
	return nil
}

// sortedFiles orders files by path, which puts every folder before
// what it holds.
func sortedFiles(files []File) []File {
	files = append([]File(nil), files...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files
}

// tarName is p as a layer names it: relative, without "./" or a
// trailing "/"; "" for the root.
func tarName(p string) string {
	p = path.Clean("/" + p)
	return strings.TrimPrefix(p, "/")
}

// parents lists the folders above name, outermost first.
func parents(name string) []string {
	var dirs []string
	for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// fileHeader is f's tar header: owned by root, with f's permission and
// setuid, setgid and sticky bits.
func fileHeader(name string, f File) *tar.Header {
	hdr := &tar.Header{Name: name, ModTime: fileTime, Mode: int64(f.Mode.Perm())}
	if f.Mode&os.ModeSetuid != 0 {
		hdr.Mode |= 0o4000
	}
	if f.Mode&os.ModeSetgid != 0 {
		hdr.Mode |= 0o2000
	}
	if f.Mode&os.ModeSticky != 0 {
		hdr.Mode |= 0o1000
	}
	switch {
	case f.Mode.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		if f.Mode.Perm() == 0 {
			hdr.Mode |= 0o755
		}
	case f.Mode&os.ModeSymlink != 0:
		hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, string(f.Data), 0o777
	default:
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
		if f.Mode.Perm() == 0 {
			hdr.Mode |= 0o644
		}
	}
	return hdr
}
