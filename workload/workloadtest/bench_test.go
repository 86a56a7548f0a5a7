package workloadtest

import (
	"context"
	"testing"

	"github.com/tierbench/tierbench/engine/enginetest"
)

// BenchmarkYCSBClientCPU measures tierbench's client CPU per operation of
// ycsb-a on every real server (PostgreSQL, MariaDB, Redis), 8 clients, on lanes
// (as runs go) and on a goroutine each. Run it on a quiet machine:
//
//	go test -run '^$' -bench YCSBClientCPU -benchtime 50x ./workload/workloadtest/
func BenchmarkYCSBClientCPU(b *testing.B) {
	for _, e := range enginetest.Servers(b) {
		b.Run(e.Name, func(b *testing.B) {
			db := enginetest.Open(b, e)
			w := ycsbA(b, 20000)
			if _, err := w.Load(context.Background(), db, 2); err != nil {
				b.Fatal(err)
			}
			ClientCPULanes(b, db, w, 8)
		})
	}
}
