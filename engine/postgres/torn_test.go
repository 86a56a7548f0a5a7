package postgres

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
)

// tornCut runs one torn power cut of a cluster on a crashable mount whose
// atomic-write unit is unit bytes: a table is made and checkpointed, then
// updated whole with a 128 KiB buffer pool, so that most of its pages are
// written back (not fsynced) before the cut. It returns the damage the
// engine found after recovery ("" for none): its own start failing, or
// pg_amcheck's report.
func tornCut(t *testing.T, fullPageWrites bool, unit int64, seed uint64) string {
	t.Helper()
	ctx := context.Background()
	backing, mnt := folder(t, "backing"), folder(t, "mnt")
	srv, err := emulate.Start(backing, mnt, emulate.Latency{}, emulate.Options{Crashable: true, AtomicWrite: unit})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close the layer: %v", err)
		}
	}()
	cfg := engine.Config{
		Dirs:       map[string]string{Data: filepath.Join(mnt, "data"), WAL: filepath.Join(mnt, "wal")},
		Durability: engine.Sync,
		Options:    Engine{}.Spec().MustResolveOptions(map[string]string{"cache": "128KiB", "full_page_writes": boolText(fullPageWrites)}),
		Scratch:    shared.scratch,
	}
	for _, d := range cfg.Dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Engine{}.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := db.(*DB)
	for _, q := range []string{
		"CREATE TABLE torn (id int PRIMARY KEY, pad text) WITH (fillfactor = 50)",
		"INSERT INTO torn SELECT g, repeat('a', 400) FROM generate_series(1, 4000) g",
		"CHECKPOINT",
	} {
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			d.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	// What the checkpoint made durable, the template copy included (whose
	// syncfs never reaches the layer), is on the device.
	if err := srv.Settle(); err != nil {
		d.Close()
		t.Fatal(err)
	}
	if _, err := d.db.ExecContext(ctx, "UPDATE torn SET pad = repeat('b', 400)"); err != nil {
		d.Close()
		t.Fatal(err)
	}
	loss, err := srv.PowerCutModel(emulate.Model{Kind: emulate.ModelTorn, Keep: 0.5, Seed: seed})
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	t.Logf("cut: %s", loss)
	crashErr := d.Crash()
	d.Close()
	if crashErr != nil {
		t.Fatal(crashErr)
	}
	if err := srv.PowerOn(); err != nil {
		t.Fatal(err)
	}
	db, err = Engine{}.Open(ctx, cfg)
	if err != nil {
		return "the cluster did not start: " + err.Error()
	}
	d = db.(*DB)
	defer d.Close()
	damage, err := d.CheckCorruption(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return damage
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestTornPages checks PostgreSQL's protection against torn pages with
// its own check: with full_page_writes off on a 4 KiB-atomic device, a
// torn power cut leaves a page part new, part old, which its checksum
// gives away (at the restart's redo or in pg_amcheck) in at least one of
// a few cuts; with full_page_writes on, the WAL's full page images repair
// every torn page; with off on a 16 KiB-atomic device, whose units cover
// its 8 KiB pages, no page tears.
func TestTornPages(t *testing.T) {
	needPostgres(t)
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	cases := []struct {
		name        string
		fpw         bool
		unit        int64
		seeds       []uint64
		wantCorrupt bool
	}{
		{"off at 4KiB", false, 4096, []uint64{1, 2, 3}, true},
		{"on at 4KiB", true, 4096, []uint64{1, 2}, false},
		{"off at 16KiB", false, 16384, []uint64{1, 2}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			corrupt := 0
			for _, seed := range c.seeds {
				damage := tornCut(t, c.fpw, c.unit, seed)
				t.Logf("seed %d: %q", seed, damage)
				if damage != "" {
					corrupt++
				}
				if c.wantCorrupt && corrupt > 0 {
					break
				}
			}
			t.Logf("corrupt in %d cuts (%s)", corrupt, time.Since(start).Round(time.Millisecond))
			switch {
			case c.wantCorrupt && corrupt == 0:
				t.Errorf("full_page_writes off on a 4 KiB-atomic device: no cut of %d was found corrupt", len(c.seeds))
			case !c.wantCorrupt && corrupt > 0:
				t.Errorf("found corrupt in %d cuts, want none", corrupt)
			}
		})
	}
}
