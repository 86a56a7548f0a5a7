package tpcb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/mariadb"
	"github.com/tierbench/tierbench/engine/postgres"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/workload"
)

// engines are the real SQL servers the integration tests run on, each with
// its two components.
var engines = []struct {
	name string
	eng  engine.Engine
	dirs []string
}{
	{"postgres", postgres.Engine{}, []string{postgres.Data, postgres.WAL}},
	{"mariadb", mariadb.Engine{}, []string{mariadb.Data, mariadb.Redo}},
}

// shared.root is a 0755 folder under /var/tmp: the servers run as their own
// OS users, which cannot enter t.TempDir()'s 0700 parents. It holds one
// scratch folder per engine, so each engine's template is made once.
var shared struct {
	once sync.Once
	root string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.root != "" {
		os.RemoveAll(shared.root)
	}
	os.Exit(code)
}

// forEachEngine runs f as a subtest on a fresh instance of each engine,
// skipping engines that are not installed and everything when not root
// (the servers run as postgres and mysql).
func forEachEngine(t *testing.T, f func(t *testing.T, name string, db engine.DB)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the servers run as their own OS users")
	}
	shared.once.Do(func() {
		if shared.root, shared.err = os.MkdirTemp("/var/tmp", "tierbench-tpcb-test-"); shared.err == nil {
			shared.err = os.Chmod(shared.root, 0o755)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			scratch := filepath.Join(shared.root, "scratch-"+e.name)
			if err := os.MkdirAll(scratch, 0o755); err != nil {
				t.Fatal(err)
			}
			run, err := os.MkdirTemp(shared.root, e.name+"-run-")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(run, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(run) })
			dirs := map[string]string{}
			for _, c := range e.dirs {
				dirs[c] = filepath.Join(run, c)
				if err := os.Mkdir(dirs[c], 0o755); err != nil {
					t.Fatal(err)
				}
			}
			db, err := e.eng.Open(context.Background(), engine.Config{Dirs: dirs, Durability: engine.Sync, Scratch: scratch})
			if errors.Is(err, server.ErrNotInstalled) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatalf("open %s: %v", e.name, err)
			}
			t.Cleanup(func() {
				if err := db.Close(); err != nil {
					t.Errorf("close %s: %v", e.name, err)
				}
			})
			f(t, e.name, db)
		})
	}
}

// runClients runs clients goroutines of ops operations each, every client on
// its own session as the runner does, and returns every error.
func runClients(t *testing.T, w workload.Workload, name string, db engine.DB, clients, ops int) []error {
	t.Helper()
	ctx := context.Background()
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i := range clients {
		wg.Go(func() {
			s, err := db.NewSession(ctx)
			if err != nil {
				fail(err)
				return
			}
			defer s.Close()
			c, err := w.NewClient(name, i, s)
			if err != nil {
				fail(err)
				return
			}
			if cl, ok := c.(interface{ Close() error }); ok {
				defer cl.Close()
			}
			for range ops {
				op, err := c.Do(ctx)
				if err != nil {
					fail(err)
				}
				if op < 0 || op >= len(w.Ops()) {
					fail(errors.New("op index out of range"))
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// queryInt runs a one-value query on a fresh session; the value is read as
// text since SUM is numeric/DECIMAL.
func queryInt(t *testing.T, name string, db engine.DB, q string, args ...any) int64 {
	t.Helper()
	var v int64
	err := withConn(context.Background(), name, db, func(conn *sql.Conn, _ engine.Dialect) error {
		var s string
		if err := conn.QueryRowContext(context.Background(), q, args...).Scan(&s); err != nil {
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

// exec runs statements on a fresh session.
func exec(t *testing.T, name string, db engine.DB, qs ...string) {
	t.Helper()
	err := withConn(context.Background(), name, db, func(conn *sql.Conn, _ engine.Dialect) error {
		for _, q := range qs {
			if _, err := conn.ExecContext(context.Background(), q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
