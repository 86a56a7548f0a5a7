package ycsb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/procfs"
)

// instantStore is a records session that returns at once, as go-ycsb's
// `basic` database does: what is left is tierbench's own cost per
// operation (operation choice, key and field generation, the driver's
// loop and histograms).
type instantStore struct{}

func (instantStore) Close() error { return nil }
func (instantStore) Insert(context.Context, []byte, [][]byte) error {
	return nil
}
func (instantStore) InsertBatch(context.Context, [][]byte, [][][]byte) error {
	return nil
}
func (instantStore) Read(context.Context, []byte) (bool, error)           { return true, nil }
func (instantStore) Update(context.Context, []byte, []engine.Field) error { return nil }
func (instantStore) Scan(_ context.Context, _ []byte, n int) (int, error) { return n, nil }

// BenchmarkWholePath measures the whole client path a study runs for each
// YCSB core workload, against a store that returns at once: the workload's
// generators (zipfian or latest keys, field values, operation mix) and the
// closed-loop driver with its per-op HDR histograms, at 1, 2 and 16
// clients. It reports ops/s and the process's CPU time per operation
// (user+system, from getrusage): clients that share nothing scale ops/s
// with cores at a steady CPU-µs/op. This is the ceiling to quote for
// tierbench's driver; BenchmarkDriverNoop in package driver is the driver
// loop alone.
func BenchmarkWholePath(b *testing.B) {
	for _, s := range Specs() {
		for _, clients := range []int{1, 2, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", s.Name, clients), func(b *testing.B) {
				var ops int64
				var elapsed, cpu time.Duration
				for i := 0; i < b.N; i++ {
					w, err := s.Build(map[string]string{pRecords: "100000"})
					if err != nil {
						b.Fatal(err)
					}
					cls := make([]driver.Client, clients)
					for c := range cls {
						if cls[c], err = w.NewClient(c, instantStore{}); err != nil {
							b.Fatal(err)
						}
					}
					before := procfs.SelfCPU()
					res, err := driver.Run(context.Background(), driver.Config{Ops: w.Ops(), Duration: 500 * time.Millisecond}, cls)
					if err != nil {
						b.Fatal(err)
					}
					cpu += procfs.SelfCPU() - before
					ops += res.Measured.Ops
					elapsed += res.Measured.Length
				}
				b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
				b.ReportMetric(float64(cpu.Microseconds())/float64(ops), "CPU-µs/op")
			})
		}
	}
}
