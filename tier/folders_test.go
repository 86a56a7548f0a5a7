package tier

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMkdirNeverTakesAFolderItDidNotCreate covers Ledger.Mkdir: a folder
// that exists is refused and not recorded; a pending record (a kill between
// the record and its confirmation) removes its folder only while empty.
func TestMkdirNeverTakesAFolderItDidNotCreate(t *testing.T) {
	root := t.TempDir()
	l, err := OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(root, "theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Mkdir(theirs, 0o755); err == nil {
		t.Fatal("Mkdir of an existing folder succeeded")
	}
	if all, _ := l.All(); len(all) != 0 {
		t.Errorf("an existing folder was recorded: %v", all)
	}

	ours := filepath.Join(root, "ours")
	r, err := l.Mkdir(ours, 0o755)
	if err != nil || r.Pending {
		t.Fatalf("Mkdir: %+v %v", r, err)
	}
	if err := Undo(r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ours); !os.IsNotExist(err) {
		t.Errorf("our folder is still there: %v", err)
	}

	for _, tc := range []struct {
		name     string
		contents bool
		wantGone bool
	}{
		{"empty", false, true},
		{"with-files", true, false},
	} {
		dir := filepath.Join(root, tc.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if tc.contents {
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := Undo(Resource{Kind: KindDir, Path: dir, Pending: true}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		_, err := os.Stat(dir)
		if gone := os.IsNotExist(err); gone != tc.wantGone {
			t.Errorf("%s: pending folder gone = %v, want %v", tc.name, gone, tc.wantGone)
		}
	}
}
