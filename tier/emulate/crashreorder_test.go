package emulate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/tier/emulate"
)

// reorder is a reorder cut's model keeping each write with probability
// keep.
func reorder(keep float64, seed uint64) emulate.Model {
	return emulate.Model{Kind: emulate.ModelReorder, Keep: keep, Seed: seed}
}

// TestCrashReorderOverlapping checks the reorder model on two overlapping
// writes A then B made after the file's last fsync: across seeds, the file
// after the cut is what that fsync left, or it with A only, B only, or A
// then B, and each of the four occurs; the write fsynced before them is
// never lost.
func TestCrashReorderOverlapping(t *testing.T) {
	_, mnt, srv := startWith(t, emulate.Latency{}, emulate.Options{Crashable: true, LogWrites: true})
	path := filepath.Join(mnt, "data")
	const seeds = 64
	seen := map[string]int{}
	for seed := range uint64(seeds) {
		writeAt(t, path, randomBytes(12<<10), 0, 0)
		must(t, srv.Settle())
		synced := randomBytes(12 << 10)
		writeAt(t, path, synced, 0, 0)
		fsyncPath(t, path)
		a, b := randomBytes(6<<10), randomBytes(8<<10)
		writeAt(t, path, a, 0, 0)
		writeAt(t, path, b, 2<<10, 0)
		cutModel(t, srv, reorder(0.5, seed))
		got, err := os.ReadFile(path)
		must(t, err)
		outcomes := map[string][]byte{
			"durable":    synced,
			"A only":     patched(synced, a, 0),
			"B only":     patched(synced, b, 2<<10),
			"A then B":   patched(patched(synced, a, 0), b, 2<<10),
			"B then A??": patched(patched(synced, b, 2<<10), a, 0),
		}
		found := ""
		for name, want := range outcomes {
			if bytes.Equal(got, want) {
				found = name
			}
		}
		switch found {
		case "":
			t.Fatalf("seed %d: the file is none of the four outcomes (the fsynced write lost, or a write torn)", seed)
		case "B then A??":
			t.Fatalf("seed %d: B's bytes are under A's: the kept writes were not applied in order", seed)
		}
		seen[found]++
	}
	t.Logf("outcomes over %d seeds: %v", seeds, seen)
	for _, name := range []string{"durable", "A only", "B only", "A then B"} {
		if seen[name] == 0 {
			t.Errorf("no seed of %d left %s", seeds, name)
		}
	}
}

// TestCrashReorderKeptFraction checks that non-overlapping unsynced writes
// are each kept or lost whole, that the fraction kept over seeded cuts is
// within the 99.99% binomial interval of the asked probability, and that
// the loss counts the bytes kept.
func TestCrashReorderKeptFraction(t *testing.T) {
	_, mnt, srv := startWith(t, emulate.Latency{}, emulate.Options{Crashable: true, LogWrites: true})
	path := filepath.Join(mnt, "data")
	const writes, seeds, keep = 32, 32, 0.3
	// Odd lengths at odd offsets: no write is a page, none shares a byte.
	span := func(i int) (off, n int) { return i*1500 + 101, 999 + i }
	kept := 0
	for seed := range uint64(seeds) {
		old := randomBytes(writes * 1500)
		writeAt(t, path, old, 0, 0)
		must(t, srv.Settle())
		news := make([][]byte, writes)
		for i := range writes {
			off, n := span(i)
			news[i] = randomBytes(n)
			writeAt(t, path, news[i], int64(off), 0)
		}
		loss := cutModel(t, srv, reorder(keep, seed))
		got, err := os.ReadFile(path)
		must(t, err)
		if len(got) != len(old) {
			t.Fatalf("seed %d: %d bytes after the cut, want %d", seed, len(got), len(old))
		}
		var keptBytes int64
		for i := range writes {
			off, n := span(i)
			switch {
			case bytes.Equal(got[off:off+n], news[i]):
				kept++
				keptBytes += int64(n)
			case !bytes.Equal(got[off:off+n], old[off:off+n]):
				t.Fatalf("seed %d: write %d is neither wholly kept nor wholly lost", seed, i)
			}
		}
		if loss.Kept != keptBytes {
			t.Errorf("seed %d: the loss says %d bytes kept, the file kept %d", seed, loss.Kept, keptBytes)
		}
	}
	checkKeptShare(t, kept, writes*seeds, keep, "writes")
}

