package pebble

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

func openTest(t *testing.T, d engine.Durability) (*DB, string, string) {
	t.Helper()
	data, wal := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "wal")
	for _, p := range []string{data, wal} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Engine{}.Open(context.Background(), engine.Config{Dirs: map[string]string{Data: data, WAL: wal}, Durability: d,
		Options: Engine{}.Spec().MustResolveOptions(map[string]string{"cache": "8388608", "memtable": "1048576"})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db.(*DB), data, wal
}

// files counts the files in dir ending in suffix and adds up their sizes.
func files(t *testing.T, dir, suffix string) (n int, bytes int64) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			n++
			bytes += info.Size()
		}
	}
	return n, bytes
}

// TestPlacementOnDisk checks that each component's files land in its folder.
func TestPlacementOnDisk(t *testing.T) {
	for _, tc := range []struct {
		d       engine.Durability
		wantWAL bool
	}{{engine.Sync, true}, {engine.NoSync, true}, {engine.NoWAL, false}} {
		t.Run(string(tc.d), func(t *testing.T) {
			db, data, wal := openTest(t, tc.d)
			s, _ := db.NewSession(context.Background())
			r := s.(engine.Records)
			val := bytes.Repeat([]byte("x"), 100)
			for i := 0; i < 2000; i++ {
				if err := r.Insert(context.Background(), []byte(fmt.Sprintf("user%d", i)), [][]byte{val, val}); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.db.Flush(); err != nil {
				t.Fatal(err)
			}
			// 2000 records of 200 bytes: a WAL that holds them has >= 400 KB.
			if _, size := files(t, wal, ".log"); (size > 400_000) != tc.wantWAL {
				t.Errorf("wal folder holds %d bytes of WAL, want WAL=%v", size, tc.wantWAL)
			}
			if n, _ := files(t, data, ".log"); n != 0 {
				t.Errorf("data folder has %d WAL files", n)
			}
			if n, _ := files(t, data, ".sst"); n == 0 {
				t.Error("no sstables in the data folder after a flush")
			}
			if n, _ := files(t, wal, ".sst"); n != 0 {
				t.Error("sstables in the wal folder")
			}
		})
	}
}

// TestRecordsModel exercises insert, partial update (merge), read and scan.
func TestRecordsModel(t *testing.T) {
	db, _, _ := openTest(t, engine.NoSync)
	ctx := context.Background()
	s, _ := db.NewSession(ctx)
	r := s.(engine.Records)
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	fields := [][][]byte{{[]byte("a0"), []byte("a1")}, {[]byte("b0"), []byte("b1")}, {[]byte("c0"), []byte("c1")}}
	if err := r.InsertBatch(ctx, keys, fields); err != nil {
		t.Fatal(err)
	}
	if err := r.Update(ctx, []byte("b"), []engine.Field{{Index: 1, Value: []byte("B1")}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Update(ctx, []byte("b"), []engine.Field{{Index: 0, Value: []byte("B0")}}); err != nil {
		t.Fatal(err)
	}
	for _, flush := range []bool{false, true} {
		if flush {
			if err := db.db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		v, closer, err := db.db.Get([]byte("b"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := decodeFields(v, func(i int, f []byte) { got = append(got, fmt.Sprintf("%d=%s", i, f)) }); err != nil {
			t.Fatal(err)
		}
		closer.Close()
		if strings.Join(got, ",") != "0=B0,1=B1" {
			t.Errorf("flush=%v: merged record %v, want 0=B0,1=B1", flush, got)
		}
	}
	if found, err := r.Read(ctx, []byte("a")); !found || err != nil {
		t.Errorf("read a: found=%v err=%v", found, err)
	}
	if found, err := r.Read(ctx, []byte("zz")); found || err != nil {
		t.Errorf("read missing: found=%v err=%v", found, err)
	}
	if n, err := r.Scan(ctx, []byte("b"), 10); n != 2 || err != nil {
		t.Errorf("scan from b: %d records, err %v; want 2", n, err)
	}
}

// TestOpenRejectsBadConfig: a bad option is refused where the Config is
// built (engine.Spec.ResolveOptions), a bad folder or mode by Open.
func TestOpenRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	both := map[string]string{Data: dir, WAL: dir}
	cases := []struct {
		name    string
		cfg     engine.Config
		options map[string]string // as given; nil: every default
		want    string            // the error, when it matters
	}{
		{"missing wal folder", engine.Config{Dirs: map[string]string{Data: dir}, Durability: engine.Sync}, nil, ""},
		{"unsupported durability", engine.Config{Dirs: both, Durability: engine.Async}, nil, ""},
		{"bad cache", engine.Config{Dirs: both, Durability: engine.Sync}, map[string]string{"cache": "lots"}, ""},
		// l0_compaction_threshold is a count, not a size.
		{"bad l0_compaction_threshold", engine.Config{Dirs: both, Durability: engine.Sync}, map[string]string{optL0CompactionThreshold: "lots"},
			`engine pebble: l0_compaction_threshold "lots" is not a whole number; write e.g. l0_compaction_threshold: 4`},
		{"zero l0_compaction_threshold", engine.Config{Dirs: both, Durability: engine.Sync}, map[string]string{optL0CompactionThreshold: "0"},
			"engine pebble: l0_compaction_threshold 0 is out of range: it must be at least 1; write e.g. l0_compaction_threshold: 4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			var err error
			if cfg.Options, err = (Engine{}).Spec().ResolveOptions(tc.options); err == nil {
				var db engine.DB
				if db, err = (Engine{}).Open(context.Background(), cfg); err == nil {
					db.Close()
					t.Fatal("accepted")
				}
			}
			if tc.want != "" && err.Error() != tc.want {
				t.Errorf("error = %q, want %q", err, tc.want)
			}
		})
	}
}
