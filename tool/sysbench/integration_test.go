package sysbench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/oltp"
)

const tableSize = 2000

func needSysbench(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sysbench"); err != nil {
		testenv.Skip(t, "sysbench is not installed (apt-get install sysbench)")
	}
}

// loaded loads workloadName with tierbench's Go workload on db and returns
// the tool request for it.
func loaded(t *testing.T, name string, db engine.DB, workloadName string, params map[string]string) tool.Request {
	t.Helper()
	var spec workload.Spec
	for _, s := range oltp.Specs() {
		if s.Name == workloadName {
			spec = s
		}
	}
	v, err := spec.Resolve(params)
	if err != nil {
		t.Fatal(err)
	}
	w, err := spec.BuildFrom(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Load(context.Background(), db, 2); err != nil {
		t.Fatal(err)
	}
	return tool.Request{Engine: name, WorkloadName: workloadName, Workload: w, Params: v, DB: db, Dir: t.TempDir()}
}

// TestDrive runs the real sysbench on the data tierbench's oltp workload
// loaded: 2 clients, 1 s warmup, 2 s measured.
func TestDrive(t *testing.T) {
	needSysbench(t)
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		req := loaded(t, name, db, oltp.ReadWrite, map[string]string{"table_size": "2000"})
		ext, err := New(req)
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			ticks []driver.Interval
		)
		cfg := driver.Config{Ops: []string{oltp.OpTransaction}, Warmup: time.Second, Duration: 2 * time.Second,
			OnTick: func(iv driver.Interval) { mu.Lock(); ticks = append(ticks, iv); mu.Unlock() }}
		password := ext.(*Driver).Endpoint.Password
		if password == "" {
			t.Fatalf("%s's endpoint has no password", name)
		}
		stop := enginetest.WatchSecret(t, password, "--report-interval")
		start := time.Now()
		res, err := ext.Drive(context.Background(), cfg, 2)
		stop()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: sysbench ran %v; warmup %d transactions in %v, measured %d (%d errors) in %v: %.0f tps; %d intervals",
			name, time.Since(start), res.Warmup.Ops, res.Warmup.Length, res.Measured.Ops, res.Measured.Errors, res.Measured.Length,
			res.Measured.Throughput(), len(res.Intervals))
		m := res.Measured
		if m.Ops <= 0 || len(m.ByOp) != 1 || m.ByOp[0].Name != oltp.OpTransaction || m.ByOp[0].Ops != m.Ops {
			t.Fatalf("measured %+v", m)
		}
		// The histogram and the per-second reports may differ by the
		// transactions each client had in flight at the window's edges
		// (two each, at most), which at a few dozen tps on a loaded
		// machine is more than 1%.
		slack := max(m.Ops/100, 2*2)
		if h := m.ByOp[0].Latency; h.TotalCount() == 0 || h.TotalCount() < m.Ops-slack || h.TotalCount() > m.Ops+slack {
			t.Errorf("histogram holds %d transactions, measured %d (within %d)", h.TotalCount(), m.Ops, slack)
		} else {
			t.Logf("%s: p50 %v, p99 %v", name, time.Duration(h.ValueAtQuantile(50)), time.Duration(h.ValueAtQuantile(99)))
		}
		if m.Length < 1500*time.Millisecond || m.Length > 4*time.Second {
			t.Errorf("measured length %v, want about 2 s", m.Length)
		}
		// The warmup may commit nothing: two clients of oltp read-write can
		// deadlock, and PostgreSQL breaks the tie after deadlock_timeout (1 s),
		// which a loaded machine can place inside the whole warmup.
		if res.Warmup.Ops < 0 || res.Warmup.Length < 900*time.Millisecond || res.Warmup.Length > 1500*time.Millisecond {
			t.Errorf("warmup %+v", res.Warmup)
		}
		if len(res.Intervals) < 2 || res.Intervals[0].Phase != driver.Warmup || res.Intervals[len(res.Intervals)-1].Phase != driver.Measured {
			t.Errorf("intervals %+v", res.Intervals)
		}
		mu.Lock()
		if len(ticks) != len(res.Intervals) {
			t.Errorf("%d ticks, %d intervals", len(ticks), len(res.Intervals))
		}
		mu.Unlock()
		// sysbench's delete+insert keeps every id.
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM sbtest1"); got != tableSize {
			t.Errorf("sbtest1 has %d rows after sysbench, want %d", got, tableSize)
		}
		if b, err := os.ReadFile(filepath.Join(req.Dir, "sysbench.log")); err != nil || !strings.Contains(string(b), "SQL statistics:") {
			t.Errorf("log: %v", err)
		}
		if _, err := os.Stat(filepath.Join(req.Dir, "sysbench-options")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the options file with the password is left: %v", err)
		}
	})
}

