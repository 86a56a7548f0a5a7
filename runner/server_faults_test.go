package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
)

// killerCatalog serves the real catalog; its engines' servers are killed
// with SIGKILL after a delay when their data folder is on a tier named
// "doomed". The server and the kill are real; only the timing is injected.
type killerCatalog struct {
	*catalog.Catalog
	after time.Duration
}

func (c killerCatalog) Engine(name string) (engine.Engine, bool) {
	e, ok := c.Catalog.Engine(name)
	return killerEngine{e, c.after}, ok
}

type killerEngine struct {
	engine.Engine
	after time.Duration
}

func (k killerEngine) Open(ctx context.Context, cfg engine.Config) (engine.DB, error) {
	db, err := k.Engine.Open(ctx, cfg)
	if err != nil || !strings.Contains(cfg.Dirs["data"], "/doomed/") {
		return db, err
	}
	pid := db.(engine.PIDer).PID()
	time.AfterFunc(k.after, func() { syscall.Kill(pid, syscall.SIGKILL) })
	return db, nil
}

// serverTiers makes 0755 tier folders under /var/tmp, which the servers'
// own OS users can enter, or skips when not root.
func serverTiers(t *testing.T, names ...string) (string, map[string]string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "server engines run as their own OS users: needs root")
	}
	if _, err := os.Stat("/usr/lib/postgresql"); err != nil {
		testenv.Skip(t, "postgresql not installed")
	}
	root, err := os.MkdirTemp("/var/tmp", "tierbench-runner-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	tiers := map[string]string{}
	for _, n := range names {
		tiers[n] = filepath.Join(root, n)
	}
	return root, tiers
}

func postgresStudy(t *testing.T, tiers map[string]string, placements []study.Placement, records string) *study.Study {
	st := tinyStudy(t, tiers, placements)
	st.Engine, st.Durability = "postgres", []engine.Durability{engine.Async}
	st.Workload.Params["records"] = records
	st.Warmup, st.Duration = 200*time.Millisecond, 3*time.Second
	return st
}

