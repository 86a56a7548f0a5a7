// Package enginetest runs tests on the real server engines (the SQL ones,
// postgres and mariadb, and redis): it makes each test a fresh instance in
// run folders the servers' OS users can enter, shares one template scratch
// folder per engine across a test binary, runs SQL statements on them, and
// mounts small tmpfs tiers to fill. Its own tests check what all server
// engines must do alike without a workload: refuse a wrong or unreachable
// target, and fail to open cleanly on a full tier. Tests that drive a
// workload on them live above both, in workload/workloadtest: nothing under
// engine imports a workload.
//
// Only tests import it: it calls testenv.Skip and t.Fatal, and leaves its folder
// in /var/tmp until Main, run as the package's TestMain, removes it.
package enginetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/mariadb"
	"github.com/tierbench/tierbench/engine/postgres"
	"github.com/tierbench/tierbench/engine/redis"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/testenv"
)

// SQLEngine is one real server engine with its components, each of which
// Open gives a folder of its own. (Named for the SQL engines it was made
// for; Servers lists redis too.)
type SQLEngine struct {
	Name       string
	Engine     engine.Engine
	Components []string
}

// The server engines these tests run on are listed here, not taken from
// catalog: catalog imports every engine and workload, and the tests of
// those packages (ceph's, search's, the SQL workloads', sysbench's and
// pgbench's) import this package, so importing catalog here would be an
// import cycle. Ceph and the search engines have test kits of their own
// (cephtest, searchtest), Ignite its package's tests. Each entry's name and
// components are its Spec's.

// sqlEngines are the SQL servers the integration tests run on; PostgreSQL
// first (OpenPostgres).
var sqlEngines = []SQLEngine{server(postgres.Engine{}), server(mariadb.Engine{})}

// redisEngine is the one server engine that is not SQL.
var redisEngine = server(redis.Engine{})

// server is e with its Spec's name and every component.
func server(e engine.Engine) SQLEngine {
	s := e.Spec()
	return SQLEngine{Name: s.Name, Engine: e, Components: s.ComponentNames()}
}

// shared.root is a 0755 folder under /var/tmp: the servers run as their own
// OS users, which cannot enter t.TempDir()'s 0700 parents. It holds one
// scratch folder per engine, so each engine's template is made once per
// test binary.
var shared struct {
	once   sync.Once
	prefix string // set by Main
	root   string
	err    error
}

// Main runs the tests and then removes the folder Open made. Call it from
// TestMain; name labels the folder (/var/tmp/tierbench-NAME-test-*). The
// tests run under testenv.Main's watchdog, which, should they be stuck at
// the binary's -timeout, unmounts their tmpfs tiers and removes the
// folder (the servers die with the binary: Pdeathsig).
func Main(m *testing.M, name string) {
	Name(name)
	forget := testenv.OnTimeout("the servers' test folder", Done)
	code := testenv.Main(m)
	forget()
	Done()
	os.Exit(code)
}

// Name labels the shared folder, for a TestMain of its own that calls
// Done after its tests instead of Main.
func Name(name string) { shared.prefix = "tierbench-" + name + "-test-" }

// Done removes the shared folder Open made, if it made one.
func Done() {
	if shared.root != "" {
		os.RemoveAll(shared.root)
	}
}

// SQLEngines returns the SQL server engines to test on. It skips t when not
// root (the servers run as postgres and mysql) and fails it when the shared
// folder cannot be made. An engine that is not installed is still listed:
// Open skips it, so each test shows which engines it could not run on.
func SQLEngines(t testing.TB) []SQLEngine {
	t.Helper()
	root(t)
	return sqlEngines
}

// Servers returns every server engine, the SQL ones and redis (which
// serves the records data model only), skipping t when not root as
// SQLEngines does.
func Servers(t testing.TB) []SQLEngine {
	t.Helper()
	root(t)
	return append(append([]SQLEngine(nil), sqlEngines...), redisEngine)
}

// OpenPostgres opens a fresh PostgreSQL server as Open does (skipping t
// when not root or not installed), for tests of what only PostgreSQL does.
func OpenPostgres(t testing.TB) engine.DB {
	t.Helper()
	return Open(t, SQLEngines(t)[0])
}

