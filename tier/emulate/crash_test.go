package emulate_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
)

// writerEnv, when set, makes the test binary a writer process: it writes
// and fdatasyncs $writerEnv in a loop, ignoring errors, until it is
// killed (or a few minutes pass).
const writerEnv = "TIERBENCH_EMULATE_TEST_WRITER"

func writerMain(path string) int {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Println("error:", err)
		return 2
	}
	fmt.Println("writing")
	buf := make([]byte, 4096)
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); {
		for i := range 64 {
			f.WriteAt(buf, int64(i)*4096)
		}
		unix.Fdatasync(int(f.Fd()))
	}
	return 0
}

// startCrashable serves a fresh backing folder on a crashable mount,
// undelayed.
func startCrashable(t *testing.T) (backing, mnt string, srv *emulate.Server) {
	t.Helper()
	return startWith(t, emulate.Latency{}, emulate.Options{Crashable: true})
}

// checkNoHidden checks that the mount's hidden folder, next to the
// backing folder, is gone once the mount is.
func checkNoHidden(t *testing.T, backing string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(backing))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tierbench-crash-") {
			eventually(t, "the hidden folder is removed", 10*time.Second, func() bool {
				_, err := os.Stat(filepath.Join(filepath.Dir(backing), e.Name()))
				return errors.Is(err, os.ErrNotExist)
			})
		}
	}
}

// cut cuts the power and puts it back on, as the runner does.
func cut(t *testing.T, srv *emulate.Server) emulate.Loss {
	t.Helper()
	loss, err := srv.PowerCut()
	if err != nil {
		t.Fatalf("PowerCut: %v", err)
	}
	if err := srv.PowerOn(); err != nil {
		t.Fatalf("PowerOn: %v", err)
	}
	t.Logf("%s", loss)
	return loss
}

// tree is a folder's content: a file's content, "/" for a folder, "->
// target" for a symlink, by path.
type tree map[string]string

func snapshot(t *testing.T, root string) tree {
	t.Helper()
	got := tree{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.IsDir():
			got[rel] = "/"
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			got[rel] = "-> " + target
			return err
		default:
			b, err := os.ReadFile(path)
			got[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot of %s: %v", root, err)
	}
	return got
}

// checkTree checks that both the backing folder and the mount hold want.
func checkTree(t *testing.T, backing, mnt string, want tree) {
	t.Helper()
	for _, dir := range []string{backing, mnt} {
		if got := snapshot(t, dir); !maps.Equal(got, want) {
			t.Errorf("%s holds\n%s\nwant\n%s", dir, show(got), show(want))
		}
	}
}

func show(tr tree) string {
	var b strings.Builder
	for _, k := range sortedKeys(tr) {
		v := tr[k]
		if len(v) > 40 {
			v = fmt.Sprintf("%.20q… (%d bytes)", v, len(v))
		} else {
			v = fmt.Sprintf("%q", v)
		}
		fmt.Fprintf(&b, "  %s: %s\n", k, v)
	}
	return b.String()
}

func sortedKeys(tr tree) []string {
	return slices.Sorted(maps.Keys(tr))
}

// A few steps that tests combine.

func writeAt(t *testing.T, path string, data []byte, off int64, flags int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
}

func fsyncPath(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync %s: %v", path, err)
	}
}

