package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
)

// TestProcessCrash crashes real servers (SIGKILL), and Pebble in its
// child process, inside their measured window under YCSB A, restarts them
// on what survived and checks every acknowledged write. A mode whose engine promises to survive a process
// crash loses none; Redis without its AOF loses them all, which proves the
// check sees a loss. Each run records its crash moment, its recovery time
// and that no server outlives the study.
func TestProcessCrash(t *testing.T) {
	root, tiers := serverTiers(t, "disk")
	cases := []struct {
		engine string
		modes  []engine.Durability
		bin    string
	}{
		{"pebble", []engine.Durability{engine.Sync, engine.NoSync}, "/"},
		{"postgres", []engine.Durability{engine.Sync, engine.Async}, "/usr/lib/postgresql"},
		{"mariadb", []engine.Durability{engine.Sync, engine.Async}, "/usr/sbin/mariadbd"},
		{"redis", []engine.Durability{engine.Sync, engine.NoWAL}, "/usr/bin/redis-server"},
	}
	for _, c := range cases {
		t.Run(c.engine, func(t *testing.T) {
			if _, err := os.Stat(c.bin); err != nil {
				t.Skipf("%s not installed", c.bin)
			}
			spec, _ := catalog.Default().EngineSpec(c.engine)
			all := map[string]string{}
			for _, comp := range spec.ComponentNames() {
				all[comp] = "disk"
			}
			st := tinyStudy(t, tiers, []study.Placement{{Name: "p", Components: all}})
			st.Engine, st.Durability, st.Crashes = c.engine, c.modes, []string{study.CrashProcess}
			st.Clients = []int{4}
			st.Warmup, st.Duration = 200*time.Millisecond, 2*time.Second
			for _, r := range runStored(t, root, st) {
				cr := r.Crash
				if r.Status != results.RunOK || cr == nil {
					t.Fatalf("%s: status %s (%s), crash %+v", r.Durability, r.Status, r.Error, cr)
				}
				t.Logf("%s %s: %.0f ops/s, crash at %.2fs, recovery %.3fs, %s (window %.0f ms) %s", c.engine, r.Durability,
					r.ThroughputOpsS, cr.AtS, cr.RecoveryS, cr.Detail, cr.LostWindowMS, cr.Replayed)
				if cr.Kind != study.CrashProcess || cr.AtS <= 0 || cr.AtS >= st.Duration.Seconds() || cr.RecoveryS <= 0 || !cr.Checked || !cr.Consistent {
					t.Errorf("%s: crash record %+v", r.Durability, cr)
				}
				if r.Ops == 0 || r.DurationS > cr.AtS+0.5 {
					t.Errorf("%s: %d ops over %.2fs; want the window to end at the crash (%.2fs)", r.Durability, r.Ops, r.DurationS, cr.AtS)
				}
				survives := spec.Survives(engine.Durability(r.Durability), study.CrashProcess)
				if survives && cr.LostAcked != 0 {
					t.Errorf("%s promises to survive a process crash, and lost %d acknowledged writes", r.Durability, cr.LostAcked)
				}
				kinds := map[string]int{}
				for _, e := range r.Events {
					kinds[e.Kind]++
					t.Logf("%s event at %.3fs for %.3fs: %s %s", r.Durability, e.T, e.DurationS, e.Kind, e.Detail)
				}
				if kinds[engine.EventCrash] != 1 || kinds[engine.EventRecovery] != 1 {
					t.Errorf("%s: want the crash and the recovery among the run's events, got %+v", r.Durability, r.Events)
				}
				if c.engine == "postgres" && kinds[engine.EventCheckpoint] == 0 {
					// The restarted server's end-of-recovery checkpoint.
					t.Errorf("%s: no checkpoint among the events of a crash run: %+v", r.Durability, r.Events)
				}
				if c.engine == "postgres" && !strings.HasPrefix(cr.Replayed, "replayed ") {
					t.Errorf("%s: PostgreSQL's replay not read from its log: %q", r.Durability, cr.Replayed)
				}
				if engine.Durability(r.Durability) == engine.NoWAL && cr.LostAcked == 0 {
					t.Errorf("redis without AOF lost nothing: the check does not see losses")
				}
			}
			noProcessesUnder(t, root)
		})
	}
}

