package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
)

var _ engine.CorruptionChecker = (*DB)(nil)

// CheckCorruption runs PostgreSQL's own check of the restarted cluster
// (engine.CorruptionChecker): pg_amcheck over every relation of every
// database, which checks each table's heap and each B-tree index and, by
// reading every page through the buffer manager, has the cluster's data
// checksums (initdb --data-checksums) verified on each. It installs the
// amcheck extension where it is missing. pg_amcheck's exit status 2 means
// it found corruption, whose report is the damage returned.
func (d *DB) CheckCorruption(ctx context.Context) (string, error) {
	if d.target != nil {
		return "", errors.New("pg_amcheck runs only on a server tierbench started")
	}
	if _, err := os.Stat(d.amcheck); err != nil {
		return "", fmt.Errorf("pg_amcheck is not installed beside postgres (%s; it comes with the postgresql-<version> package): %w", d.amcheck, err)
	}
	cmd := exec.CommandContext(ctx, d.amcheck, "--all", "--install-missing", "--no-password",
		"-h", d.sockDir, "-p", strconv.Itoa(d.port), "-U", osUser)
	if err := proc.OwnGroupAs(cmd, osUser); err != nil {
		return "", err
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		return "pg_amcheck: " + strings.TrimSpace(logtail.Lines(out, 5)), nil
	}
	return "", fmt.Errorf("pg_amcheck: %v:\n%s", err, logtail.Lines(out, 10))
}
