package oltp

import (
	"testing"

	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// BenchmarkClientCPU measures the client's CPU per oltp-read-write
// transaction on every real SQL server, one client closed loop (where
// sysbench spent less than tierbench's lanes), on a lane and on a
// goroutine. b.N is the window in units of 100 ms. On a quiet machine:
//
//	go test -run '^$' -bench ClientCPU -benchtime 50x ./workload/oltp/
func BenchmarkClientCPU(b *testing.B) {
	workloadtest.ClientCPUOnSQL(b, func() workload.Workload {
		return newW(b, "oltp-read-write", map[string]string{"table_size": "10000", "tables": "1"})
	}, 1)
}
