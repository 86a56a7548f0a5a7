package profile

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/dustin/go-humanize"
	"gopkg.in/yaml.v3"
)

// Atomic-write units a tier or a profile may declare: a power of two
// from one 512 B sector to MaxAtomicWrite, or persistent memory's 8 B
// word (a store below a block layer).
const (
	WordAtomicWrite   = 8
	SectorAtomicWrite = 512
	MaxAtomicWrite    = 1 << 20
)

// AtomicWriteFix is how to write an atomic-write unit right.
const AtomicWriteFix = "write atomic_write: 512B, 4KiB or 16KiB (a power of two from 512B to 1MiB), or 8B for persistent memory"

// ParseAtomicWrite reads an atomic-write unit (512B, 4KiB, 16KiB, 8B)
// into bytes: the largest write the device persists whole through a
// power cut.
func ParseAtomicWrite(v string) (int64, error) {
	n, err := humanize.ParseBytes(strings.TrimSpace(v))
	ok := err == nil && (n == WordAtomicWrite || n >= SectorAtomicWrite && n <= MaxAtomicWrite && bits.OnesCount64(n) == 1)
	if !ok {
		return 0, fmt.Errorf("atomic_write %q is not a power of two from 512B to 1MiB, nor 8B; %s", v, AtomicWriteFix)
	}
	return int64(n), nil
}

// AtomicWrite is a profile's atomic-write unit in bytes, written as
// ParseAtomicWrite reads it; 0 when the profile does not say.
type AtomicWrite int64

// UnmarshalYAML reads a unit such as 4KiB.
func (a *AtomicWrite) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseAtomicWrite(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*a = AtomicWrite(v)
	return nil
}

// MarshalYAML writes the unit as 4KiB.
func (a AtomicWrite) MarshalYAML() (any, error) {
	return AtomicWriteText(int64(a)), nil
}

// AtomicWriteText writes a unit of bytes as a study does: 8B, 512B,
// 4KiB, 1MiB.
func AtomicWriteText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
