package workloadtest

import (
	"context"
	"strconv"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/ycsb"
)

// TestMain removes the servers' shared test folder after the tests.
func TestMain(m *testing.M) { enginetest.Main(m, "workloadtest") }

// ycsbA returns ycsb-a with records records and a fixed seed.
func ycsbA(t testing.TB, records int) workload.Workload {
	t.Helper()
	for _, s := range ycsb.Specs() {
		if s.Name == "ycsb-a" {
			w, err := s.Build(map[string]string{"records": strconv.Itoa(records), "seed": "1"})
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
		return enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM usertable")
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
	for _, e := range enginetest.Servers(t) {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			started := enginetest.Open(t, e)
			ep := started.(engine.Served).Endpoint()
			if e.Name == "mariadb" && ep.Password == "" {
				t.Fatalf("mariadb's endpoint has no password: %+v", ep)
			}
			db, closeDB := enginetest.OpenClosedByTest(t, e, engine.Config{Target: ep.URL(), Durability: engine.Sync, Options: e.Engine.Spec().MustResolveOptions(nil)})
			if pid := db.(engine.PIDer).PID(); pid != 0 {
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
				st, err := w.Load(ctx, db, 2)
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
			if errs := RunClients(t, w, db, 2, 100); len(errs) > 0 {
				t.Fatalf("%d of 200 operations on the target failed; first: %v", len(errs), errs[0])
			}
			if err := closeDB(); err != nil {
				t.Errorf("close of a target: %v", err)
			}
			if err := started.(engine.Checker).Check(); err != nil {
				t.Fatalf("the server died when its target engine closed: %v", err)
			}
			// The same server: the records loaded through the target are there.
			if errs := RunClients(t, w, started, 1, 20); len(errs) > 0 {
				t.Fatalf("operations on the started server after the target closed: %v", errs[0])
			}
			if got := countRecords(t, e.Name, started); got != 300 {
				t.Errorf("the started server holds %d records, want the 300 loaded through the target", got)
			}
		})
	}
}
