package enginetest

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

// TestFullTierAtStart opens each SQL engine on a tier too full for it: one
// too full for the run's copy of the template fails Open with the copy's
// ENOSPC; MariaDB's data on a tier that holds its datadir but not the
// temporary tablespace it makes at start fails Open with the server's log,
// noted "disk full". Both are errors runner.tierFull recognises.
func TestFullTierAtStart(t *testing.T) {
	NeedRootForTiers(t)
	for _, e := range SQLEngines(t) {
		t.Run(e.Name+"/copy", func(t *testing.T) {
			tier := MountTmpfs(t, "24m")
			dirs := Folders(t, e, tier)
			Fill(t, tier, 1<<20)
			db, err := OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync, Options: e.Engine.Spec().MustResolveOptions(nil)})
			if err == nil {
				db.Close()
				t.Fatal("opened on a full tier")
			}
			t.Logf("open: %v", err)
			if !engine.IsDiskFull(err) {
				t.Errorf("Open's error does not say the storage is full: %v", err)
			}
			if left := ProcessesIn(dirs); len(left) > 0 {
				t.Errorf("processes left after a failed Open: %v", left)
			}
		})
	}
	t.Run("mariadb/start", func(t *testing.T) {
		e := sqlEngines[1]
		tier := MountTmpfs(t, "24m")
		dirs := Folders(t, e, "")
		dirs[e.Components[0]] = Folders(t, e, tier)[e.Components[0]]
		db, err := OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync, Options: e.Engine.Spec().MustResolveOptions(nil)})
		if err == nil {
			db.Close()
			t.Fatal("mariadbd started with no room for its temporary tablespace")
		}
		t.Logf("open: %v", err)
		for _, want := range []string{"did not start", "last lines of its log", "./ibtmp1", "disk full"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Open's error lacks %q", want)
			}
		}
		if !engine.IsDiskFull(err) {
			t.Errorf("Open's error does not say the storage is full: %v", err)
		}
		if left := ProcessesIn(dirs); len(left) > 0 {
			t.Errorf("processes left after a failed start: %v", left)
		}
	})
}
