package study

import (
	"fmt"

	"github.com/tierbench/tierbench/tier/emulate"
)

// DefaultYAML is the study `tierbench run` performs without a file: where
// should Pebble's WAL live, with synced commits? On disk, on RAM that is
// durable under tierbench's power-loss layer (pmem_emulated: what a
// persistent-memory WAL would keep), or on tmpfs, which keeps nothing.
// Each placement is measured without a crash and through a power loss, so
// the answer has both halves of the trade: what the tier buys, and what a
// power cut then costs. Only synced commits are crashed, with a small data
// set (a WAL question) at 1 and 16 clients; each run lasts 3 s, its
// transient cut after the fact by MSER-5 (at most 1 s in: on this small
// data set the cut lies at 0-0.8 s, median 0) so that every second after
// it counts, and rounds repeat until every comparison is decided or known
// to ±5% (a decided client count stops while the other runs on) or its
// budget of three and a half minutes would pass, so that a newcomer's
// first answer, build included, comes within five minutes on a 2-core
// machine. More short rounds decide sooner than few long ones: a round's
// spread on a shared machine is the machine's more than the run's, and an
// interval on 3 rounds has 2 degrees of freedom, where Student's t is
// about twice what it is on 5 rounds' 4. The power cuts run in the first
// 3 rounds (min) only: a crash run's throughput enters no comparison, so
// later rounds run only the runs without a crash of the blocks still
// open, a third of a first round's time or less, and up to 8 rounds fit
// the budget where 5 did with every round whole. alpha is spent over the
// looks up to max (stats.LooksOf: 3/8 at round 3, 1/8 at each later
// one), so a max the budget never reaches would spend it on looks that
// never come; 8 is about what it reaches when one client count is
// decided at round 3 or 4. ramDir should be on tmpfs (the pmem_emulated tier is
// ramDir-pmem beside it) and diskDir on the disk that holds the results.
// It needs FUSE (the power-loss layer); DefaultFor falls back without it.
func DefaultYAML(ramDir, diskDir string) string {
	return fmt.Sprintf(`# tierbench's built-in default study
name: default-wal-placement
engine: pebble
tiers:
  pmem: {pmem_emulated: {path: %q}}  # RAM durable as far as the power-loss layer models it: a persistent-memory-like WAL
  ram:  {path: %q}  # tmpfs: RAM, NOT durable
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-pmem: {data: disk, wal: pmem}
  wal-ram:  {data: disk, wal: ram}
baseline: all-disk
durability: [sync]
crash: [none, power]
workload:
  name: ycsb-a
  records: 10000
clients: [1, 16]
warmup: {steady: 10%%, window: 600ms, max: 1s}
duration: 2s
repeat: {min: 3, max: 8, until: 5%%, budget: 3m30s}
`, ramDir+"-pmem", ramDir, diskDir)
}

// DefaultFallbackYAML is the default study where the power-loss layer
// cannot run (no FUSE, or no right to mount it): no crash and no
// pmem_emulated tier, so what tmpfs buys is set beside what unsynced
// commits buy on disk, both not durable.
func DefaultFallbackYAML(ramDir, diskDir string) string {
	return fmt.Sprintf(`# tierbench's built-in default study, without the power-loss layer
name: default-wal-placement-no-crash
engine: pebble
tiers:
  ram:  {path: %q}  # tmpfs: RAM, NOT durable
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
baseline: all-disk
durability: [sync, nosync]
workload:
  name: ycsb-a
  records: 10000
clients: [1, 16]
warmup: {steady: 10%%, window: 600ms, max: 1s}
duration: 2s
repeat: {min: 3, max: 5, until: 5%%, budget: 3m30s}
`, ramDir, diskDir)
}

// DefaultFor is the default study this machine can run: DefaultYAML where
// the power-loss layer can, else DefaultFallbackYAML and the one line that
// says what is left out and why.
func DefaultFor(ramDir, diskDir string) (src, note string) {
	if err := emulate.Supported(); err != nil {
		return DefaultFallbackYAML(ramDir, diskDir),
			fmt.Sprintf("note: no power-loss layer here (%v), so the default study measures no power loss and has no persistent-memory-like tier: the WAL on tmpfs (not durable) against unsynced commits on disk", err)
	}
	return DefaultYAML(ramDir, diskDir), ""
}