// TestDriveFailures: a cancelled run stops sysbench at once; a sysbench that
// fails says why; a missing binary says how to install it.
func TestDriveFailures(t *testing.T) {
	needSysbench(t)
	e := enginetest.SQLEngines(t)[1] // mariadb: its client has a password
	db := enginetest.Open(t, e)
	req := loaded(t, e.Name, db, oltp.WriteOnly, map[string]string{"table_size": "2000"})
	ext, err := New(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := ext.Drive(ctx, driver.Config{Ops: []string{oltp.OpTransaction}, Duration: time.Minute}, 2)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled run: %v", err)
	}
	if took := time.Since(start); took >= time.Minute {
		t.Errorf("cancelled run returned after %v: it ran its whole duration", took)
	}
	if res == nil || len(res.Intervals) == 0 || len(res.Measured.ByOp) != 1 || res.Measured.ByOp[0].Latency == nil {
		t.Errorf("cancelled run's result %+v", res)
	}

	// The wrong password: sysbench's FATAL lines in the error.
	d := *ext.(*Driver)
	d.Endpoint.Password = "wrong"
	_, err = d.Drive(context.Background(), driver.Config{Ops: []string{oltp.OpTransaction}, Duration: time.Second}, 1)
	if err == nil || !strings.Contains(err.Error(), "Access denied") || strings.Contains(err.Error(), "=wrong") {
		t.Errorf("wrong password: %v", err)
	}
	t.Logf("wrong password: %v", err)

	if _, err := d.Drive(context.Background(), driver.Config{Ops: []string{oltp.OpTransaction}, Duration: time.Second, TargetRate: 100}, 1); err == nil ||
		!strings.Contains(err.Error(), "closed loop") {
		t.Errorf("open loop: %v", err)
	}

	t.Setenv("PATH", t.TempDir())
	if _, err := New(req); err == nil || !strings.Contains(err.Error(), "install sysbench (apt-get install sysbench)") || !errors.Is(err, proc.ErrNotInstalled) {
		t.Errorf("no sysbench: %v", err)
	}
	if _, err := New(tool.Request{Engine: "pebble", WorkloadName: oltp.ReadWrite}); err == nil || !strings.Contains(err.Error(), "not engine pebble") {
		t.Errorf("pebble: %v", err)
	}
}

// TestCapture refreshes sysbench output for the parser tests: with
// TIERBENCH_SYSBENCH_CAPTURE set to a folder, it writes there the output of
// sysbench runs on each engine (a 2 s run after a 1 s warmup, 2 clients),
// named <engine>-<workload>.txt. Nothing runs without it.
func TestCapture(t *testing.T) {
	out := os.Getenv("TIERBENCH_SYSBENCH_CAPTURE")
	if out == "" {
		t.Skip("set TIERBENCH_SYSBENCH_CAPTURE=<folder> to capture sysbench output")
	}
	needSysbench(t)
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		for _, wname := range []string{oltp.ReadWrite, oltp.WriteOnly} {
			req := loaded(t, name, db, wname, map[string]string{"table_size": "2000"})
			ext, err := New(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ext.Drive(context.Background(), driver.Config{Ops: []string{oltp.OpTransaction}, Warmup: time.Second, Duration: 2 * time.Second}, 2); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(req.Dir, "sysbench.log"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, name+"-"+wname+".txt"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}
