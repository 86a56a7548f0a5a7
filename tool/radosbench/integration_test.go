package radosbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph/cephtest"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload/radosload"
)

// Tests of the real rados bench on a real single-OSD cluster (engine/ceph,
// tiny devices). The cluster takes about 10 s to start, so one serves
// every test.

// watch is a driver.LoadWatch that records what it is told.
type watch struct {
	mu      sync.Mutex
	started map[int]string // pid: the process's name in /proc when started
	exited  map[int]time.Duration
	begins  int
}

func newWatch() *watch { return &watch{started: map[int]string{}, exited: map[int]time.Duration{}} }

func (w *watch) Started(name string, pid int) {
	comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started[pid] = name + "/" + strings.TrimSpace(string(comm))
}

func (w *watch) Exited(pid int, cpu time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.exited[pid] = cpu
}

func (w *watch) Begin() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.begins++
}

// check fails t unless every process started was a rados bench, has
// exited and is gone, and there were benches of each phase.
func (w *watch) check(t *testing.T, benches, begins int) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.started) < benches || w.begins != begins {
		t.Errorf("load watch: %d processes started, Begin %d times; want at least %d and %d", len(w.started), w.begins, benches, begins)
	}
	for pid, what := range w.started {
		if what != Name+"/rados" {
			t.Errorf("load watch: process %d is %q, want %s/rados", pid, what, Name)
		}
		if _, ok := w.exited[pid]; !ok {
			t.Errorf("load watch: process %d never exited", pid)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("rados process %d is still there (%v)", pid, err)
		}
	}
}

// adminKey reads the key from the cluster's keyring, which no command line
// may show.
func adminKey(t *testing.T, keyring string) string {
	t.Helper()
	b, err := os.ReadFile(keyring)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`key\s*=\s*(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no key in %s", keyring)
	}
	return string(m[1])
}

func newDriver(t *testing.T, db engine.DB, params map[string]string) *Driver {
	t.Helper()
	w, err := radosload.Spec().Build(params)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Load(context.Background(), db, 2); err != nil {
		t.Fatal(err)
	}
	ext, err := New(tool.Request{Engine: Engine, WorkloadName: radosload.Name, Workload: w, DB: db, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return ext.(*Driver)
}

// TestDriveOnCeph runs rados bench in each mode with 2 clients: write for
// 1 s of warmup and 3 s measured, then rand for 2 s over 50 objects, and
// checks that the figures land, the load watch got every rados process,
// and the cluster's key was on no command line; then that seq over too
// few objects says how many it needs, and that a cancelled bench leaves
// nothing.
func TestDriveOnCeph(t *testing.T) {
	db := cephtest.Open(t, "rados")
	key := adminKey(t, db.(engine.Objects).Rados().Keyring)
	for _, c := range []struct {
		mode           string
		warmup, window time.Duration
		objects        string
		benches        int // at least
		begins         int
	}{
		{"write", time.Second, 3 * time.Second, "", 2, 0},
		{"rand", 0, 2 * time.Second, "50", 2, 1},
		// 50 objects take a fraction of a second to read: seq says how many it needs.
		{"seq", 0, 2 * time.Second, "50", 2, 1},
	} {
		t.Run(c.mode, func(t *testing.T) {
			params := map[string]string{"mode": c.mode, "object_size": "4KiB"}
			if c.objects != "" {
				params["objects"] = c.objects
			}
			d := newDriver(t, db, params)
			w := newWatch()
			d.WatchLoad(w)
			var (
				mu    sync.Mutex
				ticks int
			)
			cfg := driver.Config{Ops: []string{d.Settings.Op()}, Warmup: c.warmup, Duration: c.window,
				OnTick: func(driver.Interval) { mu.Lock(); ticks++; mu.Unlock() }}
			stop := enginetest.WatchSecret(t, key, "--run-name")
			res, err := d.Drive(context.Background(), cfg, 2)
			stop()
			w.check(t, c.benches, c.begins)
			if c.mode == "seq" {
				if err == nil || !strings.Contains(err.Error(), "seq read all 50 objects of the write pass in") ||
					!strings.Contains(err.Error(), "set the workload's objects to at least") {
					t.Fatalf("seq over 50 objects: %v, want the objects it needs", err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := res.Measured
			t.Logf("%s: warmup %d ops in %v; measured %d ops in %v: %.0f ops/s, mean %v, max %v; %d intervals, %d ticks",
				c.mode, res.Warmup.Ops, res.Warmup.Length, m.Ops, m.Length, m.Throughput(),
				time.Duration(m.ByOp[0].Latency.Mean()), time.Duration(m.ByOp[0].Latency.Max()), len(res.Intervals), ticks)
			if m.Ops <= 0 || m.Errors != 0 || m.Length <= 0 || m.ByOp[0].Name != d.Settings.Op() || m.ByOp[0].Latency.TotalCount() != m.Ops {
				t.Errorf("measured %+v, want ops of %s and no errors", m, d.Settings.Op())
			}
			if (c.warmup > 0) != (res.Warmup.Ops > 0) {
				t.Errorf("warmup: %d ops with a warmup of %v", res.Warmup.Ops, c.warmup)
			}
			log, err := os.ReadFile(filepath.Join(d.Dir, "rados-bench.log"))
			if err != nil || !strings.Contains(string(log), "Total time run") || strings.Contains(string(log), key) {
				t.Errorf("rados-bench.log: want every bench's output and no key (read error %v)", err)
			}
		})
	}
	// A long bench cancelled: Drive returns at once with ctx's error and
	// no rados process is left.
	t.Run("cancel", func(t *testing.T) {
		d := newDriver(t, db, nil)
		w := newWatch()
		d.WatchLoad(w)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(1500*time.Millisecond, cancel)
		_, err := d.Drive(ctx, driver.Config{Duration: time.Minute}, 2)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Drive after cancel: %v, want context.Canceled", err)
		}
		w.check(t, 1, 0)
	})
}
