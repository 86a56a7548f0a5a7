package ceph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/engine"
)

var _ engine.Caveater = (*DB)(nil)

// Caveats says when RocksDB spilled over from block.db to the main device
// during the run (a run's cluster starts empty, so whatever spilled did so
// in it): the run then measured the main device's tier for metadata too.
// A cluster whose counters cannot be read says so as well.
func (d *DB) Caveats(ctx context.Context) []string {
	n, err := d.SlowUsedBytes(ctx)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("could not read whether RocksDB spilled over from block.db: %v", err)}
	case n > 0:
		return []string{fmt.Sprintf("spilled over: RocksDB put %.1f MiB on the main (block) device because block.db was full; raise db_size or give db a larger tier", float64(n)/(1<<20))}
	}
	return nil
}

// SlowUsedBytes is how many bytes of RocksDB have spilled over from
// block.db to the slow (main) device, summed over the OSDs: BlueFS's
// slow_used_bytes, from each OSD's admin socket (perf dump bluefs). It is
// 0 until RocksDB (with its WAL files, when wal goes with db) no longer
// fits in block.db; then metadata reads, WAL writes and compactions hit
// the main device's tier, which changes what a run measures. Without a
// block.db, RocksDB lives on the main device by design: nothing spills,
// and it is 0.
func (d *DB) SlowUsedBytes(ctx context.Context) (int64, error) {
	c := d.cluster
	if c.devices.db == nil {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	var sum int64
	for id := range d.osds {
		name := "osd." + strconv.Itoa(id)
		sock := c.path(runDir, "ceph-"+name+".asok")
		out, err := runTool(ctx, c.bins.path("ceph"), []string{"--admin-daemon", sock}, "perf", "dump", "bluefs")
		if err != nil {
			return 0, fmt.Errorf("%s's BlueFS counters: %w", name, d.whyFailed(err))
		}
		var dump struct {
			BlueFS struct {
				SlowUsed *int64 `json:"slow_used_bytes"`
			} `json:"bluefs"`
		}
		if err := json.Unmarshal(out, &dump); err != nil {
			return 0, fmt.Errorf("%s's BlueFS counters: %w", name, err)
		}
		if dump.BlueFS.SlowUsed == nil {
			return 0, fmt.Errorf("%s's BlueFS counters have no slow_used_bytes", name)
		}
		sum += *dump.BlueFS.SlowUsed
	}
	return sum, nil
}
