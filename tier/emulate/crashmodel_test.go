package emulate_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/tier/emulate"
)

// cutModel cuts the power under model m and puts it back on.
func cutModel(t *testing.T, srv *emulate.Server, m emulate.Model) emulate.Loss {
	t.Helper()
	loss, err := srv.PowerCutModel(m)
	if err != nil {
		t.Fatalf("PowerCutModel(%+v): %v", m, err)
	}
	if err := srv.PowerOn(); err != nil {
		t.Fatalf("PowerOn: %v", err)
	}
	return loss
}

// units splits b into n-byte units and says of each whether it is wholly
// old's, wholly new's, or neither (torn inside the unit).
func units(b, old, new []byte, n int) (olds, news, torn int) {
	for a := 0; a < len(b); a += n {
		switch {
		case bytes.Equal(b[a:a+n], old[a:a+n]):
			olds++
		case bytes.Equal(b[a:a+n], new[a:a+n]):
			news++
		default:
			torn++
		}
	}
	return olds, news, torn
}

// TestCrashTornWrites checks the torn model on a 4 KiB-atomic mount: an
// 8 KiB write cut before its fsync leaves each 4 KiB unit wholly new or
// wholly old, some files with a mix of the two across seeds, and a file
// written and fsynced the same way whole and new under every seed.
func TestCrashTornWrites(t *testing.T) {
	_, mnt, srv := startWith(t, emulate.Latency{}, emulate.Options{Crashable: true, AtomicWrite: 4096})
	const files, seeds = 8, 4
	mixed := 0
	for seed := range uint64(seeds) {
		olds, news := make([][]byte, files), make([][]byte, files)
		for i := range files {
			olds[i], news[i] = randomBytes(8192), randomBytes(8192)
			path := filepath.Join(mnt, fmt.Sprint(i))
			writeAt(t, path, olds[i], 0, 0)
			fsyncPath(t, path)
		}
		synced := randomBytes(8192)
		writeAt(t, filepath.Join(mnt, "synced"), synced, 0, 0)
		fsyncPath(t, filepath.Join(mnt, "synced"))
		must(t, srv.Settle())
		for i := range files {
			writeAt(t, filepath.Join(mnt, fmt.Sprint(i)), news[i], 0, 0)
		}
		cutModel(t, srv, emulate.Model{Kind: emulate.ModelTorn, Keep: 0.5, Seed: seed})
		for i := range files {
			got, err := os.ReadFile(filepath.Join(mnt, fmt.Sprint(i)))
			must(t, err)
			if len(got) != 8192 {
				t.Fatalf("seed %d, file %d: %d bytes after the cut, want 8192", seed, i, len(got))
			}
			o, n, torn := units(got, olds[i], news[i], 4096)
			if torn > 0 {
				t.Errorf("seed %d, file %d: a 4 KiB unit is torn inside", seed, i)
			}
			if o > 0 && n > 0 {
				mixed++
			}
		}
		if got, err := os.ReadFile(filepath.Join(mnt, "synced")); err != nil || !bytes.Equal(got, synced) {
			t.Errorf("seed %d: the synced file lost data (%v)", seed, err)
		}
	}
	t.Logf("%d of %d files torn across 4 KiB units", mixed, files*seeds)
	if mixed == 0 {
		t.Errorf("no file of %d was left part old, part new", files*seeds)
	}
}

