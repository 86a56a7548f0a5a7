// Package searchtest starts a small real search node for the tests of
// what runs on one (the search workloads, Rally and OSB). It is its own
// package because engine/search's own tests cannot import enginetest's
// users.
package searchtest

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/engine/search"
	"github.com/tierbench/tierbench/testenv"
)

// Open starts a node of e with a 512 MiB heap, its data and logs in
// folders of the test, closed when t ends. It skips t unless the node can
// start here (root, java, user tierbench, make setup).
func Open(t *testing.T, e engine.Engine) engine.DB {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root: the nodes run as OS user tierbench")
	}
	if pf, ok := e.(engine.Preflighter); ok {
		if err := pf.Preflight(); err != nil {
			testenv.Skip(t, err)
		}
	}
	k := enginetest.SQLEngine{Name: e.Spec().Name, Engine: e, Components: []string{search.Data, search.Logs}}
	cfg := engine.Config{Dirs: enginetest.Folders(t, k, ""), Durability: engine.Sync,
		Options: e.Spec().MustResolveOptions(map[string]string{"heap": strconv.Itoa(512 << 20)})}
	db, err := e.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}
