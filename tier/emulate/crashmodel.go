package emulate

import (
	"fmt"
	"math"
)

// Power-loss models: what a cut does to the data written since each
// file's last fsync (see "Crashable mounts" in the package doc). Every
// model undoes the same directory changes and cuts every file back to its
// durable size; they differ in which unsynced overwrites of durable bytes
// they keep.
const (
	// ModelLoseAll loses every unsynced write (LazyFS's
	// lose-unfsynced-writes): the default.
	ModelLoseAll = "power"
	// ModelSurvive keeps each unsynced 4 KiB page with probability Keep,
	// independently: the kernel had written back some dirty pages, in no
	// particular order, before the cut.
	ModelSurvive = "survive"
	// ModelTorn keeps each atomic-write unit of unsynced data (aligned in
	// the file) with probability Keep, independently: a write larger than
	// the unit can be part new, part old. A unit is never itself torn.
	ModelTorn = "torn"
)

// DefaultAtomicWrite is the atomic-write unit a mount takes when none is
// given: 512 B, a sector, the smallest any block device promises, so the
// conservative one.
const DefaultAtomicWrite = 512

// Model is how a power cut treats unsynced data. The zero value is
// ModelLoseAll.
type Model struct {
	// Kind is ModelLoseAll (or ""), ModelSurvive, ModelTorn or
	// ModelReorder (crashreorder.go).
	Kind string `json:"kind,omitempty"`
	// Keep is the probability that a unit of unsynced data (a write,
	// under ModelReorder) is kept, in
	// (0, 1); ModelLoseAll ignores it.
	Keep float64 `json:"keep,omitempty"`
	// Seed draws which units are kept: one seed and one mount state give
	// the same cut.
	Seed uint64 `json:"seed,omitempty"`
}

// Check says what is wrong with m, nil when a cut can use it.
func (m Model) Check() error {
	switch m.Kind {
	case "", ModelLoseAll:
		return nil
	case ModelSurvive, ModelTorn, ModelReorder:
		if !(m.Keep > 0 && m.Keep < 1) {
			return fmt.Errorf("power-loss model %s: keep %v must be above 0 and below 1", m.Kind, m.Keep)
		}
		return nil
	}
	return fmt.Errorf("unknown power-loss model %q (want %s, %s, %s or %s)", m.Kind, ModelLoseAll, ModelSurvive, ModelTorn, ModelReorder)
}

// unit is the size of what the model keeps or loses whole: a page for
// ModelSurvive, the mount's atomic-write unit for ModelTorn, the whole
// file for ModelLoseAll (which keeps nothing).
func (m Model) unit(atomicWrite int64) int64 {
	switch m.Kind {
	case ModelTorn:
		return atomicWrite
	case ModelSurvive:
		return pageSize
	}
	return math.MaxInt64
}

// keeps reports whether unit idx of file ino (write idx since its last
// fsync, under ModelReorder) survives the cut. It hashes
// (seed, file, unit) rather than drawing in turn, so the answer does not
// depend on the order the rollback visits files and pages.
func (m Model) keeps(ino uint64, idx int64) bool {
	if m.Kind == "" || m.Kind == ModelLoseAll {
		return false
	}
	h := splitmix(m.Seed ^ splitmix(ino^0x5851F42D4C957F2D) ^ splitmix(uint64(idx)+0x14057B7EF767814F))
	return float64(h>>11)/(1<<53) < m.Keep
}

// splitmix is SplitMix64's finaliser: a well-mixed hash of x.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// span is a run of bytes of a file to put back from its spill slot.
type span struct{ off, slot, n int64 }

// lostSpans are the byte runs of u's saved pages below its durable size
// that the model loses (to put back), and how many such bytes it keeps.
// pages are the saved page indexes, sorted; size is the file's size at
// the cut. Bytes at or past it, which a shrink cut off, are always put
// back: the durable size is.
func (u *undoFile) lostSpans(pages []int64, size int64, m Model, ino uint64, atomicWrite int64) (lost []span, kept int64) {
	unit := m.unit(atomicWrite)
	for _, p := range pages {
		end := min((p+1)*pageSize, u.size)
		for a := p * pageSize; a < end; {
			b := end
			if unit < math.MaxInt64 {
				b = min(end, (a/unit+1)*unit)
			}
			if a < size && b > size {
				b = size
			}
			if a < size && m.keeps(ino, a/unit) {
				kept += b - a
			} else {
				slot := u.pages[p]*pageSize + a - p*pageSize
				if l := len(lost); l > 0 && lost[l-1].off+lost[l-1].n == a && lost[l-1].slot+lost[l-1].n == slot {
					lost[l-1].n += b - a
				} else {
					lost = append(lost, span{off: a, slot: slot, n: b - a})
				}
			}
			a = b
		}
	}
	return lost, kept
}
