package redis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
)

var _ engine.CorruptionChecker = (*DB)(nil)

// aofManifest is where Redis 7 keeps the list of its AOF's parts, in the
// data folder (appenddirname and appendfilename at their defaults).
const aofManifest = "appendonlydir/appendonly.aof.manifest"

// CheckCorruption runs Redis's own check of the AOF the restarted server
// loaded (engine.CorruptionChecker): redis-check-aof over the manifest
// and every part it names, which fails on a command that does not parse.
// (Redis itself truncates a torn last command when it loads, with
// aof-load-truncated on, and refuses to start on damage before the end,
// which the runner counts as corrupt.) A run without an AOF (nowal) has
// nothing to check, which is an error: the check did not run.
func (d *DB) CheckCorruption(ctx context.Context) (string, error) {
	if d.target != nil {
		return "", errors.New("redis-check-aof runs only on a server tierbench started")
	}
	manifest := filepath.Join(d.dir, aofManifest)
	if _, err := os.Stat(manifest); err != nil {
		return "", fmt.Errorf("no AOF to check: %w", err)
	}
	tool, err := proc.Find("redis-tools", "redis-check-aof", "/usr/bin/redis-check-aof", "/usr/local/bin/redis-check-aof")
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, tool, manifest)
	if err := proc.OwnGroupAs(cmd, ""); err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &exit):
		return "redis-check-aof: " + strings.TrimSpace(logtail.Lines(out, 4)), nil
	}
	return "", fmt.Errorf("redis-check-aof: %w", err)
}
