package runner

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/progress"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
)

// filesCatalog serves the real catalog, whose engines it wraps to note
// each run's component folders and the files the engine left in them
// when it is closed.
type filesCatalog struct {
	*catalog.Catalog
	mu    sync.Mutex
	seen  map[string][]string // component folder -> files in it at Close
	order []string
}

func (c *filesCatalog) Engine(name string) (engine.Engine, bool) {
	e, ok := c.Catalog.Engine(name)
	return filesEngine{e, c}, ok
}

type filesEngine struct {
	engine.Engine
	c *filesCatalog
}

func (f filesEngine) Open(ctx context.Context, cfg engine.Config) (engine.DB, error) {
	db, err := f.Engine.Open(ctx, cfg)
	if err != nil {
		return db, err
	}
	return filesDB{db, f.c, cfg.Dirs}, nil
}

type filesDB struct {
	engine.DB
	c    *filesCatalog
	dirs map[string]string
}

func (d filesDB) Close() error {
	err := d.DB.Close()
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	for _, dir := range d.dirs {
		var files []string
		filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				files = append(files, e.Name())
			}
			return nil
		})
		d.c.seen[dir] = files
		d.c.order = append(d.c.order, dir)
	}
	return err
}

// TestRbdTierCarriesARun runs a synced pebble study whose data and WAL
// are on an rbd tier, whose Ceph cluster lives on two tmpfs tiers: the
// run succeeds with its files on the tier's mount, the tier is recorded as
// an image through rbd-fuse and a loop device, as durable as tmpfs (not),
// and after the study nothing is left: no mount, loop device, rbd-fuse or
// Ceph daemon, and an empty ledger.
func TestRbdTierCarriesARun(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root for mounts, loop devices and Ceph's daemons")
	}
	spec := rbdtier.Spec{Size: 256 << 20, FS: "ext4", Cluster: map[string]string{"block": "blk", "db": "meta", "wal": "meta"},
		// A block.db too small for RocksDB's WAL files: it spills over to
		// the main device at once, which each run must say.
		Options: map[string]string{"block_size": "1073741824", "db_size": "67108864"}}
	if err := rbdtier.Preflight(catalog.Default().Ceph(), spec); err != nil {
		testenv.Skip(t, err)
	}
	// Ceph's daemons run as user ceph, who must reach the tiers' mounts
	// and the scratch folder in the state folder.
	state, err := os.MkdirTemp("/var/tmp", "tierbench-rbd-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	ledger, err := tier.OpenLedger(state)
	if err != nil {
		t.Fatal(err)
	}
	st := tinyStudy(t, map[string]string{}, []study.Placement{{Name: "on-ceph", Components: map[string]string{"data": "ceph", "wal": "ceph"}}})
	st.Tiers = []study.Tier{
		{Spec: tier.Spec{Name: "ceph", Kind: rbdtier.Tier{Spec: spec, Ceph: catalog.Default().Ceph()}}}, // declared first: served after the tiers it names
		{Spec: tier.Spec{Name: "blk", Kind: tier.TmpfsSpec{Size: 1100 << 20}}},
		{Spec: tier.Spec{Name: "meta", Kind: tier.TmpfsSpec{Size: 720 << 20}}},
	}
	st.Durability, st.Probe = []engine.Durability{engine.Sync}, study.ProbeOff
	store, err := results.Open(filepath.Join(state, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cat := &filesCatalog{Catalog: catalog.Default(), seen: map[string][]string{}}
	lines := &syncWriter{}
	sum, err := Run(context.Background(), st, Options{Catalog: cat, Store: store, Ledger: ledger, Progress: progress.NewPlain(lines)})
	if err != nil || sum.OK != 1 {
		t.Fatalf("run: %+v %v\n%s", sum, err, lines)
	}
	stored, err := store.Study(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	info := stored.Tiers["ceph"]
	t.Logf("tier ceph: %+v", info)
	if info.FSType != "ext4" || !strings.HasPrefix(info.Device, "/dev/loop") || !strings.HasSuffix(info.BackingFile, "-ceph-rbd/"+sum.Study.ID+"-ceph") {
		t.Errorf("tier ceph is not an ext4 loop device on the image in rbd-fuse's mount: %+v", info)
	}
	if info.Durable || !strings.Contains(info.Note, "rbd-fuse") || !strings.Contains(info.Note, "librbd cache off") || !strings.Contains(info.Note, "tier blk: tmpfs") {
		t.Errorf("tier ceph's label: durable %v, %q", info.Durable, info.Note)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	if c := runs[0].Caveats; len(c) != 1 || !strings.HasPrefix(c[0], "tier ceph: spilled over") {
		t.Errorf("run caveats %q; want the rbd tier's cluster's spill-over", c)
	}
	if len(cat.order) != 2 {
		t.Fatalf("component folders seen: %v", cat.order)
	}
	for _, dir := range cat.order {
		if !strings.HasPrefix(dir, info.Path+"/") {
			t.Errorf("component folder %s is not on the rbd tier's mount %s", dir, info.Path)
		}
		if len(cat.seen[dir]) == 0 {
			t.Errorf("no files in %s when the engine closed", dir)
		}
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("ledger after the study: %v", left)
	}
	if m := mountsIn(t, state); len(m) != 0 {
		t.Errorf("mounts left: %v", m)
	}
	if out, _ := exec.Command("losetup", "-l", "-n", "-O", "NAME,BACK-FILE").Output(); strings.Contains(string(out), state) {
		t.Errorf("loop devices left:\n%s", out)
	}
	if p := enginetest.ProcessesNaming(state); len(p) != 0 {
		t.Errorf("processes left: %v", p)
	}
}

// mountsIn lists the mount points under dir.
func mountsIn(t *testing.T, dir string) []string {
	t.Helper()
	ms, err := tier.Mounts()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		if strings.HasPrefix(m.Point, dir+"/") {
			out = append(out, m.Point)
		}
	}
	return out
}