// TestPowerCrash cuts the power under real servers (and Pebble in its
// child process): their durable tier is under the crash-capable layer,
// which loses every write no fsync covered, and a tmpfs tier loses
// everything. Synced commits lose no acknowledged write (YCSB's fields,
// the bank's transfers, whose total also holds); Redis with its AOF on
// tmpfs loses them all.
func TestPowerCrash(t *testing.T) {
	root, tiers := serverTiers(t, "disk")
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tiers["disk"], 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		engine string
		modes  []engine.Durability
		tier   string // where every component goes
		bin    string
		work   string // the workload, when not YCSB A
	}{
		{"pebble", []engine.Durability{engine.Sync, engine.NoSync}, "disk", "/", ""},
		{"postgres", []engine.Durability{engine.Sync, engine.Async}, "disk", "/usr/lib/postgresql", "bank"},
		{"postgres", []engine.Durability{engine.Sync, engine.Async}, "disk", "/usr/lib/postgresql", ""},
		{"postgres", []engine.Durability{engine.Sync, engine.Async}, "disk", "/usr/lib/postgresql", "messaging"},
		{"mariadb", []engine.Durability{engine.Sync}, "disk", "/usr/sbin/mariadbd", ""},
		{"redis", []engine.Durability{engine.Sync, engine.Async}, "disk", "/usr/bin/redis-server", ""},
		{"redis", []engine.Durability{engine.Sync}, "ram", "/usr/bin/redis-server", ""},
	}
	for _, c := range cases {
		name := c.engine + "-on-" + c.tier
		if c.work != "" {
			name += "-" + c.work
		}
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(c.bin); err != nil {
				t.Skipf("%s not installed", c.bin)
			}
			spec, _ := catalog.Default().EngineSpec(c.engine)
			all := map[string]string{}
			for _, comp := range spec.ComponentNames() {
				all[comp] = c.tier
			}
			st := tinyStudy(t, tiers, []study.Placement{{Name: "p", Components: all}})
			st.Tiers = []study.Tier{
				{Spec: tier.Spec{Name: "disk", Path: tiers["disk"], Crashes: tier.Crashes{PowerCut: true}}},
				{Spec: tier.Spec{Name: "ram", Kind: tier.TmpfsSpec{Size: 256 << 20}}},
			}
			st.Engine, st.Durability, st.Crashes = c.engine, c.modes, []string{study.CrashPower}
			switch c.work {
			case "bank":
				st.Workload = study.Workload{Name: "bank", Params: map[string]string{"accounts": "1000"}}
			case "messaging":
				st.Workload = study.Workload{Name: "messaging", Params: map[string]string{"services": "4"}}
			}
			st.Clients = []int{4}
			st.Warmup, st.Duration = 200*time.Millisecond, 2*time.Second
			for _, r := range runStoredIn(t, filepath.Join(root, "results"), st, ledger) {
				cr := r.Crash
				if r.Status != results.RunOK || cr == nil {
					t.Fatalf("%s: status %s (%s), crash %+v", r.Durability, r.Status, r.Error, cr)
				}
				t.Logf("%s %s on %s: %.0f ops/s, power cut at %.2fs, recovery %.3fs, %s (window %.0f ms); the layer undid %s",
					c.engine, r.Durability, c.tier, r.ThroughputOpsS, cr.AtS, cr.RecoveryS, cr.Detail, cr.LostWindowMS, orNothing(cr.Lost))
				if c.work != "" && (!cr.Consistent || !r.Verified) {
					t.Errorf("%s %s: the invariant must hold through a power loss: %+v, verified %v", c.work, r.Durability, cr, r.Verified)
				}
				switch {
				case c.tier == "ram":
					if cr.Checked && cr.LostAcked == 0 {
						t.Errorf("redis on tmpfs lost nothing to a power cut: %+v", cr)
					}
				case spec.Survives(engine.Durability(r.Durability), study.CrashPower):
					if !cr.Checked || !cr.Consistent || cr.LostAcked != 0 {
						t.Errorf("%s promises to survive a power loss: %+v", r.Durability, cr)
					}
				}
			}
			noProcessesUnder(t, root)
		})
	}
}

