package tpcb

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload"
)

// BenchmarkClientCPU measures the client's CPU per transaction (tierbench's
// process: user + system time over the driven window, divided by the
// transactions) on a real PostgreSQL server, 8 clients closed loop, on
// lanes (as runs go) and on a goroutine each (as they went before lanes).
// b.N is the window in units of 100 ms. Run it on a quiet machine:
//
//	go test -run '^$' -bench ClientCPU -benchtime 50x ./workload/tpcb/
//
// The figures to read are cpu-µs/txn and txn/s; ns/op is the window.
func BenchmarkClientCPU(b *testing.B) {
	var pg enginetest.SQLEngine
	for _, e := range enginetest.SQLEngines(b) {
		if e.Name == "postgres" {
			pg = e
		}
	}
	if pg.Name == "" {
		b.Skip("postgresql not installed")
	}
	db := enginetest.Open(b, pg)
	w := newW(b, map[string]string{pScale: "1"})
	if _, err := w.Load(context.Background(), db, 2); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		lanes int
	}{{"lanes", driver.DefaultLanes()}, {"goroutines", 0}} {
		b.Run(c.name, func(b *testing.B) {
			cpuPerTxn(b, db, w, 8, c.lanes)
		})
	}
}

func cpuPerTxn(b *testing.B, db engine.DB, w workload.Workload, clients, lanes int) {
	ctx := context.Background()
	cls, closeAll, err := workload.NewClients(ctx, db, w, clients)
	if err != nil {
		b.Fatal(err)
	}
	defer closeAll()
	window := time.Duration(b.N) * 100 * time.Millisecond
	b.ResetTimer()
	before := cpuTime()
	res, err := driver.Run(ctx, driver.Config{Ops: w.Ops(), Warmup: 500 * time.Millisecond, Duration: window, Lanes: lanes}, cls)
	used := cpuTime() - before
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	txns := res.Warmup.Ops + res.Measured.Ops
	if txns == 0 {
		b.Fatal("no transaction committed")
	}
	b.ReportMetric(float64(used.Microseconds())/float64(txns), "cpu-µs/txn")
	b.ReportMetric(res.Measured.Throughput(), "txn/s")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
