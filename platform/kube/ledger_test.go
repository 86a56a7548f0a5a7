package kube_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/platform/kube/kubetest"
	"github.com/tierbench/tierbench/tier"
)

// earlierLedger is a ledger.json as tierbench wrote it when package tier
// declared the cluster reference itself (its "kube" object).
const earlierLedger = `[
  {
    "kind": "kube-objects",
    "path": "tierbench.io/run=r1",
    "kube": {
      "kubeconfig": %q,
      "namespace": "bench"
    },
    "owner_pid": %d,
    "since": "2026-01-01T00:00:00Z"
  }
]`

// TestCleanupOfAnEarlierLedger has cleanup read a ledger written before
// the cluster reference moved out of package tier, name its record as it
// did, and remove the killed run's objects; and Record writes the same
// form, so an earlier tierbench can clean up after this one.
func TestCleanupOfAnEarlierLedger(t *testing.T) {
	t.Parallel() // on a control plane of its own, waited on more than computed
	cp := kubetest.Start(t)
	cp.Namespace(t, "bench")
	cp.Apply(t, "/api/v1/namespaces/bench/configmaps", []byte(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tb-r1, labels: {tierbench.io/run: r1}}\n"))
	c, err := kube.Connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if found, err := c.List(ctx, "bench", "tierbench.io/run=r1"); err != nil || len(found) != 1 {
		t.Fatalf("before cleanup: %v, %v", found, err)
	}

	state := t.TempDir()
	dead := deadPID(t)
	earlier := fmt.Sprintf(earlierLedger, cp.Kubeconfig, dead)
	if err := os.WriteFile(filepath.Join(state, "ledger.json"), []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	ledger, err := tier.OpenLedger(state)
	if err != nil {
		t.Fatal(err)
	}
	done, err := ledger.Cleanup()
	if err != nil || len(done) != 1 {
		t.Fatalf("cleanup undid %v, %v", done, err)
	}
	if got, want := done[0].String(), "Kubernetes objects tierbench.io/run=r1 in namespace bench (context current)"; got != want {
		t.Errorf("cleanup named the record %q, want %q", got, want)
	}
	if found, err := c.List(ctx, "bench", "tierbench.io/run=r1"); err != nil || len(found) != 0 {
		t.Errorf("after cleanup: %v, %v", found, err)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("ledger after cleanup: %v", left)
	}

	// What Record writes is the earlier form, owner and time aside.
	if _, err := c.Record(ledger, "bench", "tierbench.io/run=r1"); err != nil {
		t.Fatal(err)
	}
	all, _ := ledger.All()
	if len(all) != 1 {
		t.Fatalf("ledger after Record: %v", all)
	}
	r := all[0]
	r.Owner, r.Since = dead, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := ledger.Update(all[0], r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(state, "ledger.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != earlier {
		t.Errorf("Record wrote\n%s\nan earlier tierbench wrote\n%s", b, earlier)
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
