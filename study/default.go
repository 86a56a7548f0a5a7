package study

import "fmt"

// DefaultYAML is the study `tierbench run` performs without a file: the WAL
// placement question on Pebble, with rounds repeated until every ratio is
// known to ±5% or its budget of two and a half minutes would pass, so that a
// newcomer's first answer, build included, comes within five minutes on a
// 2-core machine. ramDir should be on tmpfs and diskDir on the disk that
// holds the results.
func DefaultYAML(ramDir, diskDir string) string {
	return fmt.Sprintf(`# tierbench's built-in default study
name: default-wal-placement
engine: pebble
tiers:
  ram:  {path: %q}
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
  all-ram:  {data: ram,  wal: ram}
baseline: all-disk
durability: [sync, nosync]
workload:
  name: ycsb-a
  records: 50000
clients: [1, 16, 64]
warmup: 500ms
duration: 1500ms
repeat: {min: 3, max: 20, until: 5%%, budget: 2m30s}
`, ramDir, diskDir)
}