func fdatasyncPath(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		t.Fatalf("fdatasync %s: %v", path, err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestCrashFileData checks what a power cut leaves of a file's data and
// size: what was fsynced (or fdatasynced, or written through a handle
// opened O_DSYNC or O_DIRECT) survives; everything else goes back to the
// file's durable bytes and size.
func TestCrashFileData(t *testing.T) {
	durable := randomBytes(3*4096 + 100)
	data := randomBytes(5000)
	with := func(b []byte, off int, patch []byte) string {
		out := bytes.Clone(b)
		if need := off + len(patch); need > len(out) {
			out = append(out, make([]byte, need-len(out))...)
		}
		copy(out[off:], patch)
		return string(out)
	}
	cases := []struct {
		name   string
		change func(t *testing.T, path string)
		want   string
		// lost is how many files the loss reports rolled back; -1 for
		// either (the kernel may or may not have written a mapping's
		// pages back before the cut).
		lost int
	}{
		{"written and fsynced", func(t *testing.T, path string) {
			writeAt(t, path, data, 1000, 0)
			fsyncPath(t, path)
		}, with(durable, 1000, data), 0},
		{"written and fdatasynced", func(t *testing.T, path string) {
			writeAt(t, path, data, 1000, 0)
			fdatasyncPath(t, path)
		}, with(durable, 1000, data), 0},
		{"overwritten, not fsynced", func(t *testing.T, path string) {
			writeAt(t, path, data, 1000, 0)
		}, string(durable), 1},
		{"appended, not fsynced", func(t *testing.T, path string) {
			writeAt(t, path, data, int64(len(durable)), 0)
		}, string(durable), 1},
		{"overwritten and extended, not fsynced", func(t *testing.T, path string) {
			writeAt(t, path, data, int64(len(durable))-10, 0)
		}, string(durable), 1},
		{"fsynced, then written again", func(t *testing.T, path string) {
			writeAt(t, path, data, 0, 0)
			fsyncPath(t, path)
			writeAt(t, path, durable, 2000, 0)
		}, with(durable, 0, data), 1},
		{"fsynced through another handle", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			must(t, err)
			defer f.Close()
			_, err = f.WriteAt(data, 100)
			must(t, err)
			fsyncPath(t, path)
		}, with(durable, 100, data), 0},
		{"written O_DSYNC", func(t *testing.T, path string) {
			writeAt(t, path, data, 4000, syscall.O_DSYNC)
		}, with(durable, 4000, data), 0},
		{"written O_SYNC after a write not fsynced", func(t *testing.T, path string) {
			writeAt(t, path, data, 0, 0)
			writeAt(t, path, []byte("sync"), 10000, os.O_SYNC)
		}, with([]byte(with(durable, 0, data)), 10000, []byte("sync")), 0},
		{"written O_DIRECT past a write not fsynced", func(t *testing.T, path string) {
			writeAt(t, path, data, int64(len(durable)), 0) // lost, but for the hole it leaves
			fd, err := unix.Open(path, unix.O_RDWR|unix.O_DIRECT, 0)
			must(t, err)
			defer unix.Close(fd)
			buf := alignedBuf(t, 4096)
			copy(buf, "direct")
			_, err = unix.Pwrite(fd, buf, 5*4096)
			must(t, err)
		}, with([]byte(with(durable, len(durable), make([]byte, 5*4096-len(durable)))), 5*4096, append([]byte("direct"), make([]byte, 4090)...)), 1},
		{"truncated, not fsynced", func(t *testing.T, path string) {
			must(t, os.Truncate(path, 5))
		}, string(durable), 1},
		{"truncated and written, not fsynced", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			must(t, err)
			defer f.Close()
			must(t, f.Truncate(4097))
			_, err = f.WriteAt(data, 8000)
			must(t, err)
		}, string(durable), 1},
		{"truncated and fsynced", func(t *testing.T, path string) {
			must(t, os.Truncate(path, 5))
			fsyncPath(t, path)
		}, string(durable[:5]), 0},
		{"O_TRUNC, not fsynced", func(t *testing.T, path string) {
			must(t, os.WriteFile(path, []byte("new"), 0o644))
		}, string(durable), 1},
		{"hole punched, not fsynced", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			must(t, err)
			defer f.Close()
			must(t, unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 8192))
		}, string(durable), 1},
		{"fallocated past the end, not fsynced", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			must(t, err)
			defer f.Close()
			must(t, unix.Fallocate(int(f.Fd()), 0, 0, 1<<20))
		}, string(durable), 1},
		{"mapped and msynced", func(t *testing.T, path string) {
			mapWrite(t, path, data[:100], 50, true)
		}, with(durable, 50, data[:100]), 0},
		{"mapped, not msynced", func(t *testing.T, path string) {
			mapWrite(t, path, data[:100], 50, false)
		}, string(durable), -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			backing, mnt, srv := startCrashable(t)
			path := filepath.Join(mnt, "f")
			must(t, os.WriteFile(path, durable, 0o644))
			must(t, srv.Settle())
			tc.change(t, path)
			loss := cut(t, srv)
			checkTree(t, backing, mnt, tree{"f": tc.want})
			if tc.lost >= 0 && (loss.Files != tc.lost || (loss.Bytes > 0) != (tc.lost > 0)) {
				t.Errorf("loss %+v, want %d files rolled back", loss, tc.lost)
			}
			if loss.Entries != 0 {
				t.Errorf("loss %+v: no entry changed", loss)
			}
		})
	}
}

