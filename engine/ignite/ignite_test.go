package ignite

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/testenv"
)

// needIgnite skips unless the tests can start JVMs here: root (as the other
// server engines' tests), java and the built launcher jar.
func needIgnite(t *testing.T) *launcher {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "the Ignite tests run as root, like the other server engines' tests")
	}
	l, err := findLauncher()
	if err != nil {
		testenv.Skipf(t, "cannot start Ignite here: %v", err)
	}
	return l
}

// baseDir is a fresh folder under /var/tmp (a real disk, not tmpfs),
// removed at cleanup.
func baseDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "tierbench-ignite-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// tiers makes one folder per component under its own parent ("tier"),
// as the runner does when each component is on a different tier.
func tiers(t *testing.T) map[string]string {
	t.Helper()
	base := baseDir(t)
	dirs := map[string]string{}
	for i, c := range []string{Persistence, WAL, WALArchive} {
		d := filepath.Join(base, "tier"+string(rune('a'+i)), c)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs[c] = d
	}
	return dirs
}

// tracker records the pids an engine tracks.
type tracker struct {
	mu   sync.Mutex
	pids map[int]bool
}

func (tr *tracker) track(pid int) func() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.pids == nil {
		tr.pids = map[int]bool{}
	}
	tr.pids[pid] = true
	return func() {
		tr.mu.Lock()
		delete(tr.pids, pid)
		tr.mu.Unlock()
	}
}

func (tr *tracker) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.pids)
}

