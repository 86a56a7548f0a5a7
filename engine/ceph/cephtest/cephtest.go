// Package cephtest starts a tiny real Ceph cluster for the tests of what
// runs on one (object workloads, rados bench). It is its own package
// because engine/ceph's own tests cannot import enginetest's users.
package cephtest

import (
	"os/exec"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/testenv"
)

// Open starts a one-OSD cluster with its devices in one folder (1 GiB
// block, 512 MiB memory target), closed when t ends. It skips t unless
// Ceph, and each of tools (such as "rados"), can run here.
func Open(t *testing.T, tools ...string) engine.DB {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skipf(t, "%s is not installed (apt-get install ceph-common, or make setup)", tool)
		}
	}
	e := ceph.Engine{}
	if err := e.Preflight(); err != nil {
		testenv.Skipf(t, "Ceph cannot run here (needs root and Debian's ceph-mon ceph-mgr ceph-osd radosgw ceph-common): %v", err)
	}
	k := enginetest.SQLEngine{Name: "ceph", Engine: e, Components: e.Spec().ComponentNames()}
	db, closeDB := enginetest.OpenClosedByTest(t, k, engine.Config{Dirs: enginetest.Folders(t, k, ""), Durability: engine.Sync,
		Options: e.Spec().MustResolveOptions(map[string]string{"block_size": "1073741824", "memory_target": "536870912"})})
	t.Cleanup(func() {
		if err := closeDB(); err != nil {
			t.Error(err)
		}
	})
	return db
}