// mapWrite writes data at off through a shared mapping of path, and
// msyncs it if sync.
func mapWrite(t *testing.T, path string, data []byte, off int, sync bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, off+len(data), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	must(t, err)
	defer unix.Munmap(m)
	copy(m[off:], data)
	if sync {
		must(t, unix.Msync(m, unix.MS_SYNC))
	}
}

// TestCrashEntries checks what a power cut leaves of directory changes:
// they survive once the folder holding the entry (for a rename, the
// destination) is fsynced, and are undone otherwise, newest first.
func TestCrashEntries(t *testing.T) {
	cases := []struct {
		name   string
		before tree // durable: made, then settled
		change func(t *testing.T, in func(string) string)
		want   tree
	}{
		{"created, fsynced, folder not fsynced", tree{"d": "/"}, func(t *testing.T, in func(string) string) {
			writeAt(t, in("d/f"), []byte("data"), 0, 0)
			fsyncPath(t, in("d/f"))
		}, tree{"d": "/"}},
		{"created, folder fsynced, written, not fsynced", tree{"d": "/"}, func(t *testing.T, in func(string) string) {
			writeAt(t, in("d/f"), nil, 0, 0)
			fsyncPath(t, in("d"))
			writeAt(t, in("d/f"), []byte("data"), 0, 0)
		}, tree{"d": "/", "d/f": ""}},
		{"created, written, fsynced, folder fsynced", tree{}, func(t *testing.T, in func(string) string) {
			writeAt(t, in("f"), []byte("data"), 0, 0)
			fsyncPath(t, in("f"))
			fsyncPath(t, in("."))
		}, tree{"f": "data"}},
		{"created in the parent folder, other folder fsynced", tree{"d": "/"}, func(t *testing.T, in func(string) string) {
			writeAt(t, in("f"), []byte("data"), 0, 0)
			fsyncPath(t, in("d"))
		}, tree{"d": "/"}},
		{"renamed over a file, folder not fsynced", tree{"a": "A", "b": "B"}, func(t *testing.T, in func(string) string) {
			must(t, os.Rename(in("a"), in("b")))
		}, tree{"a": "A", "b": "B"}},
		{"renamed over a file, folder fsynced", tree{"a": "A", "b": "B"}, func(t *testing.T, in func(string) string) {
			must(t, os.Rename(in("a"), in("b")))
			fsyncPath(t, in("."))
		}, tree{"b": "A"}},
		{"renamed across folders, source fsynced", tree{"s": "/", "s/a": "A", "d": "/"}, func(t *testing.T, in func(string) string) {
			must(t, os.Rename(in("s/a"), in("d/a")))
			fsyncPath(t, in("s"))
		}, tree{"s": "/", "s/a": "A", "d": "/"}},
		{"renamed across folders, destination fsynced", tree{"s": "/", "s/a": "A", "d": "/"}, func(t *testing.T, in func(string) string) {
			must(t, os.Rename(in("s/a"), in("d/a")))
			fsyncPath(t, in("d"))
		}, tree{"s": "/", "d": "/", "d/a": "A"}},
		{"renamed twice, the first durable", tree{"a": "A", "d": "/"}, func(t *testing.T, in func(string) string) {
			must(t, os.Rename(in("a"), in("b")))
			fsyncPath(t, in("."))
			must(t, os.Rename(in("b"), in("d/c")))
		}, tree{"b": "A", "d": "/"}},
		{"folder renamed, then a file in it changed", tree{"d": "/", "d/f": "F"}, func(t *testing.T, in func(string) string) {
			must(t, os.Rename(in("d"), in("e")))
			must(t, os.Remove(in("e/f")))
			writeAt(t, in("e/g"), []byte("G"), 0, 0)
		}, tree{"d": "/", "d/f": "F"}},
		{"unlinked, folder not fsynced", tree{"f": "durable"}, func(t *testing.T, in func(string) string) {
			must(t, os.Remove(in("f")))
		}, tree{"f": "durable"}},
		{"written, not fsynced, unlinked", tree{"f": "durable"}, func(t *testing.T, in func(string) string) {
			writeAt(t, in("f"), []byte("lost!"), 3, 0)
			must(t, os.Remove(in("f")))
		}, tree{"f": "durable"}},
		{"unlinked, folder fsynced", tree{"f": "durable", "g": "G"}, func(t *testing.T, in func(string) string) {
			must(t, os.Remove(in("f")))
			fsyncPath(t, in("."))
		}, tree{"g": "G"}},
		{"created and unlinked, not durable", tree{}, func(t *testing.T, in func(string) string) {
			writeAt(t, in("tmp"), []byte("x"), 0, 0)
			must(t, os.Remove(in("tmp")))
		}, tree{}},
		{"unlinked, then made again", tree{"f": "old"}, func(t *testing.T, in func(string) string) {
			must(t, os.Remove(in("f")))
			writeAt(t, in("f"), []byte("new"), 0, 0)
			fsyncPath(t, in("f"))
		}, tree{"f": "old"}},
		{"folder made with contents, not durable", tree{}, func(t *testing.T, in func(string) string) {
			must(t, os.MkdirAll(in("d/e"), 0o755))
			writeAt(t, in("d/e/f"), []byte("x"), 0, 0)
			fsyncPath(t, in("d/e/f"))
			fsyncPath(t, in("d/e"))
			fsyncPath(t, in("d"))
		}, tree{}},
		{"folder made, parent fsynced", tree{}, func(t *testing.T, in func(string) string) {
			must(t, os.Mkdir(in("d"), 0o755))
			writeAt(t, in("d/f"), []byte("x"), 0, 0)
			fsyncPath(t, in("."))
		}, tree{"d": "/"}},
		{"folder emptied and removed", tree{"d": "/", "d/f": "F", "d/e": "/"}, func(t *testing.T, in func(string) string) {
			must(t, os.RemoveAll(in("d")))
		}, tree{"d": "/", "d/f": "F", "d/e": "/"}},
		{"folder removed, parent fsynced", tree{"d": "/"}, func(t *testing.T, in func(string) string) {
			must(t, os.Remove(in("d")))
			fsyncPath(t, in("."))
		}, tree{}},
		{"links, not durable", tree{"f": "F"}, func(t *testing.T, in func(string) string) {
			must(t, os.Symlink("f", in("s")))
			must(t, os.Link(in("f"), in("h")))
		}, tree{"f": "F"}},
		{"links, folder fsynced", tree{"f": "F"}, func(t *testing.T, in func(string) string) {
			must(t, os.Symlink("f", in("s")))
			must(t, os.Link(in("f"), in("h")))
			fsyncPath(t, in("."))
		}, tree{"f": "F", "s": "-> f", "h": "F"}},
		{"replaced atomically, folder fsynced", tree{"cur": "old"}, func(t *testing.T, in func(string) string) {
			writeAt(t, in("tmp"), []byte("new"), 0, 0)
			fsyncPath(t, in("tmp"))
			must(t, os.Rename(in("tmp"), in("cur")))
			fsyncPath(t, in("."))
		}, tree{"cur": "new"}},
		{"replaced atomically, folder not fsynced", tree{"cur": "old"}, func(t *testing.T, in func(string) string) {
			writeAt(t, in("tmp"), []byte("new"), 0, 0)
			fsyncPath(t, in("tmp"))
			must(t, os.Rename(in("tmp"), in("cur")))
		}, tree{"cur": "old"}},
		{"exchanged", tree{"a": "A", "b": "B"}, func(t *testing.T, in func(string) string) {
			must(t, unix.Renameat2(unix.AT_FDCWD, in("a"), unix.AT_FDCWD, in("b"), unix.RENAME_EXCHANGE))
		}, tree{"a": "A", "b": "B"}},
		{"renamed over an empty folder", tree{"a": "/", "a/f": "F", "b": "/"}, func(t *testing.T, in func(string) string) {
			// (os.Rename refuses to replace a folder.)
			must(t, syscall.Rename(in("a"), in("b")))
		}, tree{"a": "/", "a/f": "F", "b": "/"}},
		// An open folder keeps the kernel's inode, which its removal
		// marked dead, until after the cut: the folder put back must
		// not be served as that inode.
		{"folder removed while open", tree{"d": "/", "d/e": "/"}, func(t *testing.T, in func(string) string) {
			holdOpen(t, in("d"))
			holdOpen(t, in("d/e"))
			must(t, os.RemoveAll(in("d")))
		}, tree{"d": "/", "d/e": "/"}},
		{"open folder renamed over", tree{"a": "/", "b": "/"}, func(t *testing.T, in func(string) string) {
			holdOpen(t, in("b"))
			must(t, syscall.Rename(in("a"), in("b")))
		}, tree{"a": "/", "b": "/"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			backing, mnt, srv := startCrashable(t)
			in := func(p string) string { return filepath.Join(mnt, p) }
			for _, p := range sortedKeys(tc.before) {
				if tc.before[p] == "/" {
					must(t, os.Mkdir(in(p), 0o755))
				} else {
					must(t, os.WriteFile(in(p), []byte(tc.before[p]), 0o644))
				}
			}
			must(t, srv.Settle())
			// Cache what there is, so that a stale kernel cache shows.
			snapshot(t, mnt)
			tc.change(t, in)
			cut(t, srv)
			checkTree(t, backing, mnt, tc.want)
		})
	}
}