// TestPowerCrashWALInRAM runs the smallest study that failed with "crash:
// wipe .../wal: input/output error" on every power run of its WAL on
// /dev/shm: Pebble with synced commits, its WAL on a disk folder, on a
// folder on tmpfs and on a pmem_emulated folder (plain, and with the
// Optane PMEM profile's latencies), under a power cut. Every run is ok:
// the tmpfs WAL is emptied at the cut and every acknowledged write since
// the load is gone, which is the tier's doing, not a contradiction of
// sync; the disk and the pmem_emulated WALs keep every one.
func TestPowerCrashWALInRAM(t *testing.T) {
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	if tier.CheckInRAM("/dev/shm") != nil {
		testenv.Skip(t, "no tmpfs at /dev/shm")
	}
	shm, err := os.MkdirTemp("/dev/shm", "tierbench-runner-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	root := t.TempDir()
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`name: wal-in-ram-power
engine: pebble
tiers:
  disk: {path: %s}
  ram:  {path: %s}
  pmem: {pmem_emulated: {path: %s}}
  pmemp: {pmem_emulated: {path: %s}, profile: optane-pmem-100}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
  wal-pmem: {data: disk, wal: pmem}
  wal-pmem-profile: {data: disk, wal: pmemp}
baseline: all-disk
durability: sync
crash: power
workload: {name: ycsb-a, records: 1000}
clients: 2
duration: 1s
repeat: 1
`, filepath.Join(root, "disk"), filepath.Join(shm, "ram"), filepath.Join(shm, "pmem"), filepath.Join(shm, "pmemp"))
	st, err := study.Parse("wal-in-ram-power.yaml", []byte(src), catalog.Default())
	if err != nil {
		t.Fatal(err)
	}
	runs := runStoredIn(t, filepath.Join(root, "results"), st, ledger)
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	for _, r := range runs {
		cr := r.Crash
		if r.Status != results.RunOK || cr == nil {
			t.Fatalf("%s: status %s (%s), crash %+v", r.Placement, r.Status, r.Error, cr)
		}
		t.Logf("%s: %.0f ops/s, power cut at %.2fs, %s; the layer undid %s", r.Placement, r.ThroughputOpsS, cr.AtS, cr.Detail, orNothing(cr.Lost))
		if !cr.Checked || !cr.Consistent {
			t.Errorf("%s: %+v; want the engine back and its writes checked", r.Placement, cr)
		}
		switch r.Placement {
		case "wal-ram":
			if cr.LostAcked == 0 || cr.Promised {
				t.Errorf("wal-ram: lost %d, promised %v; want writes lost and no promise (the WAL's tier is not durable)", cr.LostAcked, cr.Promised)
			}
		default:
			if cr.LostAcked != 0 || !cr.Promised {
				t.Errorf("%s: lost %d, promised %v; want nothing lost, as sync promises on durable tiers", r.Placement, cr.LostAcked, cr.Promised)
			}
		}
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("left in the ledger: %v", left)
	}
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// TestIgniteCrash crashes Ignite clusters under the puts workload, whose
// client (a JVM) cuts its window, reports its puts, and reads the keys
// back after the restart: FSYNC loses no acknowledged put through a
// process crash or a power cut, LOG_ONLY none through a process crash
// (its memory-mapped WAL is in the page cache), and a crash of one node
// of two, restarted to rejoin the other, loses none in LOG_ONLY.
func TestIgniteCrash(t *testing.T) {
	root, tiers := serverTiers(t, "disk")
	if err := emulate.Supported(); err != nil {
		testenv.Skipf(t, "no FUSE: %v", err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		testenv.Skip(t, "java is not installed")
	}
	if err := os.Mkdir(tiers["disk"], 0o755); err != nil {
		t.Fatal(err)
	}
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := catalog.Default().EngineSpec("ignite")
	cases := []struct {
		name    string
		nodes   string // the engine's
		modes   []engine.Durability
		crashes []string
		kill    int // nodes a process crash kills; 0: all
	}{
		{"whole", "1", []engine.Durability{engine.Sync, engine.Async}, []string{study.CrashProcess, study.CrashPower}, 0},
		{"one-of-two", "2", []engine.Durability{engine.Async}, []string{study.CrashProcess}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := tinyStudy(t, tiers, []study.Placement{{Name: "p", Components: map[string]string{"persistence": "disk", "wal": "disk", "wal_archive": "disk"}}})
			st.Tiers = []study.Tier{{Spec: tier.Spec{Name: "disk", Path: tiers["disk"], Crashes: tier.Crashes{PowerCut: true}}}}
			st.Engine, st.Durability, st.Crashes, st.CrashNodes = "ignite", c.modes, c.crashes, c.kill
			st.Options = map[string]string{"nodes": c.nodes, "heap": "256MiB", "region_size": "64MiB"}
			st.Workload = study.Workload{Name: "puts", Params: map[string]string{"keys": "5000", "value_size": "128"}}
			st.Clients = []int{4}
			st.Warmup, st.Duration = 500*time.Millisecond, 3*time.Second
			for _, r := range runStoredIn(t, filepath.Join(root, "results-"+c.name), st, ledger) {
				cr := r.Crash
				if r.Status != results.RunOK || cr == nil {
					t.Fatalf("%s: status %s (%s), crash %+v", r.Durability, r.Status, r.Error, cr)
				}
				t.Logf("ignite %s, %s crash (nodes %d) at %.2fs: %.0f ops/s, recovery %.3fs, %s (window %.0f ms); the layer undid %s",
					r.Durability, cr.Kind, cr.Nodes, cr.AtS, r.ThroughputOpsS, cr.RecoveryS, cr.Detail, cr.LostWindowMS, orNothing(cr.Lost))
				if !cr.Checked || cr.RecoveryS <= 0 || r.Ops == 0 {
					t.Errorf("%s %s: nothing checked: %+v", r.Durability, cr.Kind, cr)
				}
				if cr.Kind == study.CrashProcess && cr.Nodes != c.kill {
					t.Errorf("%s: crash record says %d nodes were killed, want %d", r.Durability, cr.Nodes, c.kill)
				}
				if spec.Survives(engine.Durability(r.Durability), cr.Kind) && (!cr.Consistent || cr.LostAcked != 0) {
					t.Errorf("%s promises to survive a %s crash: %+v", r.Durability, cr.Kind, cr)
				}
			}
			noProcessesUnder(t, root)
		})
	}
}
