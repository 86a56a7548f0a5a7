package pebble

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

// TestCheckCorruption checks Pebble's own check: a sound instance passes,
// and one whose sstable has a flipped byte in a data block is reported
// with Pebble's message.
func TestCheckCorruption(t *testing.T) {
	ctx := context.Background()
	data, wal := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "wal")
	for _, p := range []string{data, wal} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	open := func() (*DB, error) {
		db, err := Engine{}.Open(ctx, engine.Config{Dirs: map[string]string{Data: data, WAL: wal}, Durability: engine.Sync,
			Options: Engine{}.Spec().MustResolveOptions(map[string]string{"cache": "8388608", "memtable": "1048576"})})
		if err != nil {
			return nil, err
		}
		return db.(*DB), nil
	}
	d, err := open()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := d.NewSession(ctx)
	r := s.(engine.Records)
	for i := range 2000 {
		if err := r.Insert(ctx, []byte(fmt.Sprintf("user%06d", i)), [][]byte{[]byte(strings.Repeat("v", 100))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if damage, err := d.CheckCorruption(ctx); damage != "" || err != nil {
		t.Fatalf("a sound instance: damage %q, err %v", damage, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(data, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no sstable after the flush")
	}
	f, err := os.OpenFile(ssts[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 100)
	b[0] ^= 0xFF
	f.WriteAt(b, 100)
	f.Close()
	db, err := open()
	if err != nil {
		t.Logf("open refused the corrupt instance: %v", err)
		return
	}
	defer db.Close()
	damage, err := db.CheckCorruption(ctx)
	t.Logf("damage %q", damage)
	if err != nil || !strings.Contains(damage, "checksum mismatch") || strings.Contains(damage, "\n") {
		t.Errorf("a flipped byte in %s: damage %q, err %v", ssts[0], damage, err)
	}
}