// holdOpen keeps path open until the test ends.
func holdOpen(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	t.Cleanup(func() { f.Close() })
}

// TestCrashSettle checks that Settle makes everything done so far durable.
func TestCrashSettle(t *testing.T) {
	backing, mnt, srv := startCrashable(t)
	in := func(p string) string { return filepath.Join(mnt, p) }
	must(t, os.Mkdir(in("d"), 0o755))
	writeAt(t, in("d/f"), []byte("settled"), 0, 0)
	writeAt(t, in("g"), []byte("gone"), 0, 0)
	must(t, os.Remove(in("g")))
	must(t, srv.Settle())
	writeAt(t, in("d/f"), []byte("after"), 100, 0)
	loss := cut(t, srv)
	checkTree(t, backing, mnt, tree{"d": "/", "d/f": "settled"})
	if loss.Files != 1 || loss.Entries != 0 {
		t.Errorf("loss %+v, want the one file written after Settle", loss)
	}
}

// TestCrashPowerOff checks that between PowerCut and PowerOn every
// operation that reaches the server fails with EIO and changes nothing
// in the backing folder, and that PowerOn brings the mount back.
func TestCrashPowerOff(t *testing.T) {
	backing, mnt, srv := startCrashable(t)
	in := func(p string) string { return filepath.Join(mnt, p) }
	writeAt(t, in("f"), []byte("durable"), 0, 0)
	must(t, os.Mkdir(in("d"), 0o755))
	must(t, srv.Settle())
	held, err := os.OpenFile(in("f"), os.O_RDWR, 0)
	must(t, err)
	defer held.Close()
	before := snapshot(t, backing)

	if _, err := srv.PowerCut(); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PowerCut(); err == nil {
		t.Error("a second PowerCut succeeded")
	}
	if err := srv.Settle(); err == nil {
		t.Error("Settle while the power is cut succeeded")
	}
	ops := []struct {
		name string
		op   func() error
	}{
		{"stat", func() error { _, err := os.Stat(in("f")); return err }},
		{"lookup of a new name", func() error { _, err := os.Stat(in("new")); return err }},
		{"open", func() error { f, err := os.Open(in("f")); f.Close(); return err }},
		{"create", func() error { return os.WriteFile(in("new"), []byte("x"), 0o644) }},
		{"read", func() error { _, err := held.ReadAt(make([]byte, 4), 0); return err }},
		{"write", func() error { _, err := held.WriteAt([]byte("x"), 0); return err }},
		{"fsync", held.Sync},
		{"truncate", func() error { return held.Truncate(0) }},
		{"readdir", func() error { _, err := os.ReadDir(in("d")); return err }},
		{"mkdir", func() error { return os.Mkdir(in("e"), 0o755) }},
		{"unlink", func() error { return os.Remove(in("f")) }},
		{"rename", func() error { return os.Rename(in("f"), in("g")) }},
	}
	for _, o := range ops {
		if err := o.op(); !errors.Is(err, syscall.EIO) {
			t.Errorf("%s while the power is cut: %v, want EIO", o.name, err)
		}
	}
	if got := snapshot(t, backing); !maps.Equal(got, before) {
		t.Errorf("the backing folder changed while the power was cut:\n%s\nwas\n%s", show(got), show(before))
	}

	must(t, srv.PowerOn())
	if got := mustRead(t, in("f")); string(got) != "durable" {
		t.Errorf("after PowerOn f = %q", got)
	}
	if _, err := held.ReadAt(make([]byte, 4), 0); err != nil {
		t.Errorf("read through a handle opened before the cut, after PowerOn: %v", err)
	}
	writeAt(t, in("after"), []byte("on"), 0, 0)
	if got := mustRead(t, filepath.Join(backing, "after")); string(got) != "on" {
		t.Errorf("after PowerOn a write reaches the backing folder as %q", got)
	}
}

