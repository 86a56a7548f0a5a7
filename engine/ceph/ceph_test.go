package ceph

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/testenv"
)

func TestMain(m *testing.M) { enginetest.Main(m, "ceph") }

var cephEngine = enginetest.SQLEngine{Name: "ceph", Engine: Engine{}, Components: []string{Block, BlockDB, BlockWAL}}

// tiny are the smallest devices, which tmpfs tiers of tierSize hold.
var tiny = map[string]string{optBlockSize: "1073741824", optDBSize: "67108864", optWALSize: "603979776"}

// tierSizes are tmpfs tiers that hold one OSD's tiny device of each.
var tierSizes = map[string]string{Block: "1100m", BlockDB: "80m", BlockWAL: "600m"}

// onTiers makes a folder for each component on the tier of the same name
// in tiers.
func onTiers(t *testing.T, tiers map[string]string) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, c := range cephEngine.Components {
		dirs[c] = filepath.Join(tiers[c], c)
		if err := os.Mkdir(dirs[c], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// mountTiers mounts one tmpfs tier per component, sized by tierSizes.
func mountTiers(t *testing.T) map[string]string {
	t.Helper()
	enginetest.NeedRootForTiers(t)
	tiers := map[string]string{}
	for _, c := range cephEngine.Components {
		tiers[c] = enginetest.MountTmpfs(t, tierSizes[c])
	}
	return tiers
}

// testDB is a cluster of a test, which may close it itself.
type testDB struct {
	*DB
	closedByTest bool
}

// closeNow closes the cluster for a test that checks Close's error.
func (tb *testDB) closeNow() error {
	tb.closedByTest = true
	return tb.Close()
}

// openTest starts a cluster on dirs with opts, closed when t ends, and
// checks then that no daemon of it is left, nothing is tracked and its
// private folder is gone.
func openTest(t *testing.T, dirs map[string]string, opts map[string]string) *testDB {
	t.Helper()
	tracked := map[int]bool{}
	cfg := engine.Config{Dirs: dirs, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(opts),
		Track: func(pid int) func() {
			tracked[pid] = true
			return func() { delete(tracked, pid) }
		}}
	start := time.Now()
	db, err := enginetest.OpenConfig(t, cephEngine, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster up, pool active+clean, in %s", time.Since(start).Round(10*time.Millisecond))
	d := &testDB{DB: db.(*DB)}
	private := d.cluster.private
	if !tracked[d.PID()] || len(tracked) != 3 {
		t.Errorf("tracked %v; want the monitor, the manager and osd.0 (pid %d)", tracked, d.PID())
	}
	t.Cleanup(func() {
		start := time.Now()
		if err := d.Close(); err != nil && !d.closedByTest {
			t.Errorf("close: %v", err)
		}
		t.Logf("cluster stopped in %s", time.Since(start).Round(10*time.Millisecond))
		if len(tracked) != 0 {
			t.Errorf("still tracked after Close: %v", tracked)
		}
		if left := enginetest.ProcessesIn(map[string]string{"private": private}); len(left) != 0 {
			t.Errorf("daemons left after Close: %v", left)
		}
		if _, err := os.Stat(private); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("private folder %s left after Close (%v)", private, err)
		}
	})
	return d
}

// TestDevicesOnTheirTiers starts one OSD with block, db and wal on three
// tmpfs tiers: each device file is on its tier at its size, an object
// goes through RADOS and back, nothing spilled over, the S3 gateway
// answers with the run's keys, and no key is on a command line.
func TestDevicesOnTheirTiers(t *testing.T) {
	d := openTest(t, onTiers(t, mountTiers(t)), tiny)
	ctx := context.Background()
	for c, name := range map[string]string{Block: "osd.0.block", BlockDB: "osd.0.db", BlockWAL: "osd.0.wal"} {
		var dev *device
		for _, x := range d.cluster.devices.all() {
			if x.component == c {
				dev = &x
			}
		}
		if dev == nil {
			t.Fatalf("%s has no device of its own", c)
		}
		st, err := os.Stat(filepath.Join(dev.dir, name))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if st.Size() != dev.size {
			t.Errorf("%s is %d bytes, want %d", name, st.Size(), dev.size)
		}
	}
	if ready, how, err := d.cluster.poolReady(ctx); err != nil || !ready {
		t.Errorf("pool after Open: %s (%v)", how, err)
	}
	rados := d.Rados()
	if rados.Pool != Pool || rados.Replicas != 1 || rados.ID != "admin" {
		t.Errorf("Rados() = %+v", rados)
	}
	for _, f := range []string{rados.Conf, rados.Keyring} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 || st.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("%s: want a file of root's with mode 0600 (%v, %v)", f, st.Mode(), err)
		}
	}
	object := bytes.Repeat([]byte("tierbench "), 1000)
	in := filepath.Join(t.TempDir(), "object")
	if err := os.WriteFile(in, object, 0o600); err != nil {
		t.Fatal(err)
	}
	radosCmd := func(args ...string) {
		t.Helper()
		base := []string{"-c", rados.Conf, "--id", rados.ID, "--keyring", rados.Keyring, "-p", rados.Pool}
		if out, err := exec.Command("rados", append(base, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("rados %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	back := filepath.Join(t.TempDir(), "back")
	radosCmd("put", "one", in)
	radosCmd("get", "one", back)
	if got, err := os.ReadFile(back); err != nil || !bytes.Equal(got, object) {
		t.Errorf("object read back differs (%d bytes, %v)", len(got), err)
	}
	if n, err := d.SlowUsedBytes(ctx); err != nil || n != 0 {
		t.Errorf("SlowUsedBytes = %d, %v; want 0 on a fresh cluster with a block.db", n, err)
	}
	if c := d.Caveats(ctx); c != nil {
		t.Errorf("caveats %q on a fresh cluster", c)
	}

	start := time.Now()
	ep, err := d.S3(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gateway up, user made, in %s", time.Since(start).Round(10*time.Millisecond))
	if ep.AccessKey == "" || ep.SecretKey == "" || ep.Region != "us-east-1" || !strings.HasPrefix(ep.URL, "http://127.0.0.1:") {
		t.Errorf("S3 endpoint %s, region %q, keys set: %v", ep.URL, ep.Region, ep.AccessKey != "" && ep.SecretKey != "")
	}
	again, err := session{d.DB}.S3(ctx)
	if err != nil || again != ep {
		t.Errorf("a second S3 call started another gateway or failed: %v", err)
	}
	resp, err := http.Get(ep.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET / answered %s", resp.Status)
	}
	if d.gateway.proc.Load() == nil {
		t.Error("the gateway is not tracked as a daemon")
	}
	logs, err := filepath.Glob(d.cluster.path(logDir, "*.log"))
	if err != nil || len(logs) != 4 {
		t.Errorf("logs %v (%v); want one per daemon: mon, mgr, osd.0, gateway", logs, err)
	}
	for what, secret := range map[string]string{"admin key": d.cluster.keys.admin.key, "gateway key": d.cluster.keys.rgw.key, "S3 secret key": ep.SecretKey} {
		if shown := secrets.ProcessesShowing(secret, true); len(shown) > 0 {
			t.Errorf("the %s is on a command line or in an environment: %q", what, shown)
		}
		for _, l := range logs {
			if b, _ := os.ReadFile(l); bytes.Contains(b, []byte(secret)) {
				t.Errorf("the %s is in log %s", what, l)
			}
		}
	}
}

// TestOpenCancelled cancels an Open half-way: what it started is stopped,
// untracked and removed.
func TestOpenCancelled(t *testing.T) {
	dirs := onTiers(t, mountTiers(t))
	scratch := enginetest.MountTmpfs(t, "64m") // a fresh folder the daemons' user can enter
	tracked := map[int]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	db, err := Engine{}.Open(ctx, engine.Config{Dirs: dirs, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(tiny), Scratch: scratch,
		Track: func(pid int) func() {
			tracked[pid] = true
			return func() { delete(tracked, pid) }
		}})
	if errors.Is(err, proc.ErrNotInstalled) {
		testenv.Skip(t, err)
	}
	if err == nil {
		db.Close()
		t.Fatal("opened within 3 s; want the deadline to stop it half-way")
	}
	t.Logf("Open: %v", err)
	if len(tracked) != 0 {
		t.Errorf("still tracked after a failed Open: %v", tracked)
	}
	if left := enginetest.ProcessesIn(map[string]string{"scratch": scratch}); len(left) != 0 {
		t.Errorf("daemons left after a failed Open: %v", left)
	}
	if ents, _ := os.ReadDir(scratch); len(ents) != 0 {
		t.Errorf("scratch folder holds %v after a failed Open", ents)
	}
}

// TestInlineDevices leaves db and wal on block's tier: BlueStore gets no
// block.db nor block.wal; a killed OSD then fails Check, named.
func TestInlineDevices(t *testing.T) {
	enginetest.NeedRootForTiers(t)
	tier := enginetest.MountTmpfs(t, tierSizes[Block])
	d := openTest(t, onTiers(t, map[string]string{Block: tier, BlockDB: tier, BlockWAL: tier}), tiny)
	if d.cluster.devices.db != nil || d.cluster.devices.wal != nil {
		t.Errorf("devices %+v; want block only", d.cluster.devices)
	}
	var files []string
	filepath.WalkDir(tier, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, strings.TrimPrefix(p, tier))
		}
		return nil
	})
	if want := []string{"/block/osd.0.block"}; strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("files on the tier: %v, want %v", files, want)
	}
	if n, err := d.SlowUsedBytes(context.Background()); err != nil || n != 0 {
		t.Errorf("SlowUsedBytes = %d, %v; want 0: RocksDB is in the main device by design", n, err)
	}
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(d.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-d.osds[0].Done()
	for what, err := range map[string]error{"Check": d.Check(), "Close": d.closeNow()} {
		if !errors.Is(err, engine.ErrServerDied) || !strings.Contains(err.Error(), "ceph-osd osd.0 exited") {
			t.Errorf("%s after osd.0 was killed: %v; want osd.0 named as died", what, err)
		}
	}
}

// TestRefused refuses what a cluster cannot do, before it starts one.
func TestRefused(t *testing.T) {
	enginetest.NeedRootForTiers(t)
	small := enginetest.MountTmpfs(t, "200m")
	withTiny := func(kv ...string) map[string]string {
		o := map[string]string{}
		for k, v := range tiny {
			o[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			o[kv[i]] = kv[i+1]
		}
		return o
	}
	for _, tc := range []struct {
		name       string
		durability engine.Durability
		opts       map[string]string
		want       string
	}{
		{"more replicas than osds", engine.Sync, withTiny(optReplicas, "2"), "replicas=2 must be from 1 to osds (1)"},
		{"too many osds", engine.Sync, withTiny(optOSDs, "5"), "osds 5 is out of range: it must be from 1 to 4"},
		{"async", engine.Async, tiny, `durability "async" is not supported: Ceph acknowledges a write only once`},
		{"db too small", engine.Sync, withTiny(optDBSize, "1048576"), "db_size 1048576 is out of range: it must be at least 64MiB"},
		{"block larger than its tier", engine.Sync, tiny, "has 200 MiB free, but 1 OSD(s) need 1.0 GiB there: lower block_size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := onTiers(t, map[string]string{Block: small, BlockDB: small, BlockWAL: small})
			t.Cleanup(func() { os.RemoveAll(dirs[Block]); os.RemoveAll(dirs[BlockDB]); os.RemoveAll(dirs[BlockWAL]) })
			// An option out of its range is refused where the Config is
			// built; the rest by Open, and by PreflightOptions before it.
			o, err := Engine{}.Spec().ResolveOptions(tc.opts)
			if err == nil {
				var db engine.DB
				if db, err = enginetest.OpenConfig(t, cephEngine, engine.Config{Dirs: dirs, Durability: tc.durability, Options: o}); err == nil {
					db.Close()
					t.Fatalf("opened; want %q", tc.want)
				}
				if tc.durability == engine.Sync && !strings.Contains(tc.name, "tier") {
					if perr := (Engine{}).PreflightOptions(o); perr == nil || !strings.Contains(perr.Error(), tc.want) {
						t.Errorf("PreflightOptions: %v; want %q", perr, tc.want)
					}
				}
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want %q", err, tc.want)
			}
		})
	}
}

// TestMissingBinaries names the packages to install.
func TestMissingBinaries(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := Engine{}.Preflight()
	if !errors.Is(err, proc.ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install ceph-mon ceph-mgr ceph-osd radosgw ceph-common") {
		t.Errorf("Preflight without Ceph: %v", err)
	}
}

// TestDevicesPlan decides which devices are separate by filesystem.
func TestDevicesPlan(t *testing.T) {
	enginetest.NeedRootForTiers(t)
	a, b := enginetest.MountTmpfs(t, "8m"), enginetest.MountTmpfs(t, "8m")
	s := settings{blockSize: 1, dbSize: 2, walSize: 3}
	for _, tc := range []struct {
		name           string
		block, db, wal string
		want           string
	}{
		{"all on one", a, a, a, "block"},
		{"db apart, wal with it", a, b, b, "block db"},
		{"wal apart", a, a, b, "block wal"},
		{"db apart, wal on block's", a, b, a, "block db wal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := planDevices(tc.block, tc.db, tc.wal, s)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range ds.all() {
				got = append(got, d.component)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("devices %v, want %s", got, tc.want)
			}
		})
	}
}

// TestSpillOver puts db and wal on a tier of their own with a block.db too
// small for RocksDB's WAL files: RocksDB spills over to the main device
// at once, and SlowUsedBytes says so.
func TestSpillOver(t *testing.T) {
	tiers := mountTiers(t)
	tiers[BlockWAL] = tiers[BlockDB]
	d := openTest(t, onTiers(t, tiers), tiny)
	if d.cluster.devices.db == nil || d.cluster.devices.wal != nil {
		t.Fatalf("devices %+v; want block and db", d.cluster.devices)
	}
	if n, err := d.SlowUsedBytes(context.Background()); err != nil || n <= 0 {
		t.Errorf("SlowUsedBytes = %d, %v; want > 0: a 64 MiB block.db holds no 282 MiB WAL file", n, err)
	}
	if c := d.Caveats(context.Background()); len(c) != 1 || !strings.Contains(c[0], "spilled over") {
		t.Errorf("caveats %q; want one that says RocksDB spilled over", c)
	}
}
