package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/reach"
)

// prepareCluster makes dataDir and walDir the run's cluster: a copy of the
// template with its WAL in walDir and PGDATA/pg_wal a symlink to it, which is
// what initdb --waldir makes. A data folder that already holds a cluster is
// reused, after checking its WAL is where this run's placement puts it.
func prepareCluster(ctx context.Context, tmpl string, pg osAccount, dataDir, walDir string) error {
	for _, d := range []string{dataDir, walDir} {
		// PostgreSQL refuses a data folder others can read.
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("folder for the cluster: %w", err)
		}
		if err := os.Chown(d, pg.uid, pg.gid); err != nil {
			return fmt.Errorf("folder for the cluster: %w", err)
		}
	}
	if err := reach.Check(ctx, "PostgreSQL", osUser, dataDir, walDir); err != nil {
		return err
	}
	pgWAL := filepath.Join(dataDir, "pg_wal")
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		target, err := os.Readlink(pgWAL)
		if err != nil || filepath.Clean(target) != walDir {
			return fmt.Errorf("data folder %s holds a cluster whose pg_wal is not a symlink to the wal folder %s (%q, %v)", dataDir, walDir, target, err)
		}
		return nil
	}
	for _, d := range []string{dataDir, walDir} {
		ents, err := os.ReadDir(d)
		if err != nil {
			return fmt.Errorf("folder for the cluster: %w", err)
		}
		if len(ents) > 0 {
			return fmt.Errorf("folder %s is not empty and holds no PostgreSQL cluster; a run needs an empty folder", d)
		}
	}
	// The template's pg_wal goes to the wal folder, everything else to
	// the data folder.
	err := server.CopyTree(tmpl, func(rel string) string {
		if rest, ok := strings.CutPrefix(rel, "pg_wal"); ok && (rest == "" || rest[0] == '/') {
			return walDir + rest
		}
		return filepath.Join(dataDir, rel)
	})
	if err != nil {
		return fmt.Errorf("copy the template %s to %s and %s: %w", tmpl, dataDir, walDir, err)
	}
	if err := os.Symlink(walDir, pgWAL); err != nil {
		return fmt.Errorf("link pg_wal to the wal folder: %w", err)
	}
	if err := proc.ChownAll(osUser, dataDir, walDir); err != nil {
		return err
	}
	// Flush the copies now: their ~40MB of dirty pages would otherwise be
	// written back during the measurement, and a sync run's cluster must be
	// on stable storage from its first commit.
	for _, d := range []string{dataDir, walDir} {
		if err := syncFS(d); err != nil {
			return err
		}
	}
	return nil
}
