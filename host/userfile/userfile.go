// Package userfile writes and reads files at paths a user names (-o,
// --save-profile, --hdr, a study or profile file). tierbench runs as root,
// so a careless write is the host's loss: renaming a temporary file over
// /dev/null replaced the machine's null device with a regular file, and
// every program writing to it failed from then on. So:
//
//   - a path that is absent or a regular file is written atomically (a
//     temporary file beside it, renamed into place): a failure leaves no
//     half-written file;
//   - a symbolic link is followed, never replaced: the file it names is
//     written as above, and the link stays a link;
//   - a character device or a named pipe (/dev/null, /dev/stdout,
//     a process substitution's /dev/fd/63) is written through, never
//     replaced; a pipe nobody reads is refused rather than waited on;
//   - a block device, a socket or a folder is refused with the reason.
//
// Reading is bounded: a folder, a device or a socket is refused, a file
// over the caller's cap is refused, and a named pipe is read without ever
// waiting to be opened (one nobody writes reads as empty).
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// NotUsableError is a path that names something the caller cannot write
// (or read) there: a folder, a block device, a socket, a missing folder,
// a file over the cap. It is the user's to fix: callers exit 2 on it.
type NotUsableError struct {
	Path   string
	Reason string // what the path is and what to do, as a clause
}

func (e *NotUsableError) Error() string { return e.Path + ": " + e.Reason }

// maxLinks bounds the links followed, as the kernel's ELOOP does.
const maxLinks = 40

// Target is what a path resolves to for writing.
type Target struct {
	// Path is the file written: the path given, or the file its links
	// name.
	Path string
	// Through is true for a character device or a named pipe, written
	// through in place; false for a regular file or a new one, written
	// atomically.
	Through bool
}

// Resolve follows path's symbolic links (a dangling one names the file to
// create) and says how the file there would be written, refusing what
// cannot be: a folder, a block device, a socket, a missing folder. It
// writes nothing, so callers check their outputs before measuring or
// rendering anything.
func Resolve(path string) (Target, error) {
	p := path
	for i := 0; ; i++ {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return newFileTarget(path, p)
		}
		if err != nil {
			return Target{}, fmt.Errorf("%s: %w", path, err)
		}
		m := fi.Mode()
		switch {
		case m&fs.ModeSymlink != 0:
			if i == maxLinks {
				return Target{}, &NotUsableError{path, "it is a loop of symbolic links; give a file path"}
			}
			to, err := os.Readlink(p)
			if err != nil {
				return Target{}, fmt.Errorf("%s: %w", path, err)
			}
			if !filepath.IsAbs(to) {
				to = filepath.Join(filepath.Dir(p), to)
			}
			p = to
			continue
		case m.IsRegular():
			return Target{Path: p}, nil
		case m.IsDir():
			return Target{}, &NotUsableError{path, "it is a folder; give a file name in it"}
		case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
			return Target{Path: p, Through: true}, nil
		case m&fs.ModeDevice != 0:
			return Target{}, &NotUsableError{path, "it is a block device, and writing there would overwrite a disk; give a file path"}
		case m&fs.ModeSocket != 0:
			return Target{}, &NotUsableError{path, "it is a socket, not a file; give a file path"}
		default:
			return Target{}, &NotUsableError{path, fmt.Sprintf("it is not a file (%s); give a file path", m.Type())}
		}
	}
}

// newFileTarget is a file to create at p (path as given, for messages):
// its folder must exist.
func newFileTarget(path, p string) (Target, error) {
	dir := filepath.Dir(p)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Target{}, &NotUsableError{path, fmt.Sprintf("folder %s does not exist; create it or give another path", dir)}
	case err != nil:
		return Target{}, fmt.Errorf("%s: %w", path, err)
	case !st.IsDir():
		return Target{}, &NotUsableError{path, fmt.Sprintf("%s is not a folder; give another path", dir)}
	}
	return Target{Path: p}, nil
}

// WriteFile writes data to path as Write does.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write resolves path and writes what fill writes to it: atomically for a
// regular or new file (mode perm; a failure of fill leaves the file as it
// was), through a character device or a named pipe, and not at all where
// Resolve refuses. Errors name path as given, never a temporary file.
func Write(path string, perm os.FileMode, fill func(io.Writer) error) error {
	t, err := Resolve(path)
	if err != nil {
		return err
	}
	if t.Through {
		return writeThrough(path, t.Path, fill)
	}
	return writeAtomic(path, t.Path, perm, fill)
}

// writeThrough writes into a device or a pipe in place. A pipe is opened
// without waiting: one that nobody reads is refused, not waited on.
func writeThrough(path, p string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return &NotUsableError{path, "it is a named pipe that nothing reads; start its reader first, or give a file path"}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	werr := fill(f)
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("write %s: %w", path, werr)
	}
	if cerr != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(cerr))
	}
	return nil
}

// writeAtomic writes a temporary file beside p and renames it over p.
func writeAtomic(path, p string, perm os.FileMode, fill func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tierbench-"+filepath.Base(p)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fill(tmp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	// Resolve said p was regular or absent; a device or link put there
	// since is not renamed over.
	if fi, lerr := os.Lstat(p); lerr == nil && !fi.Mode().IsRegular() {
		err = &NotUsableError{path, "it changed into something other than a file while being written; try again"}
		return err
	}
	if err = os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops an *os.PathError's or *os.LinkError's own path: the
// temporary file's name means nothing to the user.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Read reads the file at path, of at most max bytes. A folder, a device
// or a socket is refused, as is a file over max (*NotUsableError, with
// what names the kind of file expected, such as "study file"). A named
// pipe is read within the bound, opened without waiting for a writer.
func Read(path, what string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := readable(path, what, fi.Mode()); err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() > max {
		return nil, tooLarge(path, what, max)
	}
	flags := os.O_RDONLY
	if fi.Mode()&fs.ModeNamedPipe != 0 {
		flags |= syscall.O_NONBLOCK
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The kind is checked again on the open file: path may have been
	// swapped between the two.
	if ofi, err := f.Stat(); err != nil {
		return nil, err
	} else if err := readable(path, what, ofi.Mode()); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, tooLarge(path, what, max)
	}
	return data, nil
}

func readable(path, what string, m fs.FileMode) error {
	switch {
	case m.IsDir():
		return &NotUsableError{path, fmt.Sprintf("it is a folder; give the path of a %s in it", what)}
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return &NotUsableError{path, fmt.Sprintf("it is a device, not a %s; give the path of a %s", what, what)}
	case m&fs.ModeSocket != 0:
		return &NotUsableError{path, fmt.Sprintf("it is a socket, not a %s; give the path of a %s", what, what)}
	}
	return nil
}

func tooLarge(path, what string, max int64) error {
	return &NotUsableError{path, fmt.Sprintf("it is larger than %d KiB, which no %s is; give the path of a %s", max>>10, what, what)}
}
