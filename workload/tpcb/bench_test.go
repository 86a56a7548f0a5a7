package tpcb

import (
	"testing"

	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// BenchmarkClientCPU measures the client's CPU per transaction (tierbench's
// process: user + system time over the driven window, divided by the
// transactions) on every real SQL server, 8 clients closed loop, on
// lanes (as runs go) and on a goroutine each (as they went before lanes).
// b.N is the window in units of 100 ms. Run it on a quiet machine:
//
//	go test -run '^$' -bench ClientCPU -benchtime 50x ./workload/tpcb/
//
// The figures to read are cpu-µs/op (per transaction) and ops/s; ns/op is
// the window.
func BenchmarkClientCPU(b *testing.B) {
	workloadtest.ClientCPUOnSQL(b, func() workload.Workload { return newW(b, map[string]string{pScale: "1"}) }, 8)
}