// TestCrashReorderLogCap checks the write log's cap: writes that find it
// full are lost whole at a reorder cut, and counted in the loss; an fsync
// gives its file's logged bytes back.
func TestCrashReorderLogCap(t *testing.T) {
	_, mnt, srv := startWith(t, emulate.Latency{}, emulate.Options{Crashable: true, LogWrites: true, WriteLogCap: 10000})
	path := filepath.Join(mnt, "data")
	old := randomBytes(16 << 10)
	writeAt(t, path, old, 0, 0)
	must(t, srv.Settle())
	// Four 4000-byte writes: two fit in the cap, two do not.
	news := make([][]byte, 4)
	for i := range news {
		news[i] = randomBytes(4000)
		writeAt(t, path, news[i], int64(i*4000), 0)
	}
	const always = 1 - 1e-12 // every logged write kept
	loss := cutModel(t, srv, reorder(always, 1))
	want := patched(patched(old, news[0], 0), news[1], 4000)
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Errorf("past the cap: the file is not its two logged writes over its durable bytes (%v)", err)
	}
	if loss.Unlogged != 2 || loss.UnloggedBytes != 8000 || loss.Kept != 8000 {
		t.Errorf("the loss says %+v; want 2 writes (8000 bytes) unlogged, 8000 bytes kept", loss)
	}
	t.Logf("the layer: %s", loss)

	// An fsync gives the file's logged bytes back to the cap.
	for i := range news {
		writeAt(t, path, news[i], int64(i*4000), 0)
		if i == 1 {
			fsyncPath(t, path)
		}
	}
	loss = cutModel(t, srv, reorder(always, 2))
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, patched(old, bytes.Join(news, nil), 0)) {
		t.Errorf("after an fsync: the writes that followed it were not all kept (%v)", err)
	}
	if loss.Unlogged != 0 {
		t.Errorf("after an fsync freed the log, %d writes still found it full", loss.Unlogged)
	}
}

// TestCrashReorderNeedsLog checks that a mount that logs no writes
// refuses a reorder cut, and keeps its power on.
func TestCrashReorderNeedsLog(t *testing.T) {
	_, _, srv := startCrashable(t)
	if _, err := srv.PowerCutModel(reorder(0.5, 1)); err == nil {
		t.Error("a mount that logs no writes was cut under reorder")
	}
	must(t, srv.Settle())
}

// TestCrashReorderDurableWrite checks that a durable write (O_DIRECT on a
// device without a volatile cache) is never covered, at a reorder cut, by
// an older unsynced write it overwrote: only the older write's other
// bytes can be kept.
func TestCrashReorderDurableWrite(t *testing.T) {
	_, mnt, srv := startWith(t, emulate.Latency{}, emulate.Options{Crashable: true, LogWrites: true})
	path := filepath.Join(mnt, "data")
	old := randomBytes(8 << 10)
	writeAt(t, path, old, 0, 0)
	must(t, srv.Settle())
	for _, keep := range []float64{1e-12, 1 - 1e-12} {
		older := randomBytes(8 << 10)
		writeAt(t, path, older, 0, 0)
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_DIRECT, 0)
		must(t, err)
		direct := alignedBuf(t, 4096)
		copy(direct, randomBytes(4096))
		_, err = unix.Pwrite(fd, direct, 4096)
		unix.Close(fd)
		must(t, err)
		cutModel(t, srv, reorder(keep, 3))
		want := patched(old, direct, 4096)
		if keep > 0.5 {
			want = patched(patched(old, older, 0), direct, 4096)
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("keep %g: the file is not the durable write over what the older write left (%v)", keep, err)
		}
		old = want
	}
}
