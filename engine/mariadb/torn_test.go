package mariadb

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

// tornCut runs one torn power cut of a server on a crashable mount whose
// atomic-write unit is unit bytes: a table is made and made durable, then
// updated whole with an 8 MiB buffer pool, so that pages are written back
// before the cut. It returns the damage the server's restart or CHECK
// TABLE found ("" for none).
func tornCut(t *testing.T, doublewrite bool, unit int64, seed uint64) (emulate.Loss, string) {
	t.Helper()
	ctx := context.Background()
	root := base(t)
	backing, mnt := filepath.Join(root, "backing"), filepath.Join(root, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := emulate.Start(backing, mnt, emulate.Latency{}, emulate.Options{Crashable: true, AtomicWrite: unit, VolatileCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := engine.Config{Dirs: map[string]string{Data: filepath.Join(mnt, "data"), Redo: filepath.Join(mnt, "redo")}, Durability: engine.Sync,
		Options: Engine{}.Spec().MustResolveOptions(map[string]string{"cache": "8MiB", "innodb_doublewrite": map[bool]string{true: "true", false: "false"}[doublewrite]}),
		Scratch: filepath.Join(root, "scratch")}
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
	for _, q := range []string{"CREATE TABLE torn (id INT PRIMARY KEY, pad VARCHAR(400))",
		"INSERT INTO torn SELECT seq, REPEAT('a', 400) FROM seq_1_to_30000"} {
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			d.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := srv.Settle(); err != nil {
		d.Close()
		t.Fatal(err)
	}
	if _, err := d.db.ExecContext(ctx, "UPDATE torn SET pad = REPEAT('b', 400)"); err != nil {
		d.Close()
		t.Fatal(err)
	}
	loss, err := srv.PowerCutModel(emulate.Model{Kind: emulate.ModelTorn, Keep: 0.5, Seed: seed})
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	t.Logf("cut: %s", loss)
	if err := d.Crash(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := srv.PowerOn(); err != nil {
		t.Fatal(err)
	}
	// A healthy recovery of this table takes seconds; one that has not
	// accepted connections in 20 s (InnoDB may retry a corrupt page for
	// minutes) did not come back.
	startCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	db, err = Engine{}.Open(startCtx, cfg)
	if pids := serverPIDs(t, cfg.Dirs[Data]); err != nil && len(pids) > 0 {
		t.Errorf("mariadbd %v still runs after its start failed", pids)
	}
	if err != nil {
		return loss, "the server did not start: " + err.Error()
	}
	defer db.Close()
	damage, err := db.(*DB).CheckCorruption(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return loss, damage
}

// TestTornPages checks InnoDB's doublewrite buffer with its own checks,
// on a device with a volatile write cache (InnoDB writes its pages
// O_DIRECT and fsyncs them at checkpoints): with innodb_doublewrite off
// on a 4 KiB-atomic device, a torn cut leaves a 16 KiB page part new,
// which the restart or CHECK TABLE finds, in at least one of a few cuts
// (up to six: a cut tears a page only when it lands while a page write
// is still unsynced, and once in CI none of three did, one of them with
// every change durable);
// with it on, recovery repairs every torn page from the doublewrite
// copy; with it off on a 16 KiB-atomic device no page tears.
func TestTornPages(t *testing.T) {
	needServer(t)
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	cases := []struct {
		name        string
		doublewrite bool
		unit        int64
		seeds       []uint64
		wantCorrupt bool
	}{
		{"off at 4KiB", false, 4096, []uint64{1, 2, 3, 4, 5, 6}, true},
		{"on at 4KiB", true, 4096, []uint64{1}, false},
		{"off at 16KiB", false, 16384, []uint64{1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			corrupt := 0
			for _, seed := range c.seeds {
				loss, damage := tornCut(t, c.doublewrite, c.unit, seed)
				t.Logf("seed %d: the layer %s; found %q", seed, loss, damage)
				if damage != "" {
					corrupt++
				}
				if c.wantCorrupt && corrupt > 0 {
					break
				}
			}
			switch {
			case c.wantCorrupt && corrupt == 0:
				t.Errorf("innodb_doublewrite off on a 4 KiB-atomic device: no cut of %d was found corrupt", len(c.seeds))
			case !c.wantCorrupt && corrupt > 0:
				t.Errorf("found corrupt in %d cuts, want none", corrupt)
			}
		})
	}
}
