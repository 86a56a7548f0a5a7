package tier

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/testenv"
)

// TestWorkspace makes a study's workspace on two folder tiers, with and
// without a ledger: the tiers are created and inspected, each run gets a
// fresh folder per tier with a subfolder per component (recorded while it
// exists), Remove deletes them, Keep leaves them and forgets them, a run
// folder someone else made fails the run and is left alone, and Close
// removes the scratch folder and leaves no record.
func TestWorkspace(t *testing.T) {
	for _, withLedger := range []bool{false, true} {
		name := map[bool]string{false: "no-ledger", true: "ledger"}[withLedger]
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			var ledger *Ledger
			if withLedger {
				var err error
				if ledger, err = OpenLedger(filepath.Join(root, "state")); err != nil {
					t.Fatal(err)
				}
			}
			records := func() int {
				if ledger == nil {
					return 0
				}
				all, err := ledger.All()
				if err != nil {
					t.Fatal(err)
				}
				return len(all)
			}
			fast, slow := filepath.Join(root, "fast"), filepath.Join(root, "slow")
			ws, err := NewWorkspace(context.Background(), ledger, "study1", Spec{Name: "fast", Path: fast}, Spec{Name: "slow", Path: slow})
			if err != nil {
				t.Fatal(err)
			}
			if info := ws.Tiers()["fast"]; info.Path != fast || info.FSType == "" || info.Device == "" {
				t.Errorf("tier fast: %+v", info)
			}
			scratch := ws.Scratch()
			if st, err := os.Stat(scratch); err != nil || !st.IsDir() {
				t.Fatalf("scratch folder %s: %v", scratch, err)
			}
			if got := records(); withLedger && got != 3 {
				t.Errorf("%d ledger records with the scratch folder and the two tier folders made, want 3", got)
			}

			placement := map[string]string{"data": "slow", "wal": "fast", "log": "fast"}
			f, err := ws.RunFolders("run1", placement)
			if err != nil {
				t.Fatal(err)
			}
			for c, tname := range placement {
				want := filepath.Join(root, tname, RunFolderPrefix+"run1", c)
				if f.Dirs[c] != want {
					t.Errorf("%s: folder %s, want %s", c, f.Dirs[c], want)
				}
				if f.Devices[c] != ws.Tiers()[tname].Device {
					t.Errorf("%s: device %q, want its tier's %q", c, f.Devices[c], ws.Tiers()[tname].Device)
				}
			}
			if got := records(); withLedger && got != 5 {
				t.Errorf("%d ledger records with a run's two folders, want 5", got)
			}
			if err := f.Remove(); err != nil {
				t.Fatal(err)
			}
			for _, tier := range []string{fast, slow} {
				if ents, _ := os.ReadDir(tier); len(ents) != 0 {
					t.Errorf("%s after Remove: %d entries", tier, len(ents))
				}
			}

			kept, err := ws.RunFolders("run2", placement)
			if err != nil {
				t.Fatal(err)
			}
			if err := kept.Keep(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(kept.Dirs["data"]); err != nil {
				t.Errorf("kept folder: %v", err)
			}
			if got := records(); withLedger && got != 3 {
				t.Errorf("%d ledger records after Keep, want 3 (kept folders are forgotten)", got)
			}

			theirs := filepath.Join(slow, RunFolderPrefix+"run3")
			if err := os.Mkdir(theirs, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.RunFolders("run3", placement); err == nil || !strings.Contains(err.Error(), "run folder on tier slow") {
				t.Errorf("run folder over someone else's: %v", err)
			}
			if _, err := os.Stat(theirs); err != nil {
				t.Errorf("someone else's folder: %v", err)
			}
			if _, err := os.Stat(filepath.Join(fast, RunFolderPrefix+"run3")); !os.IsNotExist(err) {
				t.Errorf("the failed run's own folder on fast is left: %v", err)
			}

			if err := ws.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(scratch); !os.IsNotExist(err) {
				t.Errorf("scratch folder after Close: %v", err)
			}
			if got := records(); got != 0 {
				t.Errorf("%d ledger records after Close", got)
			}
		})
	}
}

// TestWorkspaceRemovesTheTierFoldersItMade: a folder tier whose folder was
// missing gets it made, and the workspace's Close removes it while it is
// empty; a folder that was there stays, and so does a made one that holds
// what a run kept.
func TestWorkspaceRemovesTheTierFoldersItMade(t *testing.T) {
	root := t.TempDir()
	ledger, err := OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	made, kept, theirs := filepath.Join(root, "made"), filepath.Join(root, "kept"), filepath.Join(root, "theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(context.Background(), ledger, "study1", Spec{Name: "made", Path: made}, Spec{Name: "kept", Path: kept}, Spec{Name: "theirs", Path: theirs})
	if err != nil {
		t.Fatal(err)
	}
	f, err := ws.RunFolders("run1", map[string]string{"data": "kept"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Keep(); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("the tier folder tierbench made, left empty: %v", err)
	}
	for _, dir := range []string{kept, theirs} {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
	if all, _ := ledger.All(); len(all) != 0 {
		t.Errorf("ledger after Close: %v", all)
	}
}

// TestWorkspaceRefusesProvisioningWithoutLedger: a provisioned tier needs
// the ledger, so that a kill can be cleaned up.
func TestWorkspaceRefusesProvisioningWithoutLedger(t *testing.T) {
	root := t.TempDir()
	plain := filepath.Join(root, "plain")
	_, err := NewWorkspace(context.Background(), nil, "study1", Spec{Name: "plain", Path: plain},
		Spec{Name: "ram", Kind: TmpfsSpec{Size: 1 << 20}})
	if err == nil || !strings.Contains(err.Error(), "tier ram: provisioned tiers need tierbench's state folder") {
		t.Fatalf("err %v", err)
	}
}

// TestWorkspaceProvisionsAndUndoes mounts a tmpfs tier for a study: it is
// inspected as tmpfs (not durable), and Close unmounts it and leaves no
// record and no mount point.
func TestWorkspaceProvisionsAndUndoes(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "mounting a tmpfs needs root")
	}
	state := filepath.Join(t.TempDir(), "state")
	ledger, err := OpenLedger(state)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(context.Background(), ledger, "study1", Spec{Name: "ram", Kind: TmpfsSpec{Size: 8 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	info := ws.Tiers()["ram"]
	if info.FSType != "tmpfs" || info.Durable {
		t.Errorf("tier ram: %+v, want a tmpfs, not durable", info)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if isMountPoint(info.Path) {
		t.Errorf("%s is still mounted", info.Path)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("left in the ledger: %v", left)
	}
	if mnts, _ := os.ReadDir(filepath.Join(state, "mnt")); len(mnts) != 0 {
		t.Errorf("mount point folders left: %v", mnts)
	}
}
