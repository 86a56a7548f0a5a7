package mariadb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
)

// redoFile is the InnoDB redo log (one file since MariaDB 10.5).
const redoFile = "ib_logfile0"

// templateDir is the template datadir in the scratch folder.
const templateDir = "mariadb-template"

// templateSQL runs after the system tables are installed.
const templateSQL = `DELETE FROM mysql.global_priv WHERE host <> 'localhost';
DELETE FROM mysql.proxies_priv WHERE host <> 'localhost';
`

// installs counts mariadb-install-db runs; the tests check it.
var installs atomic.Int64

// template is the study's initialised datadir, dir in the scratch folder,
// that every run copies: installing the system tables takes a bootstrap
// server start, copying is just I/O. Its marker records the version of the
// mariadbd that made it.
func template(installDB, mariadbd, runAs, dir string) server.Template {
	return server.Template{Dir: dir, User: runAs, Label: "MariaDB", Build: func(ctx context.Context, dir string) (string, error) {
		// The installer also makes passwordless root accounts for TCP
		// (root@127.0.0.1, root@::1, root@<hostname>); the server listens on
		// 127.0.0.1, where any local user could log in with them, so they go.
		// root@localhost stays: it has no password either, but with
		// skip-name-resolve it matches only the socket in the 0700 datadir.
		extra := dir + ".sql"
		if err := os.WriteFile(extra, []byte(templateSQL), 0o644); err != nil {
			return "", fmt.Errorf("mariadb template: %w", err)
		}
		defer os.Remove(extra)
		args := []string{"--no-defaults", "--datadir=" + dir, "--skip-test-db",
			"--auth-root-authentication-method=normal", "--extra-file=" + extra}
		if runAs != "" {
			args = append(args, "--user="+runAs)
		}
		installs.Add(1)
		if err := proc.Run(ctx, "", installDB, args...); err != nil {
			return "", fmt.Errorf("mariadb template: %w", err)
		}
		if _, err := os.Stat(filepath.Join(dir, redoFile)); err != nil {
			return "", fmt.Errorf("mariadb template: %s made no redo log: %w", installDB, err)
		}
		return server.Version(ctx, mariadbd)
	}}
}

// copyTemplate copies the template datadir into data, except the redo log,
// which goes to redo: InnoDB finds it through innodb_log_group_home_dir and
// refuses to start when it is missing there (MariaDB 10.8+ no longer makes
// a fresh one).
func copyTemplate(tmpl, data, redo string) error {
	err := server.CopyTree(tmpl, func(rel string) string {
		if rel == redoFile {
			return filepath.Join(redo, rel)
		}
		return filepath.Join(data, rel)
	})
	if err != nil {
		return fmt.Errorf("copy mariadb template %s into %s and %s: %w", tmpl, data, redo, err)
	}
	if _, err := os.Stat(filepath.Join(redo, redoFile)); err != nil {
		return fmt.Errorf("copy mariadb template %s: no redo log: %w", tmpl, err)
	}
	return nil
}