// TestCrashSurvivingPages checks the surviving-pages model: over seeded
// cuts, the fraction of unsynced pages kept is within the 99.99% binomial
// interval of the asked probability, each page is wholly old or new, and
// a synced page is never lost.
func TestCrashSurvivingPages(t *testing.T) {
	_, mnt, srv := startWith(t, emulate.Latency{}, emulate.Options{Crashable: true})
	const pages, seeds, keep = 256, 4, 0.3
	path, syncedPath := filepath.Join(mnt, "data"), filepath.Join(mnt, "synced")
	kept := 0
	for seed := range uint64(seeds) {
		old, new := randomBytes(pages*4096), randomBytes(pages*4096)
		writeAt(t, path, old, 0, 0)
		fsyncPath(t, path)
		writeAt(t, syncedPath, randomBytes(16*4096), 0, 0)
		must(t, srv.Settle())
		writeAt(t, path, new, 0, 0)
		synced := randomBytes(16 * 4096)
		writeAt(t, syncedPath, synced, 0, 0)
		fdatasyncPath(t, syncedPath)
		loss := cutModel(t, srv, emulate.Model{Kind: emulate.ModelSurvive, Keep: keep, Seed: seed})
		got, err := os.ReadFile(path)
		must(t, err)
		o, n, torn := units(got, old, new, 4096)
		if torn > 0 || o+n != pages {
			t.Fatalf("seed %d: %d pages torn inside, %d old, %d new", seed, torn, o, n)
		}
		if loss.Kept != int64(n)*4096 {
			t.Errorf("seed %d: the loss says %d bytes kept, the file kept %d", seed, loss.Kept, n*4096)
		}
		kept += n
		if got, err := os.ReadFile(syncedPath); err != nil || !bytes.Equal(got, synced) {
			t.Errorf("seed %d: the fdatasynced file lost data (%v)", seed, err)
		}
	}
	checkKeptShare(t, kept, pages*seeds, keep, "pages")
}

// checkKeptShare checks that kept of total units (pages, writes), each kept
// with probability keep, lie within keep's 99.99% binomial interval
// (normal approximation: ±3.89 standard errors).
func checkKeptShare(t *testing.T, kept, total int, keep float64, units string) {
	t.Helper()
	n := float64(total)
	half := 3.89 * math.Sqrt(keep*(1-keep)/n)
	frac := float64(kept) / n
	t.Logf("kept %d of %d %s (%.3f; asked %.2f ± %.3f)", kept, total, units, frac, keep, half)
	if frac < keep-half || frac > keep+half {
		t.Errorf("kept %.3f of the unsynced %s, outside %.2f's 99.99%% interval [%.3f, %.3f]", frac, units, keep, keep-half, keep+half)
	}
}

// TestCrashModelRefused checks that a cut under a model it cannot use
// fails and leaves the power on.
func TestCrashModelRefused(t *testing.T) {
	_, _, srv := startCrashable(t)
	for _, m := range []emulate.Model{{Kind: "halfway"}, {Kind: emulate.ModelTorn, Keep: 1}, {Kind: emulate.ModelSurvive}} {
		if _, err := srv.PowerCutModel(m); err == nil {
			t.Errorf("PowerCutModel(%+v) succeeded", m)
		}
	}
	must(t, srv.Settle())
}

// TestCrashVolatileCache checks a mount whose device has a volatile write
// cache: an O_DIRECT overwrite is lost unless its file is fsynced after
// it, and an O_DSYNC one is durable when it returns.
func TestCrashVolatileCache(t *testing.T) {
	_, mnt, srv := startWith(t, emulate.Latency{}, emulate.Options{Crashable: true, VolatileCache: true})
	old := randomBytes(3 * 4096)
	paths := map[string]string{"direct": filepath.Join(mnt, "direct"), "synced": filepath.Join(mnt, "synced"), "dsync": filepath.Join(mnt, "dsync")}
	for _, p := range paths {
		writeAt(t, p, old, 0, 0)
	}
	must(t, srv.Settle())
	write := func(path string, flags int) []byte {
		fd, err := unix.Open(path, unix.O_RDWR|flags, 0)
		must(t, err)
		defer unix.Close(fd)
		buf := alignedBuf(t, 4096)
		copy(buf, randomBytes(4096))
		_, err = unix.Pwrite(fd, buf, 4096)
		must(t, err)
		return bytes.Clone(buf)
	}
	write(paths["direct"], unix.O_DIRECT)
	syncedNew := write(paths["synced"], unix.O_DIRECT)
	fsyncPath(t, paths["synced"])
	dsyncNew := write(paths["dsync"], unix.O_DSYNC)
	cut(t, srv)
	for name, want := range map[string][]byte{"direct": old, "synced": patched(old, syncedNew, 4096), "dsync": patched(old, dsyncNew, 4096)} {
		if got, err := os.ReadFile(paths[name]); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: after the cut the file is not as it should be (%v)", name, err)
		}
	}
}

// patched is b with p written at off.
func patched(b, p []byte, off int) []byte {
	out := bytes.Clone(b)
	copy(out[off:], p)
	return out
}