// alive reports whether pid is still a process (not reaped, not a zombie).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// state is the field after "(comm)".
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// open starts a cluster and closes it at cleanup, checking that no JVM of
// it is left and nothing is still tracked.
func open(t *testing.T, d engine.Durability, dirs map[string]string, opts map[string]string) (*DB, *tracker) {
	t.Helper()
	tr := &tracker{}
	start := time.Now()
	db, err := Engine{}.Open(context.Background(), engine.Config{Dirs: dirs, Durability: d, Options: Engine{}.Spec().MustResolveOptions(opts), Track: tr.track})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	ig := db.(*DB)
	t.Logf("%d node(s) started and active in %s", ig.Nodes(), time.Since(start).Round(time.Millisecond))
	if tr.count() != ig.Nodes() {
		t.Errorf("%d pids tracked, want %d (one per node)", tr.count(), ig.Nodes())
	}
	t.Cleanup(func() {
		pids := ig.PIDs()
		start := time.Now()
		_ = ig.Close()
		t.Logf("closed in %s", time.Since(start).Round(time.Millisecond))
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("node pid %d still running after Close", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if n := tr.count(); n != 0 {
			t.Errorf("%d pids still tracked after Close", n)
		}
	})
	return ig, tr
}

// drive preloads keys 0..preload-1, then runs puts of 1 KiB values on
// keys from [0, keys) through the engine's client (the cache data model
// workload/cachekv's puts uses) and checks its figures hold together.
func drive(t *testing.T, ctx context.Context, db *DB, keys, preload int64, clients int, warmup, duration time.Duration) (*driver.Result, error) {
	t.Helper()
	work := engine.CacheWork{Mix: engine.CachePuts, Keys: keys, ValueSize: 1024}
	if preload > 0 {
		if n, err := db.Preload(ctx, preload, work.ValueSize); err != nil || n != preload {
			t.Fatalf("preload of %d keys: %d written, %v", preload, n, err)
		}
	}
	ticks := 0
	res, err := db.DriveCache(ctx, work, driver.Config{Ops: []string{"put"}, Warmup: warmup, Duration: duration,
		OnTick: func(driver.Interval) { ticks++ }}, clients)
	if err != nil {
		return res, err
	}
	m := res.Measured
	if m.Ops == 0 || ticks == 0 || ticks != len(res.Intervals) {
		t.Errorf("measured %d ops, %d ticks for %d intervals", m.Ops, ticks, len(res.Intervals))
	}
	for _, o := range m.ByOp {
		if o.Latency.TotalCount() != o.Ops {
			t.Errorf("op %s: histogram holds %d, ops %d", o.Name, o.Latency.TotalCount(), o.Ops)
		}
	}
	t.Logf("puts, %d clients: %.0f ops/s, p50 %.0f us, p99 %.0f us, %d errors (%v)", clients, m.Throughput(),
		hist.Summarize(m.ByOp[0].Latency).P50, hist.Summarize(m.ByOp[0].Latency).P99, m.Errors, res.FirstError)
	return res, nil
}

// TestPlacement runs a 3-node cluster with each component on its own
// "tier" and checks each one's files land there, and that Close leaves no
// JVM behind.
func TestPlacement(t *testing.T) {
	needIgnite(t)
	dirs := tiers(t)
	// Small WAL segments so some fill up and are archived within the run.
	db, tr := open(t, engine.Sync, dirs, map[string]string{optWALSegmentSize: "1048576", optWALArchiveSize: "67108864"})
	if _, err := drive(t, context.Background(), db, 4000, 4000, 8,
		500*time.Millisecond, time.Second); err != nil {
		t.Fatal(err)
	}
	if tr.count() != db.Nodes() {
		t.Errorf("%d pids tracked after the run, want %d (the client's untracked)", tr.count(), db.Nodes())
	}
	for i := range db.Nodes() {
		id := "node" + strconv.Itoa(i)
		for _, want := range []string{
			filepath.Join(dirs[Persistence], id, "cache-"+CacheName),
			filepath.Join(dirs[Persistence], id+".log"),
		} {
			if _, err := os.Stat(want); err != nil {
				t.Errorf("missing on the persistence tier: %v", err)
			}
		}
		for _, c := range []string{WAL, WALArchive} {
			if m, _ := filepath.Glob(filepath.Join(dirs[c], id, "*.wal")); len(m) == 0 {
				t.Errorf("no WAL segment under %s/%s", dirs[c], id)
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dirs[WAL], "*", "*.wal")); len(m) == 0 {
		t.Errorf("no WAL segments under %s", dirs[WAL])
	}
}

// TestDurabilityModes starts a one-node cluster in every mode and serves
// puts. Under async, wal_archive shares wal's tier: its folder stays empty
// and the segments pile up in the WAL folder (archiving off).
func TestDurabilityModes(t *testing.T) {
	needIgnite(t)
	for _, m := range (Engine{}).Spec().Modes {
		t.Run(string(m.Durability), func(t *testing.T) {
			dirs := tiers(t)
			sameTier := m.Durability == engine.Async
			if sameTier {
				dirs[WALArchive] = filepath.Join(filepath.Dir(dirs[WAL]), WALArchive)
				if err := os.Mkdir(dirs[WALArchive], 0o755); err != nil {
					t.Fatal(err)
				}
			}
			db, _ := open(t, m.Durability, dirs, map[string]string{optNodes: "1", optRegionSize: "67108864", optHeap: "268435456",
				optWALSegmentSize: "1048576", optWALArchiveSize: "16777216"})
			// Under async, 4 MiB of values first: several 1 MiB segments
			// whatever the machine's speed, which the driven window alone
			// does not guarantee on a busy machine.
			var preload int64
			if sameTier {
				preload = 4096
			}
			if _, err := drive(t, context.Background(), db, 2000, preload, 4,
				500*time.Millisecond, time.Second); err != nil {
				t.Fatal(err)
			}
			wals, _ := filepath.Glob(filepath.Join(dirs[WAL], "node0", "*.wal"))
			t.Logf("%d WAL segments", len(wals))
			_, cacheErr := os.Stat(filepath.Join(dirs[Persistence], "node0", "cache-"+CacheName))
			switch m.Durability {
			case engine.Memory:
				if len(wals) != 0 || cacheErr == nil {
					t.Errorf("memory mode wrote %d WAL segments (cache folder: %v)", len(wals), cacheErr)
				}
				return
			case engine.NoWAL:
			default:
				if len(wals) == 0 {
					t.Errorf("no WAL segments in %s", dirs[WAL])
				}
			}
			if cacheErr != nil {
				t.Errorf("no cache folder: %v", cacheErr)
			}
			if sameTier {
				if ents, _ := os.ReadDir(dirs[WALArchive]); len(ents) != 0 {
					t.Errorf("wal_archive folder on wal's tier has %d entries, want none (archiving off)", len(ents))
				}
				if len(wals) < 2 {
					t.Errorf("%d WAL segments in the WAL folder, want several (archiving off)", len(wals))
				}
			}
		})
	}
}

// TestStartFailure: a node that cannot start fails Open with its own words.
func TestStartFailure(t *testing.T) {
	needIgnite(t)
	dirs := tiers(t)
	// A file where the WAL folder should be.
	if err := os.Remove(dirs[WAL]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dirs[WAL], []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := &tracker{}
	_, err := Engine{}.Open(context.Background(), engine.Config{Dirs: dirs, Durability: engine.Sync,
		Options: Engine{}.Spec().MustResolveOptions(map[string]string{optNodes: "2"}), Track: tr.track})
	if err == nil {
		t.Fatal("Open succeeded with a file as the WAL folder")
	}
	t.Logf("Open failed as it should:\n%v", err)
	if !strings.Contains(err.Error(), "did not start") || !strings.Contains(err.Error(), "TIERBENCH FAILED") {
		t.Errorf("error does not name the node and carry its log's tail: %v", err)
	}
	if n := tr.count(); n != 0 {
		t.Errorf("%d pids still tracked after the failed Open", n)
	}
	// A value outside an option's range is refused where the Config is
	// built (engine.Spec.ResolveOptions), before any Open.
	if _, err := (Engine{}).Spec().ResolveOptions(map[string]string{optAtomicity: "eventual"}); err == nil || !strings.Contains(err.Error(), "atomic or transactional") {
		t.Errorf("bad atomicity: %v", err)
	}
}

// TestNodeDies: a node killed during a run makes Check fail with its log,
// and cancelling the run kills the client JVM.
func TestNodeDies(t *testing.T) {
	needIgnite(t)
	db, tr := open(t, engine.Async, tiers(t), map[string]string{optNodes: "2"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := drive(t, ctx, db, 1000, 0, 4, 0, time.Minute)
		done <- err
	}()
	// Wait until the client runs (tracked beside the nodes).
	deadline := time.Now().Add(30 * time.Second)
	for tr.count() <= db.Nodes() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if err := db.Check(); err != nil {
		t.Fatalf("Check before the kill: %v", err)
	}
	victim := db.nodes[1]
	if err := syscall.Kill(victim.proc.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		err = db.Check()
	}
	if err == nil || !strings.Contains(err.Error(), "node1") {
		t.Fatalf("Check after killing node1: %v", err)
	}
	t.Logf("Check: %v", err)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled run returned %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end 30 s after its context was cancelled")
	}
	if n := tr.count(); n != db.Nodes() {
		t.Errorf("%d pids tracked after the cancelled run, want %d (the nodes)", n, db.Nodes())
	}
	if err := db.Close(); err == nil || !strings.Contains(err.Error(), "node1") {
		t.Errorf("Close after a node died: %v", err)
	}
}

// TestHistogramEncoding checks that Java's HdrHistogram encoding decodes in
// Go (hist.Decode) with the same figures.
func TestHistogramEncoding(t *testing.T) {
	l, err := findLauncher()
	if err != nil {
		testenv.Skipf(t, "cannot run the launcher: %v", err)
	}
	out, err := exec.Command(l.java, l.args(128<<20, "histtest")...).Output()
	if err != nil {
		t.Fatal(err)
	}
	h, err := hist.Decode([]byte(strings.TrimSpace(string(out))))
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 1001 || h.LowestTrackableValue() != hist.LowestNs || h.HighestTrackableValue() != hist.HighestNs ||
		h.SignificantFigures() != hist.SigFigs {
		t.Fatalf("decoded %d values, geometry %d..%d/%d", h.TotalCount(), h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
	}
	if p50 := h.ValueAtQuantile(50); p50 < 499_500 || p50 > 501_500 {
		t.Errorf("p50 %d ns, want ~500 us", p50)
	}
	if max := h.Max(); max < hist.HighestNs*999/1000 {
		t.Errorf("max %d, want ~60 s", max)
	}
}
