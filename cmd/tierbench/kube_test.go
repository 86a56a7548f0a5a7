package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/platform/kube/kubetest"
)

// TestKubernetesStudy validates and runs a study on a real API server's
// cluster: a missing storage class is named with those that exist, and
// both commands refuse the study (exit 2, nothing written) since running
// on a cluster is not built yet.
func TestKubernetesStudy(t *testing.T) {
	cp := kubetest.Start(t)
	cp.StorageClass(t, "local-ssd")
	dir := t.TempDir()
	st := writeStudy(t, dir, fmt.Sprintf(`name: kube
engine: postgres
platform: {kubernetes: {kubeconfig: %s, namespace: bench, image: registry.example/tierbench:1}}
tiers:
  ssd: {storage_class: local-ssd, volume_mode: Block}
  pmem: {storage_class: local-pmem}
placements:
  all-ssd: {data: ssd, wal: ssd}
  wal-pmem: {data: ssd, wal: pmem}
baseline: all-ssd
durability: [sync]
workload: {name: tpcb, scale: 1}
clients: [8]
duration: 10s
`, cp.Kubeconfig))
	for _, cmd := range []string{"validate", "run"} {
		results := filepath.Join(dir, "results-"+cmd)
		args := []string{cmd, st}
		if cmd == "run" {
			args = append(args, "--results", results)
		}
		r := tierbench(t, args...)
		if r.code != exitBadInput {
			t.Fatalf("%s: exit %d\n%s%s", cmd, r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{"tier pmem: local-pmem", "it has: local-ssd", "not built yet"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", cmd, want, r.stderr)
			}
		}
		if _, err := os.Stat(results); err == nil {
			t.Errorf("%s wrote %s", cmd, results)
		}
	}
}
