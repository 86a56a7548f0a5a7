package enginetest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/ycsb"
)

// TestMain removes the servers' shared test folder after the tests.
func TestMain(m *testing.M) { Main(m, "enginetest") }

// ycsbA returns ycsb-a with records records and a fixed seed.
func ycsbA(t testing.TB, records int) workload.Workload {
	t.Helper()
	for _, s := range ycsb.Specs() {
		if s.Name == "ycsb-a" {
			w, err := s.New(map[string]string{"records": strconv.Itoa(records), "seed": "1"})
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
	}
	t.Fatal("no ycsb-a")
	return nil
}

// countRecords counts the loaded records: usertable's rows, or Redis's
// keys but the scan index.
func countRecords(t *testing.T, name string, db engine.DB) int64 {
	t.Helper()
	if name != "redis" {
		return QueryInt(t, name, db, "SELECT COUNT(*) FROM usertable")
	}
	ep := db.(engine.Served).Endpoint()
	opts, err := goredis.ParseURL(ep.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opts)
	defer c.Close()
	n, err := c.DBSize(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n - 1 // _indices
}

// TestTarget opens each server engine on a server the engine started
// itself, as a target: nothing is started, loads start clean, operations
// run, and closing leaves the server running.
func TestTarget(t *testing.T) {
	for _, e := range Servers(t) {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			started := Open(t, e)
			ep := started.(engine.Served).Endpoint()
			if e.Name == "mariadb" && ep.Password == "" {
				t.Fatalf("mariadb's endpoint has no password: %+v", ep)
			}
			db, err := OpenConfig(t, e, engine.Config{Target: ep.URL(), Durability: engine.Sync})
			if err != nil {
				t.Fatalf("open target %s: %v", engine.RedactTarget(ep.URL()), err)
			}
			closed := false
			t.Cleanup(func() {
				if !closed {
					db.Close()
				}
			})
			if pid := db.(interface{ PID() int }).PID(); pid != 0 {
				t.Errorf("PID of a target = %d, want 0", pid)
			}
			if err := db.(engine.Checker).Check(); err != nil {
				t.Errorf("Check of a target = %v", err)
			}
			if got, want := db.Version(), started.Version(); got != want || got == "" {
				t.Errorf("target version %q, the started server's %q", got, want)
			}
			if got := db.(engine.Served).Endpoint(); got != ep {
				t.Errorf("target endpoint %+v, want %+v", got, ep)
			}

			// A larger load, then a smaller one: the second must start
			// from nothing, as a target keeps what earlier runs loaded.
			for _, n := range []int{700, 300} {
				w := ycsbA(t, n)
				st, err := w.Load(ctx, e.Name, db, 2)
				if err != nil {
					t.Fatalf("load of %d records: %v", n, err)
				}
				if st.Records != int64(n) {
					t.Errorf("load stats %+v, want %d records", st, n)
				}
				if got := countRecords(t, e.Name, db); got != int64(n) {
					t.Errorf("after a load of %d records the server holds %d", n, got)
				}
			}
			w := ycsbA(t, 300)
			if errs := RunClients(t, w, e.Name, db, 2, 100); len(errs) > 0 {
				t.Fatalf("%d of 200 operations on the target failed; first: %v", len(errs), errs[0])
			}
			closed = true
			if err := db.Close(); err != nil {
				t.Errorf("close of a target: %v", err)
			}
			if err := started.(engine.Checker).Check(); err != nil {
				t.Fatalf("the server died when its target engine closed: %v", err)
			}
			// The same server: the records loaded through the target are there.
			if errs := RunClients(t, w, e.Name, started, 1, 20); len(errs) > 0 {
				t.Fatalf("operations on the started server after the target closed: %v", errs[0])
			}
			if got := countRecords(t, e.Name, started); got != 300 {
				t.Errorf("the started server holds %d records, want the 300 loaded through the target", got)
			}
		})
	}
}

// TestTargetErrors checks the errors of targets that are wrong for the
// engine or unreachable, and that none shows the password. No server runs.
func TestTargetErrors(t *testing.T) {
	port, err := server.FreePort() // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	closed := "127.0.0.1:" + strconv.Itoa(port)
	for _, c := range []struct {
		e      SQLEngine
		target string
		want   string
	}{
		{sqlEngines[0], "mysql://u:s3cret@db:3306/x", "engine postgres needs a postgres:// target, got mysql://u:xxxxx@db:3306/x"},
		{sqlEngines[1], "postgres://u:s3cret@db/x", "engine mariadb needs a mysql:// target, got postgres://u:xxxxx@db/x"},
		{redisEngine, "mysql://u:s3cret@db/x", "engine redis needs a redis:// target, got mysql://u:xxxxx@db/x"},
		{sqlEngines[1], "mysql://u:s3cret@db:3306", "open mariadb: target mysql://u:xxxxx@db:3306: name one database"},
		{sqlEngines[0], "postgres://u:s3cret@" + closed + "/x", "open postgres: connect to target postgres://u:xxxxx@" + closed + "/x"},
		{sqlEngines[1], "mysql://u:s3cret@" + closed + "/x", "open mariadb: connect to target mysql://u:xxxxx@" + closed + "/x"},
		{redisEngine, "redis://:s3cret@" + closed + "/1", "open redis: connect to target redis://:xxxxx@" + closed + "/1"},
	} {
		db, err := c.e.Engine.Open(context.Background(), engine.Config{Target: c.target})
		if err == nil {
			db.Close()
			t.Errorf("%s opened target %s", c.e.Name, c.target)
			continue
		}
		t.Logf("%s: %v", c.e.Name, err)
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s on %s: %v\nwant it to start with %s", c.e.Name, engine.RedactTarget(c.target), err, c.want)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", c.e.Name, err)
		}
	}
}
