package ycsb

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
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
// closed-loop driver with its per-op HDR histograms, one client per core.
// This is the ceiling to quote for tierbench's driver; BenchmarkDriverNoop
// in package driver is the driver loop alone.
func BenchmarkWholePath(b *testing.B) {
	cores := runtime.GOMAXPROCS(0)
	for _, s := range Specs() {
		b.Run(s.Name, func(b *testing.B) {
			var ops int64
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				w, err := s.Build(map[string]string{pRecords: "100000"})
				if err != nil {
					b.Fatal(err)
				}
				clients := make([]driver.Client, cores)
				for c := range clients {
					if clients[c], err = w.NewClient(c, instantStore{}); err != nil {
						b.Fatal(err)
					}
				}
				res, err := driver.Run(context.Background(), driver.Config{Ops: w.Ops(), Duration: 500 * time.Millisecond}, clients)
				if err != nil {
					b.Fatal(err)
				}
				ops += res.Measured.Ops
				elapsed += res.Measured.Length
			}
			b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
			b.ReportMetric(float64(ops)/elapsed.Seconds()/float64(cores), "ops/s/core")
		})
	}
}