// TestCrashTwice checks that tracking starts afresh after PowerOn: a
// second cut loses only what came after the first.
func TestCrashTwice(t *testing.T) {
	backing, mnt, srv := startCrashable(t)
	in := func(p string) string { return filepath.Join(mnt, p) }
	writeAt(t, in("f"), []byte("one"), 0, 0)
	must(t, srv.Settle())
	writeAt(t, in("f"), []byte("two"), 0, 0)
	writeAt(t, in("g"), []byte("lost"), 0, 0)
	cut(t, srv)
	checkTree(t, backing, mnt, tree{"f": "one"})

	writeAt(t, in("f"), []byte("three"), 0, 0)
	fsyncPath(t, in("f"))
	writeAt(t, in("h"), []byte("kept"), 0, 0)
	fsyncPath(t, in("h"))
	fsyncPath(t, in("."))
	writeAt(t, in("f"), []byte("four!!"), 0, 0)
	loss := cut(t, srv)
	checkTree(t, backing, mnt, tree{"f": "three", "h": "kept"})
	if loss.Files != 1 || loss.Entries != 0 || loss.Bytes != 6 {
		t.Errorf("second loss %+v, want one file and 6 bytes", loss)
	}
}

// TestCrashPageCache checks that a reader sees the rolled-back content
// after PowerOn, not what the kernel cached before the cut: through a new
// open and through a handle held across the cut.
func TestCrashPageCache(t *testing.T) {
	backing, mnt, srv := startCrashable(t)
	path := filepath.Join(mnt, "f")
	durable := randomBytes(64 << 10)
	must(t, os.WriteFile(path, durable, 0o644))
	must(t, srv.Settle())
	held, err := os.Open(path)
	must(t, err)
	defer held.Close()
	writeAt(t, path, randomBytes(64<<10), 0, 0)
	writeAt(t, path, []byte("tail"), 64<<10, 0)
	if n := cachedPages(t, path); n == 0 {
		t.Fatal("nothing cached before the cut: the test would prove nothing")
	}
	mustRead(t, path)
	cut(t, srv)
	if got := mustRead(t, path); !bytes.Equal(got, durable) {
		t.Errorf("a new open after PowerOn reads %d bytes, not the durable %d", len(got), len(durable))
	}
	got := make([]byte, len(durable)+10)
	n, _ := held.ReadAt(got, 0)
	if !bytes.Equal(got[:n], durable) {
		t.Errorf("a handle held across the cut reads %d bytes, not the durable ones", n)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != int64(len(durable)) {
		t.Errorf("stat after PowerOn: %v %v, want size %d", st, err, len(durable))
	}
	checkTree(t, backing, mnt, tree{"f": string(durable)})
}

// TestCrashNotCrashable checks that a mount started without Crashable
// refuses the power commands.
func TestCrashNotCrashable(t *testing.T) {
	_, _, srv := start(t, emulate.Latency{})
	if _, err := srv.PowerCut(); err == nil || !strings.Contains(err.Error(), "Crashable") {
		t.Errorf("PowerCut: %v, want an error that names Options.Crashable", err)
	}
	if err := srv.Settle(); err == nil {
		t.Error("Settle succeeded")
	}
	if err := srv.PowerOn(); err == nil {
		t.Error("PowerOn succeeded")
	}
}

// TestCrashRefusesMountPoint checks that a crashable mount refuses a
// backing folder that is a mount point of its own: its hidden folder,
// next to it, would be on another mount.
func TestCrashRefusesMountPoint(t *testing.T) {
	requireFUSE(t)
	backing := filepath.Join(t.TempDir(), "b")
	must(t, os.Mkdir(backing, 0o755))
	must(t, unix.Mount("tmpfs", backing, "tmpfs", 0, "size=1m"))
	defer unix.Unmount(backing, unix.MNT_DETACH)
	srv, err := emulate.Start(backing, t.TempDir(), emulate.Latency{}, emulate.Options{Crashable: true})
	if err == nil {
		srv.Close()
		t.Fatal("Start succeeded")
	}
	if !strings.Contains(err.Error(), "another mount") {
		t.Errorf("err = %v, want it to say the hidden folder is on another mount", err)
	}
	checkNoHidden(t, backing)
}

// TestCrashKilledWriter cuts the power while a process writes and
// fdatasyncs through the mount, then kills it, as the runner does: it
// must exit, and the mount must serve again after PowerOn.
func TestCrashKilledWriter(t *testing.T) {
	_, mnt, srv := startWith(t, emulate.Latency{Fsync: time.Millisecond, Write: 50 * time.Microsecond}, emulate.Options{Crashable: true})
	path := filepath.Join(mnt, "log")
	writeAt(t, path, []byte("durable"), 0, 0)
	must(t, srv.Settle())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() { cmd.Process.Kill(); <-exited }()
	line := make([]byte, 8)
	if n, _ := out.Read(line); string(line[:n]) != "writing\n" {
		t.Fatalf("writer: %q", line[:n])
	}
	time.Sleep(100 * time.Millisecond)
	loss, err := srv.PowerCut()
	must(t, err)
	t.Logf("%s", loss)
	time.Sleep(50 * time.Millisecond) // the writer meets EIO for a while
	must(t, cmd.Process.Kill())
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the writer killed after the power cut did not exit")
	}
	must(t, srv.PowerOn())
	st, err := os.Stat(path)
	must(t, err)
	if st.Size() < int64(len("durable")) {
		t.Errorf("log is %d bytes after the cut: less than was durable", st.Size())
	}
	writeAt(t, path, []byte("again"), 0, 0)
	fsyncPath(t, path)
}