// TestServerDiesMidRun kills a real PostgreSQL server during its run: that
// run fails with the server's log tail, the next run starts a fresh server
// and succeeds, and no server outlives the study.
func TestServerDiesMidRun(t *testing.T) {
	root, tiers := serverTiers(t, "doomed", "fine")
	st := postgresStudy(t, tiers, []study.Placement{
		{Name: "dies", Components: map[string]string{"data": "doomed", "wal": "fine"}},
		{Name: "lives", Components: map[string]string{"data": "fine", "wal": "fine"}},
	}, "500")
	st.Order = study.Order{Fixed: true} // the killed server's run first, then a fresh one
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// Opening, loading 500 records and the warmup take well under 1.5 s;
	// the kill lands in the measured window.
	sum, err := Run(context.Background(), st, Options{Catalog: killerCatalog{catalog.Default(), 1500 * time.Millisecond}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, err %v", len(runs), err)
	}
	dies, lives := runs[0], runs[1]
	t.Logf("killed server's run: %s", dies.Error)
	if dies.Status != results.RunFailed || !strings.Contains(dies.Error, "postgres exited") || !strings.Contains(dies.Error, "last lines of its log") {
		t.Errorf("killed server's run: status %s, error %q; want failed with the server's exit and log tail", dies.Status, dies.Error)
	}
	if lives.Status != results.RunOK || lives.Ops == 0 {
		t.Errorf("next run: status %s (%s), %d ops", lives.Status, lives.Error, lives.Ops)
	}
	noProcessesUnder(t, root)
}

// noProcessesUnder fails t if a process naming root in its command line
// is still there once the study returned. A process the study signalled
// may still be on its way out for a moment, so it is looked for a few
// times before it counts as left behind.
func noProcessesUnder(t *testing.T, root string) {
	t.Helper()
	var out []byte
	for range 10 {
		if out, _ = exec.Command("pgrep", "-af", root).Output(); len(out) == 0 {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("processes still using %s: %s", root, out)
}

// TestServerTierFull places PostgreSQL's data on a tier too small for the
// load: the run fails with "tier small full", not a stack of driver errors.
func TestServerTierFull(t *testing.T) {
	root, tiers := serverTiers(t, "small", "big")
	if err := os.Mkdir(tiers["small"], 0o755); err != nil {
		t.Fatal(err)
	}
	// A fresh cluster needs about 40 MB; 100,000 YCSB records need 120 MB.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "tmpfs", tiers["small"]).CombinedOutput(); err != nil {
		testenv.Skipf(t, "mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", tiers["small"]).Run() })
	st := postgresStudy(t, tiers, []study.Placement{
		{Name: "data-small", Components: map[string]string{"data": "small", "wal": "big"}},
	}, "100000")
	runs := runOne(t, root, st)
	t.Logf("run on the small tier: %s", runs[0].Error)
	if r := runs[0]; r.Status != results.RunFailed || !strings.HasPrefix(r.Error, "tier small full (") {
		t.Errorf("status %s, error %q; want failed with \"tier small full (...\"", r.Status, r.Error)
	}
	if ents, _ := os.ReadDir(tiers["small"]); len(ents) != 0 {
		t.Errorf("run folder left on the full tier: %v", ents)
	}
}

// TestTpcbRunsOnLanes: tpcb on PostgreSQL runs on the driver's lanes
// (driver/lane), or on as many as the driver's name sets
// (builtin:lanes=N, 0 for a goroutine per client); each run records how
// many (never more than its clients), and its transactions all commit.
func TestTpcbRunsOnLanes(t *testing.T) {
	root, tiers := serverTiers(t, "disk")
	st := postgresStudy(t, tiers, []study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}}, "")
	st.Workload = study.Workload{Name: "tpcb", Params: map[string]string{"scale": "1"}}
	st.Duration = time.Second
	st.Clients = []int{2}
	st.Drivers = []string{"builtin", "builtin:lanes=2", "builtin:lanes=0"}
	want := map[string]int{"builtin": min(driver.DefaultLanes(), 2), "builtin:lanes=2": 2, "builtin:lanes=0": 0}
	runs := runStored(t, root, st)
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(runs), len(want))
	}
	for _, r := range runs {
		if r.Status != results.RunOK || r.Ops == 0 || r.Errors != 0 {
			t.Fatalf("%s: status %s (%s), %d ops, %d errors", r.Driver, r.Status, r.Error, r.Ops, r.Errors)
		}
		if r.Lanes != want[r.Driver] {
			t.Errorf("%s: run on %d lanes, want %d", r.Driver, r.Lanes, want[r.Driver])
		}
		// The load generator's CPU is its lanes' threads', one each, or
		// its process's when the clients have goroutines of their own.
		if lg := r.Telemetry.LoadGen; lg == nil || lg.LaneThreads != want[r.Driver] || lg.CPUSeconds <= 0 {
			t.Errorf("%s: load generator %+v, want its CPU from %d lane threads", r.Driver, lg, want[r.Driver])
		}
	}
}

// runOne runs st, a study of one run, with its results under root, and
// returns the stored run.
func runOne(t *testing.T, root string, st *study.Study) []results.Run {
	t.Helper()
	runs := runStored(t, root, st)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	return runs
}

// runStored runs st with its results under root and returns its stored runs.
func runStored(t *testing.T, root string, st *study.Study) []results.Run {
	t.Helper()
	return runStoredIn(t, filepath.Join(root, "results"), st, nil)
}

// runStoredIn runs st with its results in dir, recording what it sets up
// in ledger (nil: none), and returns its stored runs.
func runStoredIn(t *testing.T, dir string, st *study.Study, ledger *tier.Ledger) []results.Run {
	t.Helper()
	store, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}
