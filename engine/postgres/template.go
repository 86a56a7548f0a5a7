package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/reach"
	"github.com/tierbench/tierbench/host/secrets"
)

// What a run starts from: PostgreSQL's programs (one installation's
// postgres, initdb and psql), its OS user, and the study's initdb template
// in the scratch folder, which every run copies (cluster.go).

// binaries are the PostgreSQL programs of one installation.
type binaries struct {
	postgres, initdb, psql string
}

// findBinaries finds postgres in PATH or in Debian's versioned folders
// (which are not in PATH), newest version first, and initdb and psql next
// to it so the template, the server and the client that sets the run's
// password come from the same release.
func findBinaries() (binaries, error) {
	candidates := []string{"postgres"}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		candidates = append(candidates, filepath.Join(d, "postgres"))
	}
	pgPath, err := proc.Find("postgresql", candidates...)
	if err != nil {
		return binaries{}, err
	}
	if real, err := filepath.EvalSymlinks(pgPath); err == nil {
		pgPath = real
	}
	b := binaries{postgres: pgPath}
	for _, tool := range []struct {
		path      *string
		name, pkg string
	}{{&b.initdb, "initdb", "postgresql"}, {&b.psql, "psql", "postgresql-client"}} {
		*tool.path = filepath.Join(filepath.Dir(pgPath), tool.name)
		if _, err := os.Stat(*tool.path); err != nil {
			if *tool.path, err = proc.Find(tool.pkg, tool.name); err != nil {
				return binaries{}, err
			}
		}
	}
	return b, nil
}

// versionOf reads the major version from /usr/lib/postgresql/<v>/bin.
func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

type osAccount struct {
	uid, gid int
}

func lookupOSUser() (osAccount, error) {
	uid, gid, err := proc.LookupUser(osUser)
	if err != nil {
		return osAccount{}, fmt.Errorf("PostgreSQL runs as OS user %s, which does not exist (apt-get install postgresql creates it): %w", osUser, err)
	}
	return osAccount{uid: uid, gid: gid}, nil
}

// initdbRuns counts initdb invocations, so tests can check the template is
// made once per scratch folder.
var initdbRuns struct {
	sync.Mutex
	n int
}

// template is the study's initdb output, dir in the scratch folder, made
// once (server.Template) as the postgres user, with the version of the
// server that made it in its marker.
func template(bins binaries, pg osAccount, dir string) server.Template {
	return server.Template{Dir: dir, User: osUser, Label: "PostgreSQL", Build: func(ctx context.Context, dir string) (string, error) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", fmt.Errorf("create template folder: %w", err)
		}
		if err := os.Chown(dir, pg.uid, pg.gid); err != nil {
			return "", fmt.Errorf("create template folder: %w", err)
		}
		if err := reach.Check(ctx, "PostgreSQL", osUser, dir); err != nil {
			return "", err
		}
		initdbRuns.Lock()
		initdbRuns.n++
		initdbRuns.Unlock()
		if err := initdb(ctx, bins, filepath.Dir(dir), dir); err != nil {
			return "", err
		}
		return server.Version(ctx, bins.postgres)
	}}
}

// initdb runs initdb into tmpl. Password authentication needs a superuser
// password at initdb time; the template's is random and thrown away (each
// run sets its own, setPassword), and initdb reads it from a file in a
// private folder, never from its command line. --no-sync: the template is
// never used in place; each run's copy is flushed (prepareCluster).
// --data-checksums (PostgreSQL 18's default): every page carries a
// checksum, verified when it is read, so that a page a power cut tore is
// found (CheckCorruption) rather than read as data.
func initdb(ctx context.Context, bins binaries, scratch, tmpl string) error {
	pwDir, err := secrets.PrivateDir(scratch, "initdb-", osUser)
	if err != nil {
		return fmt.Errorf("initdb template: %w", err)
	}
	defer os.RemoveAll(pwDir)
	password, err := secrets.New()
	if err != nil {
		return fmt.Errorf("initdb template: %w", err)
	}
	pwFile := filepath.Join(pwDir, "pwfile")
	if err := secrets.WriteFile(pwFile, []byte(password+"\n"), osUser); err != nil {
		return fmt.Errorf("initdb template: %w", err)
	}
	if err := proc.Run(ctx, osUser, bins.initdb, "-D", tmpl, "-U", osUser, "--pwfile="+pwFile,
		"--auth-host=scram-sha-256", "--auth-local=peer", "-E", "UTF8",
		"--locale=C", "--no-instructions", "--no-sync", "--data-checksums"); err != nil {
		return fmt.Errorf("initdb template: %w", err)
	}
	return nil
}
