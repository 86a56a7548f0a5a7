package emulate_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/mountinfo"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
)

// ownerEnv, when set, makes the test binary an owner process: it starts a
// latency server for $ownerEnv (backing:mountpoint, or
// backing:mountpoint:crashable for a crashable one), prints "ready PID"
// with the server's pid, then fsyncs through the mount until it is killed.
// The kill -9 tests need an owner they can SIGKILL. (The latency server
// itself needs nothing here: package emulate's init serves it.)
const ownerEnv = "TIERBENCH_EMULATE_TEST_OWNER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(ownerEnv); spec != "" {
		os.Exit(ownerMain(spec))
	}
	if path := os.Getenv(writerEnv); path != "" {
		os.Exit(writerMain(path))
	}
	os.Exit(m.Run())
}

// ownerMain is the owner child: start, report, fsync for ever (bounded, so
// a child its parent forgot cannot run for ever).
func ownerMain(spec string) int {
	backing, mnt, _ := strings.Cut(spec, ":")
	mnt, crashable := strings.CutSuffix(mnt, ":crashable")
	srv, err := emulate.Start(backing, mnt, emulate.Latency{Fsync: time.Millisecond}, emulate.Options{Crashable: crashable})
	if err != nil {
		fmt.Println("error:", err)
		return 2
	}
	f, err := os.OpenFile(filepath.Join(mnt, "log"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Println("error:", err)
		return 2
	}
	buf := make([]byte, 4096)
	for i := 0; i < 120_000; i++ {
		if _, err := f.WriteAt(buf, int64(i%256)*4096); err != nil {
			return 3
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return 3
		}
		if i == 0 {
			fmt.Println("ready", srv.PID())
		}
	}
	return 4
}

// requireFUSE skips tests that need a real FUSE mount where there cannot
// be one.
func requireFUSE(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "emulate tests mount FUSE directly and need root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Skipf(t, "no FUSE here: %v", err)
	}
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "FUSE not usable: %v", err)
	}
}

// start serves a fresh backing folder on a fresh mount point for the test
// and stops it when the test ends.
func start(t *testing.T, lat emulate.Latency) (backing, mnt string, srv *emulate.Server) {
	t.Helper()
	return startWith(t, lat, emulate.Options{})
}

// startWith is start with options.
func startWith(t *testing.T, lat emulate.Latency, opt emulate.Options) (backing, mnt string, srv *emulate.Server) {
	t.Helper()
	requireFUSE(t)
	backing, mnt = t.TempDir(), t.TempDir()
	srv, err := emulate.Start(backing, mnt, lat, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if opt.Crashable {
			checkNoHidden(t, backing)
		}
		if m, ok := mountAt(t, mnt); ok {
			t.Errorf("still mounted after Close: %+v", m)
		}
		if processExists(srv.PID()) {
			t.Errorf("latency server %d still runs after Close", srv.PID())
		}
	})
	return backing, mnt, srv
}

// mountAt finds the mount whose mount point is exactly dir.
func mountAt(t *testing.T, dir string) (tier.Mount, bool) {
	t.Helper()
	return mountinfo.At(dir)
}

func isMounted(dir string) bool {
	_, ok := mountinfo.At(dir)
	return ok
}

// processExists reports whether pid is a process that has not exited (a
// zombie has).
func processExists(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// eventually polls cond until it holds; the limit only stops a test that
// would otherwise hang, it is not a measurement.
func eventually(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, limit)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// alignedBuf is a page-aligned buffer of n bytes, as O_DIRECT wants.
func alignedBuf(t *testing.T, n int) []byte {
	t.Helper()
	buf, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(buf) })
	return buf
}

func TestSupported(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Skip(t, "no /dev/fuse")
	}
	if err := emulate.Supported(); err != nil {
		t.Fatalf("root with /dev/fuse: Supported() = %v", err)
	}
}