// root returns the shared folder, making it on first use.
func root(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root: the servers run as their own OS users")
	}
	shared.once.Do(func() {
		prefix := shared.prefix
		if prefix == "" {
			prefix = "tierbench-enginetest-"
		}
		if shared.root, shared.err = os.MkdirTemp("/var/tmp", prefix); shared.err == nil {
			shared.err = os.Chmod(shared.root, 0o755)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.root
}

// Open opens a fresh, durable (sync) instance of e in new 0755 run folders
// under the shared folder, with the engine's shared scratch folder, and
// closes it and removes the folders when t ends. It skips t when not root or
// when the engine is not installed.
func Open(t testing.TB, e SQLEngine) engine.DB {
	t.Helper()
	db, err := OpenConfig(t, e, engine.Config{Dirs: Folders(t, e, ""), Durability: engine.Sync, Options: e.Engine.Spec().MustResolveOptions(nil)})
	if err != nil {
		t.Fatalf("open %s: %v", e.Name, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close %s: %v", e.Name, err)
		}
	})
	return db
}

// Folders makes a new 0755 run folder under parent (the shared folder when
// empty) with one 0755 folder per component of e, removed when t ends.
func Folders(t testing.TB, e SQLEngine, parent string) map[string]string {
	t.Helper()
	if parent == "" {
		parent = root(t)
	}
	run, err := os.MkdirTemp(parent, e.Name+"-run-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(run, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	dirs := map[string]string{}
	for _, c := range e.Components {
		dirs[c] = filepath.Join(run, c)
		if err := os.Mkdir(dirs[c], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// OpenConfig opens e with cfg, the engine's shared scratch folder filling
// in an empty cfg.Scratch, and returns Open's error for tests of failures.
// Unlike Open it leaves closing to the caller. It skips t when not root or
// when the engine is not installed.
func OpenConfig(t testing.TB, e SQLEngine, cfg engine.Config) (engine.DB, error) {
	t.Helper()
	if cfg.Scratch == "" && cfg.Target == "" {
		cfg.Scratch = filepath.Join(root(t), "scratch-"+e.Name)
		if err := os.MkdirAll(cfg.Scratch, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := e.Engine.Open(context.Background(), cfg)
	if errors.Is(err, proc.ErrNotInstalled) {
		testenv.Skip(t, err)
	}
	return db, err
}

// OpenClosedByTest opens e with cfg as OpenConfig does, failing t when it
// cannot, for a test that closes the instance itself to see how that goes
// (after its server was killed, on a full tier). It returns the instance
// and its close; when t ends, the instance is closed only if the test has
// not called that close.
func OpenClosedByTest(t testing.TB, e SQLEngine, cfg engine.Config) (engine.DB, func() error) {
	t.Helper()
	db, err := OpenConfig(t, e, cfg)
	if err != nil {
		what := e.Name
		if cfg.Target != "" {
			what += " on target " + engine.RedactTarget(cfg.Target)
		}
		t.Fatalf("open %s: %v", what, err)
	}
	var closed atomic.Bool
	t.Cleanup(func() {
		if !closed.Load() {
			db.Close()
		}
	})
	return db, func() error {
		closed.Store(true)
		return db.Close()
	}
}

// ForEachSQL runs f as a subtest on a fresh instance of each SQL engine
// (SQLEngines, then Open), skipping engines that are not installed and
// everything when not root.
func ForEachSQL(t *testing.T, f func(t *testing.T, name string, db engine.DB)) {
	t.Helper()
	for _, e := range SQLEngines(t) {
		t.Run(e.Name, func(t *testing.T) {
			f(t, e.Name, Open(t, e))
		})
	}
}

// QueryInt runs a one-value query on a fresh session; the value is read as
// text since SUM is numeric/DECIMAL.
func QueryInt(t testing.TB, db engine.DB, q string, args ...any) int64 {
	t.Helper()
	var v int64
	ctx := context.Background()
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		var s string
		if err := conn.QueryRowContext(ctx, q, args...).Scan(&s); err != nil {
			return err
		}
		var err error
		v, err = strconv.ParseInt(s, 10, 64)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// Exec runs statements in order on a fresh session, failing t at the first
// that fails.
func Exec(t testing.TB, db engine.DB, qs ...string) {
	t.Helper()
	ctx := context.Background()
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		for _, q := range qs {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
