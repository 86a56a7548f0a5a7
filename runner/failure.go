package runner

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
)

// tierFull turns a storage-full failure into "tier X full", naming the
// placement's tier with the least free space, instead of a stack of driver
// errors.
func tierFull(err error, p study.Placement, tiers map[string]tier.Info) error {
	if !diskFull(err) {
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

// diskFullWords are how servers say a disk is full in text only: the
// fallback for an engine that does not yet wrap engine.ErrDiskFull.
var diskFullWords = []string{"no space left", "enospc", "disk full", "could not extend file"}

// diskFull reports whether err says a tier ran out of space: by type
// first (ENOSPC kept in the chain, or engine.ErrDiskFull that an engine
// wraps), by its words otherwise.
func diskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, engine.ErrDiskFull) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, w := range diskFullWords {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// openError says which engine failed to open: the one place that names
// it, since engines' own Open errors do not.
func openError(name string, err error) error {
	return fmt.Errorf("open %s: %w", name, err)
}
