package reach

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/testenv"
)

// TestCheck checks, as root, the error for a folder user nobody
// cannot reach: it names the blocking folder and the fix, and is typed;
// and that a folder nobody may enter but not write in passes
// CheckEnterable and fails Check.
func TestCheck(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root: the check runs as another user")
	}
	if _, _, err := proc.LookupUser("nobody"); err != nil {
		testenv.Skip(t, err)
	}
	root, err := os.MkdirTemp("/var/tmp", "tierbench-reach-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	open, closed := filepath.Join(root, "open"), filepath.Join(root, "closed")
	for dir, mode := range map[string]os.FileMode{root: 0o755, open: 0o777, closed: 0o700} {
		if dir != root {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
	}
	inner := filepath.Join(closed, "data")
	if err := os.Mkdir(inner, 0o777); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := Check(ctx, "Test", "nobody", open); err != nil {
		t.Errorf("open folder: %v", err)
	}
	err = Check(ctx, "Test", "nobody", inner)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "chmod o+x "+closed) {
		t.Errorf("closed folder: %v", err)
	}
	if err := Check(ctx, "Test", "", inner); err != nil {
		t.Errorf("tierbench's own user: %v", err)
	}
	err = CheckEnterable(ctx, "Test", "nobody", inner)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "folder "+closed+" is closed") {
		t.Errorf("enter a closed folder: %v", err)
	}
	if err := CheckEnterable(ctx, "Test", "nobody", root); err != nil {
		t.Errorf("enter a 0755 folder: %v", err)
	}
	err = Check(ctx, "Test", "nobody", root)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "cannot write in "+root) {
		t.Errorf("write in a 0755 folder of root's: %v", err)
	}
}
