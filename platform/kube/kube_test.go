package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/platform/kube/kubetest"
)

// TestCheckClasses asks a real API server for the storage classes a study
// needs: present ones pass, a missing one is named with those that exist.
func TestCheckClasses(t *testing.T) {
	t.Parallel() // on a control plane of its own, waited on more than computed
	cp := kubetest.Start(t)
	cp.StorageClass(t, "local-ssd")
	cp.StorageClass(t, "local-pmem")
	c, err := kube.Connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.CheckClasses(ctx, map[string]string{"ssd": "local-ssd", "pmem": "local-pmem"}); err != nil {
		t.Errorf("classes that exist: %v", err)
	}
	err = c.CheckClasses(ctx, map[string]string{"ssd": "local-ssd", "cxl": "cxl-mem"})
	var missing *kube.MissingClassesError
	if !errors.As(err, &missing) || len(missing.Missing) != 1 || !strings.Contains(err.Error(), "tier cxl: cxl-mem") ||
		!strings.Contains(err.Error(), "local-pmem, local-ssd") || !strings.Contains(err.Error(), `context "test"`) {
		t.Errorf("a missing class: %v; want it named, with the classes the cluster has and the context", err)
	}
	if _, err := kube.Connect(cp.Kubeconfig, "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown context: %v", err)
	}
}
