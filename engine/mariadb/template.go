package mariadb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tierbench/tierbench/engine/server"
)

// redoFile is the InnoDB redo log (one file since MariaDB 10.5).
const redoFile = "ib_logfile0"

// Names in the scratch folder: the template datadir and, beside it, a marker
// written only after mariadb-install-db succeeded, holding the version of
// the server that made it. A template without its marker is a leftover of
// an interrupted install and is made again.
const (
	templateDir    = "mariadb-template"
	templateMarker = "mariadb-template.version"
)

// templateSQL runs after the system tables are installed.
const templateSQL = `DELETE FROM mysql.global_priv WHERE host <> 'localhost';
DELETE FROM mysql.proxies_priv WHERE host <> 'localhost';
`

// templates serialises template creation per scratch folder, so concurrent
// Opens of one study run mariadb-install-db once and the others wait for it.
var (
	templatesMu sync.Mutex
	templates   = map[string]*sync.Mutex{}
)

// installs counts mariadb-install-db runs; the tests check it.
var installs atomic.Int64

// template is an initialised datadir that every run copies: installing the
// system tables takes a bootstrap server start, copying is just I/O.
type template struct {
	dir     string
	version string // mariadbd --version of the binary that made it
}

// ensureTemplate returns scratch's template, making it on first use.
func ensureTemplate(ctx context.Context, scratch, installDB, mariadbd, runAs string) (template, error) {
	abs, err := filepath.Abs(scratch)
	if err != nil {
		return template{}, fmt.Errorf("mariadb template: %w", err)
	}
	templatesMu.Lock()
	mu := templates[abs]
	if mu == nil {
		mu = &sync.Mutex{}
		templates[abs] = mu
	}
	templatesMu.Unlock()
	mu.Lock()
	defer mu.Unlock()

	t := template{dir: filepath.Join(abs, templateDir)}
	marker := filepath.Join(abs, templateMarker)
	if b, err := os.ReadFile(marker); err == nil {
		if _, err := os.Stat(filepath.Join(t.dir, redoFile)); err == nil {
			t.version = strings.TrimSpace(string(b))
			return t, nil
		}
	}
	if err := os.RemoveAll(t.dir); err != nil {
		return template{}, fmt.Errorf("mariadb template: remove a partial template: %w", err)
	}
	// The bootstrap server runs as runAs and must reach the template's
	// folder; scratch folders from os.MkdirTemp are 0700.
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return template{}, fmt.Errorf("mariadb template: %w", err)
	}
	if runAs != "" {
		if err := os.Chmod(abs, 0o755); err != nil {
			return template{}, fmt.Errorf("mariadb template: open scratch folder %s to user %s: %w", abs, runAs, err)
		}
		if err := checkReach(ctx, runAs, abs); err != nil {
			return template{}, fmt.Errorf("mariadb template in scratch folder: %w", err)
		}
	}
	// The installer also makes passwordless root accounts for TCP
	// (root@127.0.0.1, root@::1, root@<hostname>); the server listens on
	// 127.0.0.1, where any local user could log in with them, so they go.
	// root@localhost stays: it has no password either, but with
	// skip-name-resolve it matches only the socket in the 0700 datadir.
	extra := filepath.Join(abs, templateDir+".sql")
	if err := os.WriteFile(extra, []byte(templateSQL), 0o644); err != nil {
		return template{}, fmt.Errorf("mariadb template: %w", err)
	}
	defer os.Remove(extra)
	args := []string{"--no-defaults", "--datadir=" + t.dir, "--skip-test-db",
		"--auth-root-authentication-method=normal", "--extra-file=" + extra}
	if runAs != "" {
		args = append(args, "--user="+runAs)
	}
	installs.Add(1)
	if err := server.Run(ctx, "", installDB, args...); err != nil {
		os.RemoveAll(t.dir)
		return template{}, fmt.Errorf("mariadb template: %w", err)
	}
	if _, err := os.Stat(filepath.Join(t.dir, redoFile)); err != nil {
		return template{}, fmt.Errorf("mariadb template: %s made no redo log: %w", installDB, err)
	}
	out, err := exec.CommandContext(ctx, mariadbd, "--version").Output()
	if err != nil {
		return template{}, fmt.Errorf("mariadb template: %s --version: %w", mariadbd, err)
	}
	t.version = strings.TrimSpace(string(out))
	if err := os.WriteFile(marker, []byte(t.version+"\n"), 0o644); err != nil {
		return template{}, fmt.Errorf("mariadb template: %w", err)
	}
	return t, nil
}

// copyTemplate copies the template datadir into data, except the redo log,
// which goes to redo: InnoDB finds it through innodb_log_group_home_dir and
// refuses to start when it is missing there (MariaDB 10.8+ no longer makes
// a fresh one).
func copyTemplate(t template, data, redo string) error {
	err := filepath.WalkDir(t.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(t.dir, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		dst := filepath.Join(data, rel)
		if rel == redoFile {
			dst = filepath.Join(redo, rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(dst, info.Mode().Perm())
		case d.Type().IsRegular():
			return server.CopyFile(path, dst, info.Mode().Perm())
		default:
			return nil // sockets, pid files of a crashed bootstrap: not state
		}
	})
	if err != nil {
		return fmt.Errorf("copy mariadb template %s into %s and %s: %w", t.dir, data, redo, err)
	}
	if _, err := os.Stat(filepath.Join(redo, redoFile)); err != nil {
		return fmt.Errorf("copy mariadb template %s: no redo log: %w", t.dir, err)
	}
	return nil
}

// checkReach verifies that user can enter dir (its own folders it may then
// write; the scratch folder it only passes through). A run folder made
// by root under a 0700 parent (a home folder, a MkdirTemp) is unreachable to
// the server's user, and mariadbd would fail with a bare "Permission denied";
// this names the folder to open instead.
func checkReach(ctx context.Context, user, dir string) error {
	if server.Run(ctx, user, "test", "-x", dir) == nil {
		return nil
	}
	// Find the first folder on the way that the user cannot enter.
	blocked := dir
	for p, parts := "/", strings.Split(strings.Trim(filepath.Clean(dir), "/"), "/"); len(parts) > 0; parts = parts[1:] {
		p = filepath.Join(p, parts[0])
		if server.Run(ctx, user, "test", "-x", p) != nil {
			blocked = p
			break
		}
	}
	return fmt.Errorf("user %s cannot reach %s: folder %s is closed to it; "+
		"put the folders under one every user may enter (chmod o+x on each parent, e.g. /var/tmp or /var/lib/tierbench): %w",
		user, dir, blocked, errUnreachable)
}

var errUnreachable = errors.New("folder not reachable by the server's user")