// BenchmarkCrashableOverhead measures what tracking costs: the same 4 KiB
// loops on the same tmpfs backing folder through a plain mount with no
// latency (FUSE passthrough where the kernel has it), a plain mount
// whose writes go through the server (a 1 ns write latency, which is no
// delay at all, turns passthrough off), a crashable one, and a crashable
// one that also logs its unsynced writes for reorder cuts (LogWrites).
//
//   - write+fdatasync: fio's fsync job, on a laid-out 4 MiB file written
//     over in turn, so each write overwrites durable data (the crashable
//     mount saves its pre-image, then drops it at the fdatasync);
//   - overwrite: the same writes without fdatasync, once every page's
//     pre-image is saved (the steady state of a file rewritten between
//     fsyncs);
//   - overwrite-first: writes that each save a page's pre-image (the
//     mount is settled after each pass, untimed).
func BenchmarkCrashableOverhead(b *testing.B) {
	requireFUSE(b)
	root, err := os.MkdirTemp("/dev/shm", "tierbench-bench-")
	if err != nil {
		testenv.Skipf(b, "no tmpfs at /dev/shm: %v", err)
	}
	defer os.RemoveAll(root)
	backing := filepath.Join(root, "backing")
	must(b, os.Mkdir(backing, 0o755))
	for _, m := range []struct {
		name string
		lat  emulate.Latency
		opt  emulate.Options
	}{
		{"plain", emulate.Latency{}, emulate.Options{}},
		{"plain-server", emulate.Latency{Write: time.Nanosecond}, emulate.Options{}},
		{"crashable", emulate.Latency{}, emulate.Options{Crashable: true}},
		{"crashable-logged", emulate.Latency{}, emulate.Options{Crashable: true, LogWrites: true}},
	} {
		b.Run(m.name, func(b *testing.B) {
			mnt := b.TempDir()
			srv, err := emulate.Start(backing, mnt, m.lat, m.opt)
			must(b, err)
			defer func() { must(b, srv.Close()) }()
			const ring = 1024 // 4 MiB of 4 KiB blocks
			path := filepath.Join(mnt, "bench")
			must(b, os.WriteFile(path, make([]byte, ring*4096), 0o644))
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			must(b, err)
			defer f.Close()
			fd := int(f.Fd())
			buf := randomBytes(4096)
			settle := func() {
				if m.opt.Crashable {
					must(b, srv.Settle())
				}
			}
			settle()
			b.Run("write+fdatasync", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, err := unix.Pwrite(fd, buf, int64(i%ring)*4096); err != nil {
						b.Fatal(err)
					}
					if err := unix.Fdatasync(fd); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("overwrite", func(b *testing.B) {
				for i := range ring { // every pre-image saved
					unix.Pwrite(fd, buf, int64(i)*4096)
				}
				for i := 0; b.Loop(); i++ {
					if _, err := unix.Pwrite(fd, buf, int64(i%ring)*4096); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("overwrite-first", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if i%ring == 0 {
						b.StopTimer()
						settle()
						b.StartTimer()
					}
					if _, err := unix.Pwrite(fd, buf, int64(i%ring)*4096); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// TestCrashUnderLoad cuts the power while goroutines write, fsync and
// replace files, and checks that exactly what they saw made durable is
// left: each file holds the version of its last fdatasync that
// succeeded, and each folder the version of its last atomic replace
// (write a temporary file, fsync it, rename it over, fsync the folder)
// that succeeded, with no temporary file left.
func TestCrashUnderLoad(t *testing.T) {
	backing, mnt, srv := startWith(t, emulate.Latency{Fsync: 200 * time.Microsecond}, emulate.Options{Crashable: true})
	const writers, size = 3, 8192
	synced := make([]int, 2*writers)
	done := make(chan struct{}, 2*writers)
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			synced[w] = overwriteUntilCut(filepath.Join(mnt, fmt.Sprint("f", w)), size)
		}()
		go func() {
			defer func() { done <- struct{}{} }()
			synced[writers+w] = replaceUntilCut(filepath.Join(mnt, fmt.Sprint("d", w)))
		}()
	}
	time.Sleep(300 * time.Millisecond)
	loss, err := srv.PowerCut()
	must(t, err)
	for range 2 * writers {
		<-done
	}
	must(t, srv.PowerOn())
	t.Logf("%s; last durable versions %v", loss, synced)
	want := tree{}
	for w := range writers {
		want[fmt.Sprint("f", w)] = string(bytes.Repeat([]byte{byte(synced[w])}, size))
		d := fmt.Sprint("d", w)
		want[d] = "/"
		if v := synced[writers+w]; v > 0 {
			want[d+"/cur"] = fmt.Sprint(v)
		}
	}
	checkTree(t, backing, mnt, want)
}

// overwriteUntilCut overwrites path with versions 1, 2, … of size bytes,
// fdatasyncing every other one, until an operation fails, and returns the
// last version whose fdatasync succeeded.
func overwriteUntilCut(path string, size int) int {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0
	}
	defer f.Close()
	if f.Sync() != nil || syncDir(filepath.Dir(path)) != nil {
		return 0
	}
	synced := 0
	for v := 1; ; v++ {
		if _, err := f.WriteAt(bytes.Repeat([]byte{byte(v)}, size), 0); err != nil {
			return synced
		}
		if v%2 == 0 {
			if unix.Fdatasync(int(f.Fd())) != nil {
				return synced
			}
			synced = v
		}
	}
}

// replaceUntilCut replaces dir/cur atomically with versions 1, 2, …
// until an operation fails, and returns the last version whose folder
// fsync succeeded.
func replaceUntilCut(dir string) int {
	if os.Mkdir(dir, 0o755) != nil || syncDir(filepath.Dir(dir)) != nil {
		return 0
	}
	synced := 0
	for v := 1; ; v++ {
		tmp := filepath.Join(dir, fmt.Sprint("tmp", v))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return synced
		}
		_, err = f.WriteString(fmt.Sprint(v))
		if err == nil {
			err = f.Sync()
		}
		f.Close()
		if err != nil || os.Rename(tmp, filepath.Join(dir, "cur")) != nil || syncDir(dir) != nil {
			return synced
		}
		synced = v
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
