// Package workloadtest drives workloads on real engines in tests. It sits
// above engine/enginetest (which starts the server engines and knows no
// workload) and the workloads, so nothing under engine imports a workload.
// Its own tests check what every server engine must do alike under
// ycsb-a: serve a target server it did not start, and fail cleanly rather
// than hang when its server dies or its tier fills up during a load.
//
// Only tests import it.
package workloadtest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/engine/pebble"
	"github.com/tierbench/tierbench/host/procfs"
	"github.com/tierbench/tierbench/workload"
)

// RunClients runs clients goroutines of ops operations each, every client on
// its own session as the runner does, and returns every error.
func RunClients(t testing.TB, w workload.Workload, db engine.DB, clients, ops int) []error {
	t.Helper()
	return runClients(t, w, db, clients, ops, false)
}

// RunClientsOnLane runs the clients as RunClients does, all on one lane
// (driver/lane), as the runner does when every client says it can; it
// fails the test if one cannot.
func RunClientsOnLane(t testing.TB, w workload.Workload, db engine.DB, clients, ops int) []error {
	t.Helper()
	return runClients(t, w, db, clients, ops, true)
}

func runClients(t testing.TB, w workload.Workload, db engine.DB, clients, ops int, onLane bool) []error {
	t.Helper()
	ctx := context.Background()
	var (
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	fns := make([]func(context.Context), clients)
	for i := range clients {
		s, err := db.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c, err := w.NewClient(i, s)
		if err != nil {
			t.Fatal(err)
		}
		if cl, ok := c.(interface{ Close() error }); ok {
			defer cl.Close() // before the session's Close: defers run last first
		}
		if lc, ok := c.(driver.LaneClient); onLane && (!ok || !lc.OnLane()) {
			t.Fatalf("client %d cannot run on a lane", i)
		}
		fns[i] = func(ctx context.Context) {
			for range ops {
				op, err := c.Do(ctx)
				if err != nil {
					fail(err)
				}
				if op < 0 || op >= len(w.Ops()) {
					fail(errors.New("op index out of range"))
				}
			}
		}
	}
	if onLane {
		if err := lane.Run(ctx, 1, fns); err != nil {
			t.Fatal(err)
		}
		return errs
	}
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Go(func() { fn(ctx) })
	}
	wg.Wait()
	return errs
}

// CheckNotSQL checks that SQL workload w refuses an engine that is not a
// SQL one (pebble, in t's temporary folders): NewClient, Load and, if w
// has one, Verify fail with engine.ErrNoModel in words that say so.
func CheckNotSQL(t *testing.T, w workload.Workload) {
	t.Helper()
	ctx := context.Background()
	dirs := map[string]string{pebble.Data: t.TempDir(), pebble.WAL: t.TempDir()}
	db, err := pebble.Engine{}.Open(ctx, engine.Config{Dirs: dirs, Durability: engine.NoSync, Options: pebble.Engine{}.Spec().MustResolveOptions(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	notSQL := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, engine.ErrNoModel) || !strings.Contains(err.Error(), "is not a SQL engine") {
			t.Errorf("%s on pebble: %v", what, err)
		}
	}
	_, err = w.NewClient(0, s)
	notSQL("NewClient on a pebble session", err)
	_, err = w.Load(ctx, db, 1)
	notSQL("Load", err)
	if v, ok := w.(workload.Verifier); ok {
		_, err = v.Verify(ctx, db)
		notSQL("Verify", err)
	}
}

// ClientCPUOnSQL runs ClientCPULanes on every real SQL server, with a
// workload from newW loaded on it first: what each SQL workload's client
// benchmark does.
func ClientCPUOnSQL(b *testing.B, newW func() workload.Workload, clients int) {
	b.Helper()
	for _, e := range enginetest.SQLEngines(b) {
		b.Run(e.Name, func(b *testing.B) {
			db := enginetest.Open(b, e)
			w := newW()
			if _, err := w.Load(context.Background(), db, 2); err != nil {
				b.Fatal(err)
			}
			ClientCPULanes(b, db, w, clients)
		})
	}
}

// ClientCPULanes runs ClientCPU as two sub-benchmarks: on the default
// lanes (as runs go) and on a goroutine per client (as they went before).
func ClientCPULanes(b *testing.B, db engine.DB, w workload.Workload, clients int) {
	b.Helper()
	for _, c := range []struct {
		name  string
		lanes int
	}{{"lanes", driver.DefaultLanes()}, {"goroutines", 0}} {
		b.Run(c.name, func(b *testing.B) { ClientCPU(b, db, w, clients, c.lanes) })
	}
}

// ClientCPU drives clients of w on db closed loop for b.N x 100 ms (after
// 500 ms of warmup) on lanes (driver/lane; 0: a goroutine each) and
// reports the process's CPU per operation (user + system, from rusage,
// over the whole driven part) as cpu-µs/op, and ops/s: the client's cost
// on the whole path a run takes, for benchmarks.
func ClientCPU(b *testing.B, db engine.DB, w workload.Workload, clients, lanes int) {
	b.Helper()
	ctx := context.Background()
	cls, closeAll, err := workload.NewClients(ctx, db, w, clients)
	if err != nil {
		b.Fatal(err)
	}
	defer closeAll()
	window := time.Duration(b.N) * 100 * time.Millisecond
	b.ResetTimer()
	before := procfs.SelfCPU()
	res, err := driver.Run(ctx, driver.Config{Ops: w.Ops(), Warmup: 500 * time.Millisecond, Duration: window, Lanes: lanes}, cls)
	used := procfs.SelfCPU() - before
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	ops := res.Warmup.Ops + res.Measured.Ops
	if ops == 0 {
		b.Fatal("no operation succeeded")
	}
	b.ReportMetric(float64(used.Microseconds())/float64(ops), "cpu-µs/op")
	b.ReportMetric(res.Measured.Throughput(), "ops/s")
}
