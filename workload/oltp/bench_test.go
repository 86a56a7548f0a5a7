package oltp

import (
	"context"
	"testing"

	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// BenchmarkClientCPU measures the client's CPU per oltp-read-write
// transaction on every real SQL server, one client closed loop (where
// sysbench spent less than tierbench's lanes), on a lane and on a
// goroutine. b.N is the window in units of 100 ms. On a quiet machine:
//
//	go test -run '^$' -bench ClientCPU -benchtime 50x ./workload/oltp/
func BenchmarkClientCPU(b *testing.B) {
	for _, e := range enginetest.SQLEngines(b) {
		b.Run(e.Name, func(b *testing.B) {
			db := enginetest.Open(b, e)
			w := newW(b, "oltp-read-write", map[string]string{"table_size": "10000", "tables": "1"})
			if _, err := w.Load(context.Background(), db, 2); err != nil {
				b.Fatal(err)
			}
			workloadtest.ClientCPULanes(b, db, w, 1)
		})
	}
}
