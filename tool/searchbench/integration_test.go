package searchbench_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/engine/search/searchtest"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/tool/searchbench"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/searchload"
)

// Tests with the real tools on real nodes: a node takes 30-70 s to start
// here and a tool 10-30 s, so each tool runs once.

// TestMain removes the nodes' shared test folder after the tests.
func TestMain(m *testing.M) { enginetest.Main(m, "searchbench") }

// openNode starts a small node of the bench's engine, closed when the
// test ends; it skips unless the node and the tool can run here.
func openNode(t *testing.T, b searchbench.Bench) engine.DB {
	t.Helper()
	if err := b.Preflight(); err != nil {
		testenv.Skip(t, err)
	}
	e, ok := catalog.Default().Engine(b.Engine)
	if !ok {
		t.Fatalf("no engine %s", b.Engine)
	}
	return searchtest.Open(t, e)
}

// loaded makes and loads workload name on db and returns the tool request.
func loaded(t *testing.T, b searchbench.Bench, db engine.DB, name string, params map[string]string) tool.Request {
	t.Helper()
	spec, ok := catalog.Default().Workload(name)
	if !ok {
		t.Fatalf("no workload %s", name)
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
	return tool.Request{Engine: b.Engine, WorkloadName: name, Workload: w, Params: v, DB: db, Dir: t.TempDir()}
}

// noToolLeft fails t if a process of the tool is left.
func noToolLeft(t *testing.T, program string) {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmd), filepath.Dir(program)) {
			t.Errorf("process %s outlived the tool: %s", e.Name(), strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
}

// TestDrive runs each tool once on its engine's node: osb with ingest on
// OpenSearch, rally with ingest-search on Elasticsearch 6.8, 2 clients, a
// 2 s warmup and 5 s measured. Each run lands in the schema: its ops by
// the workload's names, bulk throughput, latency histograms, no errors,
// and the workload's Verify holds the documents the tool indexed.
func TestDrive(t *testing.T) {
	for _, tc := range []struct {
		bench    searchbench.Bench
		workload string
		params   map[string]string
		cancel   bool // first a run cancelled in its measured window
	}{
		{searchbench.OSB, searchload.Ingest, map[string]string{"bulk_size": "200", "seed": "7"}, true},
		{searchbench.Rally, searchload.IngestSearch, map[string]string{"bulk_size": "200", "docs": "2000", "seed": "7"}, false},
	} {
		t.Run(tc.bench.Name, func(t *testing.T) {
			db := openNode(t, tc.bench)
			req := loaded(t, tc.bench, db, tc.workload, tc.params)
			ext, err := tc.bench.New(req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cancel {
				cancelled(t, ext, req.Workload.Ops())
			}
			watch := &loadWatch{}
			ext.(driver.LoadReporter).WatchLoad(watch)
			var ticks int
			cfg := driver.Config{Ops: req.Workload.Ops(), Warmup: 2 * time.Second, Duration: 5 * time.Second,
				OnTick: func(driver.Interval) { ticks++ }}
			start := time.Now()
			res, err := ext.Drive(context.Background(), cfg, 2)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s ran %v: measured %d ops, %d errors in %v", tc.bench.Name, time.Since(start), res.Measured.Ops, res.Measured.Errors, res.Measured.Length)
			noToolLeft(t, ext.(*searchbench.Driver).Program)
			if res.Measured.Errors != 0 || res.FirstError != nil {
				t.Errorf("errors: %d, %v", res.Measured.Errors, res.FirstError)
			}
			if res.Measured.Length != 5*time.Second || res.Warmup.Length != 2*time.Second {
				t.Errorf("measured %v, warmup %v", res.Measured.Length, res.Warmup.Length)
			}
			byOp := map[string]driver.OpResult{}
			for _, o := range res.Measured.ByOp {
				byOp[o.Name] = o
				if o.Ops > 0 && o.Latency.TotalCount() != o.Ops {
					t.Errorf("%s: %d ops, histogram of %d", o.Name, o.Ops, o.Latency.TotalCount())
				}
				t.Logf("%s: %d ops, p50 %v, p99 %v", o.Name, o.Ops, time.Duration(o.Latency.ValueAtQuantile(50)), time.Duration(o.Latency.ValueAtQuantile(99)))
			}
			for _, op := range req.Workload.Ops() {
				if byOp[op].Ops <= 0 {
					t.Errorf("op %s: no requests in the measured window: %+v", op, byOp[op])
				}
			}
			if ticks != 1 || len(res.Intervals) != 1 {
				t.Errorf("%d ticks, %d intervals", ticks, len(res.Intervals))
			}
			if watch.started < 2 || watch.cpu <= 0 || watch.begun != 1 {
				out, _ := os.ReadFile(filepath.Join(req.Dir, tc.bench.Name+".log"))
				t.Errorf("load watch: %d processes, %v CPU, warmup began %d times (want 1); the tool's output:\n%s", watch.started, watch.cpu, watch.begun, out)
			}
			capture(t, req.Dir, tc.bench.Name+"-"+tc.workload+".csv")
			checked, err := req.Workload.(workload.Verifier).Verify(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(checked)
		})
	}
}

// cancelled checks that cancelling a run stops the tool at once and
// leaves none of its processes, its actors included.
func cancelled(t *testing.T, ext driver.External, ops []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := ext.Drive(ctx, driver.Config{Ops: ops, Duration: 2 * time.Minute}, 2)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled run: %v", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("cancelled run returned after %v", took)
	}
	noToolLeft(t, ext.(*searchbench.Driver).Program)
}

// loadWatch counts the tool's processes and their CPU.
type loadWatch struct {
	started, begun int
	cpu            time.Duration
}

func (w *loadWatch) Started(string, int)             { w.started++ }
func (w *loadWatch) Exited(_ int, cpu time.Duration) { w.cpu += cpu }
func (w *loadWatch) Begin()                          { w.begun++ }

// capture refreshes the parser's testdata: with
// TIERBENCH_SEARCHBENCH_CAPTURE set to a folder, it copies the run's CSV
// summary there as name.
func capture(t *testing.T, dir, name string) {
	out := os.Getenv("TIERBENCH_SEARCHBENCH_CAPTURE")
	if out == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
