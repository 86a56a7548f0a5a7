package emulate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUndoFileModel runs random changes on a real file through its undo
// record (writes, durable writes, truncations, fsyncs), keeping a model of
// the durable content beside it, and checks that a rollback leaves exactly
// the model.
func TestUndoFileModel(t *testing.T) {
	dir := t.TempDir()
	spillDir, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(spillDir)
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			m := newModel(t, filepath.Join(dir, fmt.Sprint(seed)), spillDir, rand.New(rand.NewPCG(seed, 1)))
			defer m.close()
			var ops []string
			for range 40 {
				ops = append(ops, m.step())
			}
			before, err := os.ReadFile(m.path)
			if err != nil {
				t.Fatal(err)
			}
			model, unit := modelOf(seed)
			if _, _, _, err := m.u.rollback(model, seed, unit); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(m.path)
			if err != nil {
				t.Fatal(err)
			}
			if model.Kind == ModelLoseAll {
				if !bytes.Equal(got, m.durable) {
					t.Fatalf("after %v: rolled back to %d bytes, want the durable %d (first difference at %d)",
						ops, len(got), len(m.durable), firstDiff(got, m.durable))
				}
				return
			}
			checkUnits(t, ops, model, got, m.durable, before, unit)
		})
	}
}

// modelOf picks a power-loss model and unit for seed: a third of the
// cases each lose everything, keep pages, tear at 512 B, 4 KiB or
// 16 KiB.
func modelOf(seed uint64) (Model, int64) {
	switch seed % 3 {
	case 1:
		return Model{Kind: ModelSurvive, Keep: 0.5, Seed: seed}, pageSize
	case 2:
		return Model{Kind: ModelTorn, Keep: 0.5, Seed: seed}, []int64{512, 4096, 16384}[seed/3%3]
	}
	return Model{Kind: ModelLoseAll}, pageSize
}

// checkUnits checks a rollback under a model that keeps some units: the
// file has its durable size, and each unit (of unit bytes, aligned; a
// page for ModelSurvive) holds either its durable bytes or the bytes it
// held before the cut, whole.
func checkUnits(t *testing.T, ops []string, model Model, got, durable, before []byte, unit int64) {
	t.Helper()
	if model.Kind == ModelSurvive {
		unit = pageSize
	}
	if len(got) != len(durable) {
		t.Fatalf("after %v: %s left %d bytes, want the durable size %d", ops, model.Kind, len(got), len(durable))
	}
	for a := int64(0); a < int64(len(got)); a += unit {
		b := min(a+unit, int64(len(got)))
		old := durable[a:b]
		// Bytes a shrink cut off are never kept: the size is durable.
		cur := slices.Clone(old)
		if a < int64(len(before)) {
			copy(cur, before[a:min(b, int64(len(before)))])
		}
		if !bytes.Equal(got[a:b], old) && !bytes.Equal(got[a:b], cur) {
			t.Fatalf("after %v: %s left unit [%d, %d) neither wholly durable nor wholly as written", ops, model.Kind, a, b)
		}
	}
}

// model is a file, its undo record and what should be durable.
type model struct {
	t        *testing.T
	path     string
	fd       int
	spillDir int
	rng      *rand.Rand
	u        *undoFile
	live     []byte
	durable  []byte
}

func newModel(t *testing.T, path string, spillDir int, rng *rand.Rand) *model {
	m := &model{t: t, path: path, spillDir: spillDir, rng: rng}
	m.live = randomData(rng, rng.IntN(5*pageSize))
	if err := os.WriteFile(path, m.live, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	m.fd = fd
	m.fsync()
	return m
}

func (m *model) close() {
	m.u.drop()
	unix.Close(m.fd)
}

// step makes one random change and says what it was.
func (m *model) step() string {
	off := int64(m.rng.IntN(6 * pageSize))
	data := randomData(m.rng, 1+m.rng.IntN(2*pageSize))
	switch m.rng.IntN(7) {
	case 0, 1, 2:
		m.check(m.u.save(off, off+int64(len(data))))
		m.pwrite(data, off)
		return fmt.Sprintf("write %d@%d", len(data), off)
	case 3:
		_, err := m.u.writeDurable(m.fd, data, off)
		m.check(err)
		m.live = patch(m.live, data, off)
		m.durable = patch(m.durable, data, off)
		return fmt.Sprintf("durable write %d@%d", len(data), off)
	case 4, 5:
		lo, hi := truncateRange(off)
		m.check(m.u.save(lo, hi))
		m.check(unix.Ftruncate(m.fd, off))
		m.live = resize(m.live, off)
		return fmt.Sprintf("truncate %d", off)
	}
	m.fsync()
	return "fsync"
}

func (m *model) pwrite(data []byte, off int64) {
	_, err := unix.Pwrite(m.fd, data, off)
	m.check(err)
	m.live = patch(m.live, data, off)
}

// fsync makes the file durable as it is, as an fsync does to the record:
// it resets the record or, at random, starts a new one.
func (m *model) fsync() {
	m.durable = bytes.Clone(m.live)
	if m.u != nil && m.rng.IntN(2) == 0 {
		m.check(m.u.reset())
		return
	}
	if m.u != nil {
		m.u.drop()
	}
	m.u = newUndoFile(m.spillDir)
	m.check(m.u.start(func() (int, error) {
		return unix.Open(m.path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	}))
}

func (m *model) check(err error) {
	m.t.Helper()
	if err != nil {
		m.t.Fatal(err)
	}
}

func randomData(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// patch is b with data written at off, zeros filling any gap.
func patch(b, data []byte, off int64) []byte {
	b = resize(b, max(int64(len(b)), off+int64(len(data))))
	copy(b[off:], data)
	return b
}

func resize(b []byte, n int64) []byte {
	if n <= int64(len(b)) {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