func TestStartRefuses(t *testing.T) {
	requireFUSE(t)
	backing := t.TempDir()
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(backing, "mnt")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, backing, mnt string
		lat                emulate.Latency
		want               string
	}{
		{"non-empty mount point", backing, full, emulate.Latency{}, "not empty"},
		{"mount point inside its backing folder", backing, inside, emulate.Latency{}, "inside the backing"},
		{"missing backing folder", filepath.Join(backing, "missing"), t.TempDir(), emulate.Latency{}, "backing folder"},
		{"negative latency", backing, t.TempDir(), emulate.Latency{Fsync: -time.Millisecond}, "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := emulate.Start(tc.backing, tc.mnt, tc.lat, emulate.Options{})
			if err == nil {
				srv.Close()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestFilesystem checks that the mount behaves as a local filesystem, both
// when reads and writes go through the server (read or write latency
// asked) and when they pass through the kernel to the backing file (only
// fsync latency asked).
func TestFilesystem(t *testing.T) {
	for _, tc := range []struct {
		name string
		lat  emulate.Latency
		opt  emulate.Options
	}{
		{"server reads and writes", emulate.Latency{Read: 100 * time.Microsecond, Write: 100 * time.Microsecond, Fsync: 100 * time.Microsecond}, emulate.Options{}},
		{"kernel passthrough", emulate.Latency{Fsync: 100 * time.Microsecond}, emulate.Options{}},
		{"crashable", emulate.Latency{Fsync: 100 * time.Microsecond}, emulate.Options{Crashable: true}},
		{"crashable undelayed", emulate.Latency{}, emulate.Options{Crashable: true}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkFilesystem(t, tc.lat, tc.opt) })
	}
}

func checkFilesystem(t *testing.T, lat emulate.Latency, opt emulate.Options) {
	backing, mnt, _ := startWith(t, lat, opt)
	in := func(p string) string { return filepath.Join(mnt, p) }
	under := func(p string) string { return filepath.Join(backing, p) }

	t.Run("mountinfo", func(t *testing.T) {
		m, ok := mountAt(t, mnt)
		if !ok {
			t.Fatalf("%s not in /proc/self/mountinfo", mnt)
		}
		if m.FSType != emulate.FSName || m.Source != backing {
			t.Errorf("mountinfo: type %q source %q, want %q %q", m.FSType, m.Source, emulate.FSName, backing)
		}
		var st unix.Statfs_t
		if err := unix.Statfs(mnt, &st); err != nil {
			t.Errorf("statfs: %v", err)
		}
		if ents, err := os.ReadDir(mnt); err != nil || len(ents) != 0 {
			t.Errorf("a fresh mount lists %v (%v): the calibration file must be gone", ents, err)
		}
	})

	t.Run("write read", func(t *testing.T) {
		if err := os.WriteFile(in("a.txt"), []byte("hello"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, under("a.txt")); string(got) != "hello" {
			t.Errorf("backing has %q", got)
		}
		// Larger than one FUSE request (1 MiB), not a multiple of a page.
		big := make([]byte, 3<<20+123)
		rand.Read(big)
		if err := os.WriteFile(in("big"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mustRead(t, under("big")), big) {
			t.Error("backing copy of big differs")
		}
		if !bytes.Equal(mustRead(t, in("big")), big) {
			t.Error("big read through the mount differs")
		}
		if err := os.WriteFile(under("from-backing"), []byte("b"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, in("from-backing")); string(got) != "b" {
			t.Errorf("file made in backing reads %q through the mount", got)
		}
	})

	t.Run("dirs rename unlink readdir", func(t *testing.T) {
		if err := os.MkdirAll(in("d/e"), 0o755); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(under("d/e")); err != nil || !st.IsDir() {
			t.Fatalf("backing d/e: %v", err)
		}
		if err := os.WriteFile(in("r1"), []byte("r"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(in("r1"), in("d/r2")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(under("r1")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("renamed-away r1 still in backing: %v", err)
		}
		if got := mustRead(t, under("d/r2")); string(got) != "r" {
			t.Errorf("backing d/r2 = %q", got)
		}
		// Replace an existing file by rename, as Pebble does with its
		// manifest pointer and PostgreSQL with its control files.
		if err := os.WriteFile(in("d/tmp"), []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(in("d/tmp"), in("d/r2")); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, in("d/r2")); string(got) != "new" {
			t.Errorf("d/r2 after replacing rename = %q", got)
		}
		ents, err := os.ReadDir(in("d"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"e", "r2"}) {
			t.Errorf("readdir d = %v, want [e r2]", names)
		}
		if err := os.Remove(in("d/r2")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(under("d/r2")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("unlinked d/r2 still in backing: %v", err)
		}
		if err := os.Remove(in("d/e")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("a.txt", in("link")); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, in("link")); string(got) != "hello" {
			t.Errorf("through symlink: %q", got)
		}
		if err := os.Link(in("a.txt"), in("hard")); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, under("hard")); string(got) != "hello" {
			t.Errorf("hard link in backing: %q", got)
		}
	})

	t.Run("fsync file and folder", func(t *testing.T) {
		f, err := os.OpenFile(in("s"), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write([]byte("sync me")); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Errorf("fsync: %v", err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			t.Errorf("fdatasync: %v", err)
		}
		d, err := os.Open(mnt)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if err := d.Sync(); err != nil {
			t.Errorf("fsync of the folder: %v", err)
		}
	})

	t.Run("O_EXCL", func(t *testing.T) {
		f, err := os.OpenFile(in("excl"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			t.Fatalf("O_RDWR|O_CREATE|O_EXCL: %v", err)
		}
		f.Close()
		if _, err := os.OpenFile(in("excl"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, os.ErrExist) {
			t.Errorf("second O_EXCL create: err = %v, want EEXIST", err)
		}
	})

	t.Run("O_DIRECT", func(t *testing.T) {
		fd, err := unix.Open(in("direct"), unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT, 0o644)
		if err != nil {
			t.Fatalf("open O_DIRECT: %v (expected to work: the server opens the backing file without it)", err)
		}
		defer unix.Close(fd)
		buf := alignedBuf(t, 8192)
		w, r := buf[:4096], buf[4096:]
		rand.Read(w)
		if n, err := unix.Pwrite(fd, w, 4096); err != nil || n != 4096 {
			t.Fatalf("O_DIRECT pwrite: %d, %v", n, err)
		}
		if n, err := unix.Pread(fd, r, 4096); err != nil || n != 4096 || !bytes.Equal(r, w) {
			t.Fatalf("O_DIRECT pread: %d, %v, same=%v", n, err, bytes.Equal(r, w))
		}
		got := mustRead(t, under("direct"))
		if len(got) != 8192 || !bytes.Equal(got[4096:], w) {
			t.Errorf("backing after O_DIRECT write: %d bytes", len(got))
		}
		// An O_DIRECT write must not leave stale data in the mount's
		// page cache, which is kept across opens.
		if cached := mustRead(t, in("direct")); !bytes.Equal(cached[4096:], w) {
			t.Fatal("buffered read differs before the second O_DIRECT write")
		}
		rand.Read(w)
		if _, err := unix.Pwrite(fd, w, 4096); err != nil {
			t.Fatal(err)
		}
		if again := mustRead(t, in("direct")); !bytes.Equal(again[4096:], w) {
			t.Error("buffered read after an O_DIRECT write returns stale cached data")
		}
		// Unaligned O_DIRECT I/O: FUSE passes it through to the server
		// rather than failing with EINVAL as a block device would;
		// passthrough leaves the answer to the backing filesystem.
		if _, err := unix.Pwrite(fd, w[:100], 3); err != nil {
			t.Logf("unaligned O_DIRECT pwrite: %v", err)
		} else {
			t.Log("unaligned O_DIRECT pwrite accepted")
		}
	})

	t.Run("fallocate", func(t *testing.T) {
		f, err := os.OpenFile(in("alloc"), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Fallocate(int(f.Fd()), 0, 0, 1<<20); err != nil {
			t.Fatalf("fallocate mode 0: %v", err)
		}
		if st, _ := os.Stat(under("alloc")); st == nil || st.Size() != 1<<20 {
			t.Errorf("backing size after fallocate: %v", st)
		}
		if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 1<<20, 1<<20); err != nil {
			t.Errorf("fallocate KEEP_SIZE: %v", err)
		}
		if st, _ := os.Stat(in("alloc")); st == nil || st.Size() != 1<<20 {
			t.Errorf("size after KEEP_SIZE fallocate: %v", st)
		}
		if err := f.Truncate(100); err != nil {
			t.Errorf("ftruncate: %v", err)
		}
		if st, _ := os.Stat(under("alloc")); st == nil || st.Size() != 100 {
			t.Errorf("backing size after ftruncate: %v", st)
		}
	})

	t.Run("fcntl lock", func(t *testing.T) {
		// Pebble locks its LOCK file with F_SETLK.
		f, err := os.OpenFile(in("LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
			t.Errorf("F_SETLK: %v", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Errorf("flock: %v", err)
		}
	})
}

// TestCalibration checks that the helper reports what it measured of the
// layer when it mounted.
func TestCalibration(t *testing.T) {
	cases := []struct {
		name      string
		lat       emulate.Latency
		fsyncP50  bool // a measured fsync p50 is reported
		calibrate bool // an overhead was measured at all
	}{
		{"fsync", emulate.Latency{Fsync: 2 * time.Millisecond}, true, true},
		{"long fsync", emulate.Latency{Fsync: 20 * time.Millisecond}, true, true},
		{"writes only", emulate.Latency{Write: 200 * time.Microsecond}, false, true},
		{"nothing delayed", emulate.Latency{}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, srv := start(t, tc.lat)
			c := srv.Calibration()
			t.Logf("%+v: %s", tc.lat, c)
			if c.Overhead < 0 || (c.Overhead > 0 && !tc.calibrate) {
				t.Errorf("overhead %v", c.Overhead)
			}
			if got := c.FsyncP50 > 0 && c.Samples >= 5; got != tc.fsyncP50 {
				t.Errorf("fsync p50 %v over %d samples; want one: %v", c.FsyncP50, c.Samples, tc.fsyncP50)
			}
			if tc.fsyncP50 && !strings.Contains(c.String(), "measured at mount: fsync p50") {
				t.Errorf("String() = %q", c.String())
			}
		})
	}
}

// TestCalibrationTaken: a mount given another's calibration takes its
// overhead and round trip as they are, says so, and still measures what
// it delivers; FsyncAlongside then measures both mounts in turn.
func TestCalibrationTaken(t *testing.T) {
	lat := emulate.Latency{Fsync: time.Millisecond}
	_, mnt1, first := start(t, lat)
	given := first.Calibration()
	given.Overhead += 3 * time.Microsecond // not what a mount of its own would measure
	_, mnt2, second := startWith(t, lat, emulate.Options{Calibrated: &given})
	c := second.Calibration()
	t.Logf("first %s; second %s", first.Calibration(), c)
	if !c.Shared || c.Overhead != given.Overhead || c.RoundTrip != given.RoundTrip {
		t.Errorf("calibration %+v, want %+v taken", c, given)
	}
	if c.FsyncP50 == 0 || !strings.Contains(c.String(), "measured at the first mount of this spec") {
		t.Errorf("the second mount does not measure what it delivers or say what it took: %s", c)
	}
	p50s, err := emulate.FsyncAlongside([]string{mnt1, mnt2}, lat)
	if err != nil || len(p50s) != 2 || p50s[0] <= 0 || p50s[1] <= 0 {
		t.Fatalf("side by side: %v %v", p50s, err)
	}
	t.Logf("fsync p50 side by side: %v", p50s)
	for _, m := range []string{mnt1, mnt2} {
		if ents, _ := os.ReadDir(m); len(ents) != 0 {
			t.Errorf("%s keeps %v", m, ents)
		}
	}
}

// TestDelays checks that each delayed operation takes at least what was
// asked less the layer's own measured cost (which the layer takes off
// every wait): a lower bound that holds on any machine. How close to the
// asked latency the operations come is a figure, measured by
// `tierbench run` with `probe: quick` on an emulated tier, not a test.
func TestDelays(t *testing.T) {
	const d = 5 * time.Millisecond
	cases := []struct {
		name string
		lat  emulate.Latency
		op   func(t *testing.T, backing, mnt string) time.Duration
	}{
		{"fdatasync", emulate.Latency{Fsync: d}, func(t *testing.T, _, mnt string) time.Duration {
			f := create(t, mnt, "f")
			f.Write(make([]byte, 4096))
			return timed(t, func() error { return unix.Fdatasync(int(f.Fd())) })
		}},
		{"fsync", emulate.Latency{Fsync: d}, func(t *testing.T, _, mnt string) time.Duration {
			f := create(t, mnt, "f")
			return timed(t, f.Sync)
		}},
		{"fsync of a folder", emulate.Latency{Fsync: d}, func(t *testing.T, _, mnt string) time.Duration {
			dir, err := os.Open(mnt)
			if err != nil {
				t.Fatal(err)
			}
			defer dir.Close()
			return timed(t, dir.Sync)
		}},
		{"write", emulate.Latency{Write: d}, func(t *testing.T, _, mnt string) time.Duration {
			f := create(t, mnt, "f")
			return timed(t, func() error { _, err := f.WriteAt(make([]byte, 4096), 0); return err })
		}},
		{"O_DSYNC write under direct writes", emulate.Latency{Write: d, DirectWrites: true}, func(t *testing.T, _, mnt string) time.Duration {
			f, err := os.OpenFile(filepath.Join(mnt, "f"), os.O_RDWR|os.O_CREATE|unix.O_DSYNC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			return timed(t, func() error { _, err := f.WriteAt(make([]byte, 4096), 0); return err })
		}},
		{"uncached read", emulate.Latency{Read: d}, func(t *testing.T, backing, mnt string) time.Duration {
			if err := os.WriteFile(filepath.Join(backing, "r"), make([]byte, 4096), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(mnt, "r"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			return timed(t, func() error { _, err := f.ReadAt(make([]byte, 4096), 0); return err })
		}},
		{"O_DIRECT read", emulate.Latency{Read: d}, func(t *testing.T, backing, mnt string) time.Duration {
			if err := os.WriteFile(filepath.Join(backing, "r"), make([]byte, 4096), 0o644); err != nil {
				t.Fatal(err)
			}
			mustRead(t, filepath.Join(mnt, "r")) // cached now: O_DIRECT must still pay
			fd, err := unix.Open(filepath.Join(mnt, "r"), unix.O_RDONLY|unix.O_DIRECT, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			buf := alignedBuf(t, 4096)
			return timed(t, func() error { _, err := unix.Pread(fd, buf, 0); return err })
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			backing, mnt, srv := start(t, tc.lat)
			floor := d - srv.Calibration().Overhead
			took := tc.op(t, backing, mnt)
			t.Logf("%s took %v (asked %v, the layer's own %v taken off)", tc.name, took, d, srv.Calibration().Overhead)
			if took < floor {
				t.Errorf("%s took %v, below the asked %v less the layer's own cost (%v)", tc.name, took, d, floor)
			}
		})
	}
}

func create(t *testing.T, dir, name string) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func timed(t *testing.T, op func() error) time.Duration {
	t.Helper()
	start := time.Now()
	if err := op(); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// TestBufferedWritesUndelayedUnderDirectWrites: with DirectWrites, as a
// device profile asks, a buffered write lands as in a page cache and its
// device time is paid at fsync: under a write latency of an hour the
// write, and a whole write + fdatasync cycle at fsync's 1 ms, return (a
// regression would hang the test until its timeout).
func TestBufferedWritesUndelayedUnderDirectWrites(t *testing.T) {
	_, mnt, _ := start(t, emulate.Latency{Write: time.Hour, Fsync: time.Millisecond, DirectWrites: true})
	f := create(t, mnt, "f")
	if _, err := f.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		t.Fatal(err)
	}
}

// TestPageCacheKept checks that data read once through the mount stays in
// its page cache across opens, as on a local filesystem, so re-reads do not
// reach the server (and do not pay the read latency): mincore(2) on a
// mapping of the file tells which pages are cached without reading them.
func TestPageCacheKept(t *testing.T) {
	backing, mnt, _ := start(t, emulate.Latency{Read: time.Millisecond})
	data := make([]byte, 64<<10)
	rand.Read(data)
	// Written to the backing folder, so the mount has nothing cached.
	if err := os.WriteFile(filepath.Join(backing, "r"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(mnt, "r")
	if n := cachedPages(t, path); n != 0 {
		t.Fatalf("%d pages cached before any read", n)
	}
	if got := mustRead(t, path); !bytes.Equal(got, data) {
		t.Fatal("content differs")
	}
	if n, want := cachedPages(t, path), len(data)/os.Getpagesize(); n != want {
		t.Errorf("after a read and a new open, %d of %d pages are cached: the mount's page cache is not kept across opens", n, want)
	}
}

// cachedPages opens path, maps it and counts its pages in the page cache.
func cachedPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestConcurrentDelays checks that delays on different files run at the
// same time: while fdatasyncs on n files are under way, n of the server's
// threads wait in clock_nanosleep(2) at once (the Go runtime's own sleeps
// use nanosleep, so they do not count).
func TestConcurrentDelays(t *testing.T) {
	const n = 4
	_, mnt, srv := start(t, emulate.Latency{Fsync: 2 * time.Second})
	var files []*os.File
	for i := range n {
		files = append(files, create(t, mnt, fmt.Sprint("c", i)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, f := range files {
		wg.Go(func() {
			if err := unix.Fdatasync(int(f.Fd())); err != nil {
				errs <- err
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	most := 0
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-time.After(5 * time.Millisecond):
			most = max(most, sleepingThreads(t, srv.PID()))
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d fdatasyncs on different files: at most %d of the server's threads waited at once", n, most)
	if most < n {
		t.Errorf("at most %d of %d delays were under way at once: the delays are serialised", most, n)
	}
}

// sleepingThreads counts pid's threads blocked in clock_nanosleep.
func sleepingThreads(t *testing.T, pid int) int {
	t.Helper()
	paths, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		if strings.HasPrefix(string(b), strconv.Itoa(unix.SYS_CLOCK_NANOSLEEP)+" ") {
			n++
		}
	}
	return n
}

// fioSyncP50 runs fio's sequential 4 KiB write + fdatasync job in dir for
// two seconds and returns the fdatasync p50, as tierbench's probe reads it.
func fioSyncP50(t *testing.T, dir string) time.Duration {
	t.Helper()
	cmd := exec.Command("fio", "--name=s", "--directory="+dir, "--rw=write", "--bs=4k", "--size=4m",
		"--fdatasync=1", "--runtime=2s", "--time_based", "--output-format=json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio in %s: %v: %s", dir, err, stderr.String())
	}
	var res struct {
		Jobs []struct {
			Sync struct {
				LatNS struct {
					N          int64              `json:"N"`
					Percentile map[string]float64 `json:"percentile"`
				} `json:"lat_ns"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	// fio may print notes before its JSON.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("fio output: %v", err)
	}
	if len(res.Jobs) == 0 {
		t.Fatal("fio output has no jobs")
	}
	p50, ok := res.Jobs[0].Sync.LatNS.Percentile["50.000000"]
	if !ok {
		t.Fatalf("fio output has no sync p50: %+v", res.Jobs[0].Sync.LatNS)
	}
	t.Logf("fio in %s: %d fdatasyncs, p50 %v", dir, res.Jobs[0].Sync.LatNS.N, time.Duration(p50))
	return time.Duration(p50)
}

// TestFio runs fio's fsync job through the mount, as the probe does: it
// must work there and see at least the asked latency less the layer's cost.
func TestFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		testenv.Skip(t, "fio is not installed")
	}
	const fsync = 2 * time.Millisecond
	_, mnt, srv := start(t, emulate.Latency{Fsync: fsync})
	got := fioSyncP50(t, mnt)
	floor := fsync - srv.Calibration().Overhead
	t.Logf("fio fdatasync p50 through the mount %v for %v asked (%+.1f%%; %s)", got, fsync, 100*(float64(got)/float64(fsync)-1), srv.Calibration())
	if got < floor {
		t.Errorf("fio fdatasync p50 %v is below the asked %v less the layer's own cost (%v)", got, fsync, floor)
	}
}

// TestQuiet checks that the latency server prints nothing, however much
// goes through it: go-fuse logged a line for every 1 MiB read it failed to
// splice (thousands per study), and must not reach the terminal.
func TestQuiet(t *testing.T) {
	requireFUSE(t)
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	backing, mnt := t.TempDir(), t.TempDir()
	// Read and write latency keep reads and writes on the server (no
	// passthrough), where go-fuse splices its read replies.
	srv, err := emulate.Start(backing, mnt, emulate.Latency{Read: time.Microsecond, Write: time.Microsecond}, emulate.Options{Stderr: stderr})
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 8<<20)
	rand.Read(big)
	if err := os.WriteFile(filepath.Join(mnt, "big"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(filepath.Join(mnt, "big"), unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := alignedBuf(t, 1<<20)
	for off := int64(0); off < int64(len(big)); off += int64(len(buf)) {
		if _, err := unix.Pread(fd, buf, off); err != nil {
			t.Fatal(err)
		}
	}
	unix.Close(fd)
	if !bytes.Equal(mustRead(t, filepath.Join(mnt, "big")), big) {
		t.Error("big read back differs")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if out := mustRead(t, stderr.Name()); len(out) > 0 {
		t.Errorf("the latency server printed %d bytes:\n%.2000s", len(out), out)
	}
	if logged.Len() > 0 {
		t.Errorf("this process logged:\n%.2000s", logged.String())
	}
}

// TestOtherUser checks that a database running as its own user (as
// PostgreSQL must) can use the mount, with file modes enforced.
func TestOtherUser(t *testing.T) {
	requireFUSE(t)
	const nobody = 65534
	root := t.TempDir()
	backing, mnt := filepath.Join(root, "b"), filepath.Join(root, "m")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// t.TempDir makes 0700 folders: open the path to uid nobody.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := emulate.Start(backing, mnt, emulate.Latency{}, emulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := os.Mkdir(filepath.Join(mnt, "pub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(mnt, "pub"), nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mnt, "priv"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(script string) (string, error) {
		cmd := exec.Command("/bin/sh", "-c", script, "sh", mnt)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(`echo hi > "$1/pub/f" && cat "$1/pub/f"`); err != nil || out != "hi\n" {
		t.Fatalf("uid %d writing its own folder: %v: %s", nobody, err, out)
	}
	st, err := os.Stat(filepath.Join(backing, "pub", "f"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid != nobody {
		t.Errorf("file created by uid %d is owned by %d in backing", nobody, uid)
	}
	if out, err := run(`echo hi > "$1/priv/f"`); err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("uid %d writing root's 0755 folder: err %v, output %q; want Permission denied", nobody, err, out)
	}
}

// TestCloseBusy checks that a busy mount's error names the process and
// the file holding it, that Close removes the mount (lazily), that the
// file keeps working, and that the server exits once that file is closed.
func TestCloseBusy(t *testing.T) {
	requireFUSE(t)
	backing, mnt := t.TempDir(), t.TempDir()
	srv, err := emulate.Start(backing, mnt, emulate.Latency{Fsync: time.Millisecond}, emulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	held, err := os.Create(filepath.Join(mnt, "held"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("pid %d (%s): %s", os.Getpid(), selfComm(t), held.Name())
	if err := srv.BusyError(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a busy mount's error: %v; want one naming %q", err, want)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	eventually(t, "busy mount detached after Close", 30*time.Second, func() bool { return !isMounted(mnt) })
	if _, err := held.Write([]byte("still served")); err != nil {
		t.Errorf("write to a file open in the detached mount: %v", err)
	}
	if err := held.Sync(); err != nil {
		t.Errorf("fsync of a file open in the detached mount: %v", err)
	}
	held.Close()
	if err := <-done; err != nil {
		// Close stops waiting after a while; on a busy machine the
		// server may outlive that, so only its exit below is required.
		t.Logf("Close of a busy mount: %v", err)
	}
	eventually(t, "server exits once the last file is closed", 30*time.Second, func() bool { return !processExists(srv.PID()) })
	if got := mustRead(t, filepath.Join(backing, "held")); string(got) != "still served" {
		t.Errorf("backing held = %q", got)
	}
}

// startOwner starts an owner child (see ownerMain) serving backing on mnt
// and returns it and its latency server's pid once it fsyncs.
func startOwner(t *testing.T, backing, mnt string, crashable bool) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	spec := backing + ":" + mnt
	if crashable {
		spec += ":crashable"
	}
	cmd.Env = append(os.Environ(), ownerEnv+"="+spec)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-reaped
		if isMounted(mnt) {
			tier.Undo(tier.Resource{Kind: tier.KindMount, Path: mnt})
		}
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	go func() { cmd.Wait(); close(reaped) }()
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "ready "))
	if err != nil {
		t.Fatalf("owner child: %q", line)
	}
	return cmd, pid
}

// TestOwnerKilled is the kill -9 case: the owner dies while it fsyncs
// through the mount. It must exit (not hang in D state on its own mount,
// as it did when it served the mount itself), and its latency server must
// then unmount and exit by itself, leaving nothing mounted.
func TestOwnerKilled(t *testing.T) {
	requireFUSE(t)
	for _, crashable := range []bool{false, true} {
		t.Run(fmt.Sprintf("crashable=%v", crashable), func(t *testing.T) {
			backing, mnt := t.TempDir(), t.TempDir()
			owner, server := startOwner(t, backing, mnt, crashable)
			if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			eventually(t, "killed owner exits", 30*time.Second, func() bool { return !processExists(owner.Process.Pid) })
			eventually(t, "its latency server unmounts", 30*time.Second, func() bool { return !isMounted(mnt) })
			eventually(t, "its latency server exits", 30*time.Second, func() bool { return !processExists(server) })
			if st, err := os.Stat(filepath.Join(backing, "log")); err != nil || st.Size() == 0 {
				t.Errorf("what the owner wrote is not in the backing folder: %v", err)
			}
			if crashable {
				checkNoHidden(t, backing)
			}
		})
	}
}

// TestUndoFreesStuckMount stops the latency server while a process waits
// on it, as a server that no longer answers: tier.Undo must end the FUSE
// connection (fusectl's abort), so the waiting call fails instead of
// hanging, and remove the mount.
func TestUndoFreesStuckMount(t *testing.T) {
	backing, mnt, srv := start(t, emulate.Latency{Fsync: time.Millisecond})
	f := create(t, mnt, "f")
	if err := syscall.Kill(srv.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(srv.PID(), syscall.SIGCONT)
	// SIGSTOP reaches the server's threads one by one; a thread still
	// running would answer the fdatasync below.
	eventually(t, "every latency server thread stops", 30*time.Second, func() bool { return threadsStopped(srv.PID()) })
	synced := make(chan error, 1)
	go func() { synced <- unix.Fdatasync(int(f.Fd())) }()
	select {
	case err := <-synced:
		t.Fatalf("fdatasync returned (%v) while the server was stopped", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := tier.Undo(tier.Resource{Kind: tier.KindMount, Path: mnt}); err != nil {
		t.Fatalf("tier.Undo of a mount whose server is stopped: %v", err)
	}
	select {
	case err := <-synced:
		if err == nil {
			t.Error("fdatasync on an aborted connection succeeded")
		}
		t.Logf("fdatasync waiting on the stopped server: %v after the abort", err)
	case <-time.After(30 * time.Second):
		t.Fatal("fdatasync still waits after tier.Undo aborted the connection")
	}
	if isMounted(mnt) {
		t.Errorf("%s still mounted after tier.Undo", mnt)
	}
	_ = backing
}

// TestKill9Undo kills the latency server while a file is held open in its
// mount, so the kernel keeps a dead mount that a plain unmount refuses as
// busy, and checks that tier.Undo still removes it.
func TestKill9Undo(t *testing.T) {
	requireFUSE(t)
	backing, mnt := t.TempDir(), t.TempDir()
	srv, err := emulate.Start(backing, mnt, emulate.Latency{Fsync: time.Millisecond}, emulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	held, err := os.Create(filepath.Join(mnt, "held"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Kill(srv.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "killed server exits", 30*time.Second, func() bool { return !processExists(srv.PID()) })
	m, ok := mountAt(t, mnt)
	if !ok || m.FSType != emulate.FSName {
		t.Fatalf("no dead mount left by the killed server: %+v %v", m, ok)
	}
	if _, err := os.Stat(mnt); !errors.Is(err, syscall.ENOTCONN) && !errors.Is(err, syscall.ECONNABORTED) {
		t.Errorf("stat of the dead mount: %v, want ENOTCONN or ECONNABORTED", err)
	}
	if err := tier.Undo(tier.Resource{Kind: tier.KindMount, Path: mnt}); err != nil {
		t.Fatalf("tier.Undo of the dead mount: %v", err)
	}
	held.Close()
	if isMounted(mnt) {
		t.Fatalf("%s is still mounted", mnt)
	}
	if err := os.WriteFile(filepath.Join(mnt, "after"), []byte("ok"), 0o644); err != nil {
		t.Fatalf("%s not usable after unmount: %v", mnt, err)
	}
}

// threadsStopped reports whether every thread of process pid is stopped
// (state T in /proc/PID/task/TID/stat).
func threadsStopped(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	for _, stat := range tasks {
		b, err := os.ReadFile(stat)
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if err != nil || i < 0 || len(s) < i+3 || s[i+2] != 'T' {
			return false
		}
	}
	return len(tasks) > 0
}

// TestShortDelaysAreMet: a delay shorter than the layer's cost around a
// sleep (an SSD's 60 µs read, on a VM whose wake-ups take about that
// long) is still waited: spun for what is left after the layer's round
// trip, rather than cut to the round trip. A lower bound only: load makes
// an operation slower, never faster.
func TestShortDelaysAreMet(t *testing.T) {
	const d = 60 * time.Microsecond
	backing, mnt, srv := start(t, emulate.Latency{Read: d})
	if err := os.WriteFile(filepath.Join(backing, "r"), make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(filepath.Join(mnt, "r"), unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := alignedBuf(t, 4096)
	cal := srv.Calibration()
	if cal.RoundTrip <= 0 {
		t.Fatalf("calibration %+v measured no round trip", cal)
	}
	for range 20 {
		took := timed(t, func() error { _, err := unix.Pread(fd, buf, 0); return err })
		if took < d-cal.RoundTrip {
			t.Fatalf("an O_DIRECT read took %v, below the asked %v less the layer's round trip %v (its cost around a sleep: %v)", took, d, cal.RoundTrip, cal.Overhead)
		}
	}
}

// selfComm is this process's command name, as /proc shows it.
func selfComm(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
