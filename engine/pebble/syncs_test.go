package pebble

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// Synced commits wait the sync delay of the WAL's tier, in this process
// and in a child alike; a tier under no rule is not delayed (every other
// test here).
func TestSyncedCommitsWaitTheWALTiersSyncs(t *testing.T) {
	const delay = 100 * time.Millisecond
	for _, inChild := range []bool{false, true} {
		t.Run(fmt.Sprintf("in child %v", inChild), func(t *testing.T) {
			data, wal := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "wal")
			for _, p := range []string{data, wal} {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			db, err := Engine{}.Open(context.Background(), engine.Config{Dirs: map[string]string{Data: data, WAL: wal},
				Durability: engine.Sync, InChild: inChild, Scratch: t.TempDir(),
				Options:    Engine{}.Spec().MustResolveOptions(nil),
				SyncDelays: syncdelay.Rules{{Dir: wal, Latency: emulate.Latency{Fsync: delay}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s, err := db.NewSession(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			r := s.(engine.Records)
			const commits = 3
			start := time.Now()
			for i := range commits {
				key := []byte(fmt.Sprint(i))
				if err := r.InsertBatch(context.Background(), [][]byte{key}, [][][]byte{{[]byte("v")}}); err != nil {
					t.Fatal(err)
				}
			}
			if took := time.Since(start); took < commits*delay*3/4 {
				t.Errorf("%d synced commits took %s, want at least about %s", commits, took, commits*delay)
			}
		})
	}
}
