package userfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// mknodNull makes a character device with /dev/null's numbers in dir, so
// the test writes through a device of its own, never the machine's.
func mknodNull(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "null")
	if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("cannot make a device node here (%v): needs root", err)
	}
	return p
}

func TestWriteKeepsWhatThePathIs(t *testing.T) {
	dir := t.TempDir()
	dev := mknodNull(t, dir)
	target := filepath.Join(dir, "target.html")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink("target.html", link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.html")
	if err := os.Symlink("new.html", dangling); err != nil {
		t.Fatal(err)
	}
	devLink := filepath.Join(dir, "devlink")
	if err := os.Symlink(dev, devLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		check      func(t *testing.T)
	}{
		{"device", dev, func(t *testing.T) { isCharDevice(t, dev) }},
		{"link to a device", devLink, func(t *testing.T) { isCharDevice(t, dev); isLink(t, devLink) }},
		{"link to a file", link, func(t *testing.T) { isLink(t, link); hasText(t, target, "new") }},
		{"dangling link", dangling, func(t *testing.T) { isLink(t, dangling); hasText(t, filepath.Join(dir, "new.html"), "new") }},
		{"regular file", target, func(t *testing.T) { hasText(t, target, "new") }},
		{"new file", filepath.Join(dir, "fresh.csv"), func(t *testing.T) { hasText(t, filepath.Join(dir, "fresh.csv"), "new") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteFile(tc.path, []byte("new"), 0o644); err != nil {
				t.Fatalf("WriteFile(%s): %v", tc.path, err)
			}
			tc.check(t)
		})
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tierbench-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteThroughAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Nothing reads it: refused at once, not waited on.
	var nu *NotUsableError
	if err := WriteFile(fifo, []byte("x"), 0o644); !errors.As(err, &nu) || !strings.Contains(err.Error(), "nothing reads") {
		t.Fatalf("a pipe nobody reads: got %v, want a NotUsableError saying nothing reads it", err)
	}
	// The reader holds the pipe open while the write goes through (into
	// the pipe's buffer), and reads it after: a reader that read at once
	// would see no writer yet, take that for the end, and close the pipe
	// before the write opened it.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteFile(fifo, []byte("through"), 0o644); err != nil {
		t.Fatalf("a pipe with a reader: %v", err)
	}
	if b, err := io.ReadAll(r); err != nil || string(b) != "through" {
		t.Errorf("the reader got %q (%v), want %q", b, err, "through")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", fi, err)
	}
}

func TestResolveRefuses(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"folder", dir, "is a folder"},
		{"missing folder", filepath.Join(dir, "no", "x.html"), "does not exist"},
		{"link loop", loop, "loop of symbolic links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.path)
			var nu *NotUsableError
			if !errors.As(err, &nu) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Resolve(%s) = %v, want a NotUsableError with %q", tc.path, err, tc.want)
			}
		})
	}
}

// A failed fill leaves the file as it was.
func TestWriteFailureKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.html")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(p, 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return errors.New("render failed")
	})
	if err == nil {
		t.Fatal("a failed fill wrote nothing wrong but returned no error")
	}
	hasText(t, p, "old")
	if left, _ := filepath.Glob(filepath.Join(dir, ".tierbench-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	dev := mknodNull(t, dir)
	zero := filepath.Join(dir, "zero")
	if err := unix.Mknod(zero, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"device", dev, "is a device"},
		{"endless device", zero, "is a device"},
		{"folder", dir, "is a folder"},
		{"over the cap", big, "larger than 1 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.path, "profile file", 1024)
			var nu *NotUsableError
			if !errors.As(err, &nu) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Read(%s) = %v, want a NotUsableError with %q", tc.path, err, tc.want)
			}
		})
	}
	// A pipe nobody writes reads as empty at once: never a hang.
	if b, err := Read(fifo, "profile file", 1024); err != nil || len(b) != 0 {
		t.Fatalf("Read of a pipe nobody writes = %q, %v; want empty", b, err)
	}
}

func isCharDevice(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", p, fi.Mode(), err)
	}
}

func isLink(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link: %v %v", p, fi.Mode(), err)
	}
}

func hasText(t *testing.T, p, want string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil || string(b) != want {
		t.Fatalf("%s holds %q (%v), want %q", p, b, err, want)
	}
}
