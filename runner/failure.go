package runner

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
)

// tierFull turns a storage-full failure into "tier X full", naming the
// placement's tier with the least free space, instead of a stack of driver
// errors.
func tierFull(err error, p study.Placement, tiers map[string]tier.Info) error {
	if !engine.IsDiskFull(err) {
		return err
	}
	fullest, least := "", 2.0
	for _, t := range p.Components {
		var fs unix.Statfs_t
		if unix.Statfs(tiers[t].Path, &fs) != nil || fs.Blocks == 0 {
			continue
		}
		if free := float64(fs.Bavail) / float64(fs.Blocks); free < least {
			fullest, least = t, free
		}
	}
	if fullest == "" {
		return err
	}
	return fmt.Errorf("tier %s full (%.1f%% free): make it larger or load fewer records: %w", fullest, least*100, err)
}

// openError says which engine failed to open: the one place that names
// it, since engines' own Open errors do not.
func openError(name string, err error) error {
	return fmt.Errorf("open %s: %w", name, err)
}
