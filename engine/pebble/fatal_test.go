package pebble

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/testenv"
)

// TestFullWALTierFailsTheCallNotTheProcess fills a 2 MiB tmpfs holding the
// WAL, as a study with `wal: tiny` does: Pebble's fatal commit error must
// come back as the error of the write (unwrapping to ENOSPC), be reported
// by Check, fail later calls at once, and let Close return.
func TestFullWALTierFailsTheCallNotTheProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "mounting a tmpfs needs root")
	}
	wal := filepath.Join(t.TempDir(), "wal")
	if err := os.Mkdir(wal, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", wal, "tmpfs", 0, "size=2m"); err != nil {
		testenv.Skipf(t, "mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(wal, unix.MNT_DETACH) })
	data := t.TempDir()
	db, err := Engine{}.Open(context.Background(), engine.Config{Dirs: map[string]string{Data: data, WAL: wal},
		Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(map[string]string{"memtable": "67108864"})})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := db.NewSession(context.Background())
	rec := s.(engine.Records)
	value := make([]byte, 1000)
	var werr error
	for i := 0; i < 5000 && werr == nil; i++ {
		werr = rec.Insert(context.Background(), []byte(fmt.Sprintf("user%08d", i)), [][]byte{value})
	}
	var fe *FatalError
	if !errors.As(werr, &fe) || !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("writes into a full WAL tier ended with %v; want a *FatalError unwrapping to ENOSPC", werr)
	}
	if err := db.(engine.Checker).Check(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Check after the fatal error = %v", err)
	}
	if err := rec.Insert(context.Background(), []byte("later"), [][]byte{value}); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a write after the fatal error = %v, want the fatal error at once", err)
	}
	if _, err := rec.Read(context.Background(), []byte("user00000000")); !errors.As(err, &fe) {
		t.Errorf("a read after the fatal error = %v, want the fatal error", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("Close of a broken instance: %v", err)
	}
}
