package enginetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// A server started under sync delays (emulate: syscall) waits the asked
// fsync latency at each commit, as its OS user, with no layer on its
// folders; a server whose folders are under no rule is not delayed (every
// other test of this package).
func TestCommitsWaitTheirTiersSyncs(t *testing.T) {
	if err := syncdelay.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	const delay = 100 * time.Millisecond
	for _, e := range SQLEngines(t) {
		t.Run(e.Name, func(t *testing.T) {
			parent := filepath.Join(root(t), "slow-"+e.Name)
			if err := os.MkdirAll(parent, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(parent) })
			cfg := engine.Config{Dirs: Folders(t, e, parent), Durability: engine.Sync,
				Options:    e.Engine.Spec().MustResolveOptions(nil),
				SyncDelays: syncdelay.Rules{{Dir: parent, Latency: emulate.Latency{Fsync: delay}}}}
			db, closeDB := OpenClosedByTest(t, e, cfg)
			Exec(t, db, "CREATE TABLE slow (id INT PRIMARY KEY)")
			// Each autocommitted insert is a synced commit: its WAL
			// (redo log) is flushed before it returns.
			const commits = 3
			start := time.Now()
			for i := range commits {
				Exec(t, db, fmt.Sprintf("INSERT INTO slow VALUES (%d)", i))
			}
			if took := time.Since(start); took < commits*delay*3/4 {
				t.Errorf("%d synced commits took %s, want at least about %s", commits, took, commits*delay)
			}
			if err := closeDB(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
