package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/testenv"
)

// userPathStudy is the smallest study with a comparison: what report and
// export write.
const userPathStudy = `name: userpath
engine: pebble
tiers:
  ram:  {path: %q}
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
baseline: all-disk
durability: [sync]
workload: {name: ycsb-a, records: 500}
clients: [1]
warmup: 100ms
duration: 200ms
repeat: 2
`

// TestWritersKeepDevicesPipesAndLinks gives every writer of a path the user
// names (report -o, export -o in CSV and JSON, export --hdr, init -o) a
// character device, a named pipe and symbolic links of the test's own.
// tierbench runs as root: renaming over /dev/null replaced the machine's
// null device once. The device and the links stay what they were; a
// device is written through, a link's file is written, a pipe nobody
// reads is refused with exit 2. Read-only commands leave the store's
// bytes as they were.
func TestWritersKeepDevicesPipesAndLinks(t *testing.T) {
	work := t.TempDir()
	resultsDir := filepath.Join(work, "results")
	st := writeStudy(t, work, fmt.Sprintf(userPathStudy, ramDir(t), filepath.Join(work, "disk")))
	if r := tierbench(t, "run", st, "--results", resultsDir); r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	before := storeFiles(t, resultsDir)

	writers := []struct {
		name string
		args func(out string) []string
	}{
		{"report html", func(out string) []string {
			return []string{"report", "--results", resultsDir, "-o", out, "--format", "html"}
		}},
		{"report markdown", func(out string) []string {
			return []string{"report", "--results", resultsDir, "-o", out, "--format", "markdown"}
		}},
		{"export csv", func(out string) []string {
			return []string{"export", "--results", resultsDir, "--format", "csv", "--what", "runs", "-o", out}
		}},
		{"export json", func(out string) []string {
			return []string{"export", "--results", resultsDir, "--format", "json", "-o", out}
		}},
		{"init", func(out string) []string { return []string{"init", "-o", out} }},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			dev := filepath.Join(dir, "null")
			if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
				testenv.Skipf(t, "cannot make a device node (%v): needs root", err)
			}
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "kept.out")
			if err := os.WriteFile(file, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			toFile := filepath.Join(dir, "to-file")
			toDev := filepath.Join(dir, "to-dev")
			must(t, os.Symlink("kept.out", toFile))
			must(t, os.Symlink("null", toDev))

			for _, out := range []string{dev, toDev, fifo, toFile} {
				r := tierbench(t, w.args(out)...)
				switch {
				case w.name == "init": // refuses anything that exists
					if r.code != 2 {
						t.Errorf("%s: exit %d, want 2 (init writes only a new file)\n%s", out, r.code, r.stderr)
					}
				case out == fifo || (w.name == "report markdown" && out != toFile):
					// Nothing reads the pipe; a Markdown report's charts
					// need a folder beside a real file.
					if r.code != 2 {
						t.Errorf("%s: exit %d, want 2\n%s", out, r.code, r.stderr)
					}
				case r.code != 0:
					t.Errorf("%s: exit %d, want 0 (written through)\n%s", out, r.code, r.stderr)
				}
			}
			kind(t, dev, os.ModeCharDevice)
			kind(t, fifo, os.ModeNamedPipe)
			kind(t, toFile, os.ModeSymlink)
			kind(t, toDev, os.ModeSymlink)
			if b, _ := os.ReadFile(file); w.name != "init" && string(b) == "old" {
				t.Errorf("the file the link names was not written")
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".tierbench-*")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}

	// --hdr writes into a folder: a log's name that is a link is written
	// through, a device there is written through, never replaced.
	t.Run("export hdr", func(t *testing.T) {
		dir := t.TempDir()
		r := tierbench(t, "export", "--results", resultsDir, "--hdr", dir)
		if r.code != 0 {
			t.Fatalf("export --hdr: exit %d\n%s", r.code, r.stderr)
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.hlog"))
		if len(logs) < 2 {
			t.Fatalf("export --hdr wrote %d logs", len(logs))
		}
		must(t, os.Remove(logs[0]))
		must(t, unix.Mknod(logs[0], unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
		target := filepath.Join(t.TempDir(), "elsewhere.hlog")
		must(t, os.WriteFile(target, nil, 0o644))
		must(t, os.Remove(logs[1]))
		must(t, os.Symlink(target, logs[1]))
		if r := tierbench(t, "export", "--results", resultsDir, "--hdr", dir); r.code != 0 {
			t.Fatalf("export --hdr again: exit %d\n%s", r.code, r.stderr)
		}
		kind(t, logs[0], os.ModeCharDevice)
		kind(t, logs[1], os.ModeSymlink)
		if b, _ := os.ReadFile(target); len(b) == 0 {
			t.Error("the log the link names was not written")
		}
	})

	// The read-only commands left the store's bytes as they were.
	for _, args := range [][]string{
		{"show", "--results", resultsDir},
		{"show", "--results", resultsDir, "--format", "json"},
		{"list", "--results", resultsDir},
		{"compare", "latest", "--placements", "all-disk,wal-ram", "--results", resultsDir},
	} {
		if r := tierbench(t, args...); r.code != 0 && r.code != 1 {
			t.Errorf("%s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if after := storeFiles(t, resultsDir); after != before {
		t.Errorf("read-only commands changed the results store:\nbefore %s\nafter  %s", before, after)
	}
}

// storeFiles names the results folder's store files with a digest of
// each, the database's own bytes first.
func storeFiles(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), results.DBFile) || strings.HasSuffix(e.Name(), "-shm") {
			continue // the shared-memory index is SQLite's, not the store's bytes
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		io.Copy(h, f)
		f.Close()
		out = append(out, fmt.Sprintf("%s:%x", e.Name(), h.Sum(nil)[:6]))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func kind(t *testing.T, p string, want os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&want == 0 {
		t.Errorf("%s is no longer a %v: %v, %v", p, want, fi.Mode(), err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadersRefuseDevicesAndNeverWaitOnPipes gives validate and profiles
// an endless device and a named pipe nobody writes, as a study file and a
// profile file: each exits 2 at once (a device once ran out of memory, a
// pipe hung until killed), and nothing is written.
func TestReadersRefuseDevicesAndNeverWaitOnPipes(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero")
	if err := unix.Mknod(zero, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
		testenv.Skipf(t, "cannot make a device node (%v): needs root", err)
	}
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	withProfile := func(ref string) string {
		p := filepath.Join(dir, "with-"+filepath.Base(ref)+".yaml")
		must(t, os.WriteFile(p, []byte(fmt.Sprintf(`name: p
engine: pebble
tiers:
  ram:  {pmem_emulated: {size: 64MiB}, profile: %s}
  disk: {path: %s}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
baseline: all-disk
durability: [sync]
workload: {name: ycsb-a, records: 100}
clients: [1]
duration: 1s
`, ref, filepath.Join(dir, "disk"))), 0o644))
		return p
	}
	for _, args := range [][]string{
		{"validate", zero},
		{"validate", fifo},
		{"validate", withProfile(zero)},
		{"validate", withProfile(fifo)},
		{"profiles", zero},
		{"profiles", fifo},
	} {
		r := tierbench(t, args...)
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "disk")); err == nil {
		t.Error("validate made the study's disk folder")
	}
}
