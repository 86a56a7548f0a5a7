package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/testenv"
)

// hdrStudy is two runs of a second's warmup and 3 s measured.
const hdrStudy = `name: hdr-export
engine: pebble
tiers:
  ram:  {path: %q}
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
baseline: all-disk
durability: [sync]
workload: {name: ycsb-a, records: 2000}
clients: [2]
warmup: 1s
duration: 3s
options: {cache: 8MiB}
`

// hdrJar is HdrHistogram's Java jar, which scripts/setup.sh fetches from
// Maven Central; TIERBENCH_HDR_JAR names another.
func hdrJar() string {
	if p := os.Getenv("TIERBENCH_HDR_JAR"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar")
}

// TestExportHdrReadByHdrHistogram runs a pebble study, exports its runs
// with export --hdr, reads each log back with hdrhistogram-go's reader
// (the measured lines hold the run's operations, the warmup's are tagged)
// and, where java and HdrHistogram's jar are here, has HdrHistogram's own
// HistogramLogProcessor read them: its p50 and p99 of the measured window
// are tierbench's for the run, up to one operation's rank (the two
// libraries round a percentile's rank apart).
func TestExportHdrReadByHdrHistogram(t *testing.T) {
	work := t.TempDir()
	ram, disk := ramDir(t), filepath.Join(work, "disk")
	st := writeStudy(t, work, fmt.Sprintf(hdrStudy, ram, disk))
	resultsDir, out := filepath.Join(work, "results"), filepath.Join(work, "hdr", "logs")
	env := []string{"TIERBENCH_STATE_DIR=" + filepath.Join(work, "state")}
	if r := tierbenchEnv(t, work, env, "run", st, "--results", resultsDir); r.code != 0 {
		t.Fatalf("run exit %d:\n%s", r.code, r.stderr)
	}
	r := tierbenchEnv(t, work, env, "export", "latest", "--results", resultsDir, "--hdr", out)
	if r.code != 0 {
		t.Fatalf("export exit %d:\n%s", r.code, r.stderr)
	}
	t.Logf("export --hdr:\n%s", r.stdout)

	store, err := results.OpenExisting(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	stored, err := store.Study(ctx, "latest")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := store.Runs(ctx, stored.ID)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %d, %v", len(runs), err)
	}
	checkExportedLogs(t, store, runs, out, r.stdout)
}

// pgbenchStudy is one run of PostgreSQL driven by pgbench: a second's
// warmup and 3 s measured.
const pgbenchStudy = `name: hdr-pgbench
engine: postgres
tiers:
  disk: {path: %q}
placements:
  p: {data: disk, wal: disk}
baseline: p
durability: [async]
driver: [pgbench]
workload: {name: tpcb, scale: 1}
clients: [2]
warmup: 1s
duration: 3s
probe: off
`

// TestExportHdrOfPgbenchRun runs real pgbench against a real PostgreSQL:
// its run keeps a latency histogram per second, built from pgbench's
// transaction log, which export --hdr writes as an interval log that
// hdrhistogram-go and HdrHistogram's HistogramLogProcessor read as the
// run's figures.
func TestExportHdrOfPgbenchRun(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "PostgreSQL runs as user postgres, which needs root")
	}
	if _, err := exec.LookPath("pgbench"); err != nil {
		testenv.Skipf(t, "pgbench not installed")
	}
	work := serverWork(t, "tierbench-hdr-pgbench-")
	st := writeStudy(t, work, fmt.Sprintf(pgbenchStudy, filepath.Join(work, "disk")))
	resultsDir, out := filepath.Join(work, "results"), filepath.Join(work, "hdr")
	env := []string{"TIERBENCH_STATE_DIR=" + filepath.Join(work, "state")}
	if r := tierbenchEnv(t, work, env, "run", st, "--results", resultsDir); r.code != 0 {
		t.Fatalf("run exit %d:\n%s", r.code, r.stderr)
	}
	r := tierbenchEnv(t, work, env, "export", "latest", "--results", resultsDir, "--hdr", out)
	if r.code != 0 {
		t.Fatalf("export exit %d:\n%s", r.code, r.stderr)
	}
	t.Logf("export --hdr:\n%s", r.stdout)
	store, err := results.OpenExisting(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	stored, err := store.Study(context.Background(), "latest")
	if err != nil {
		t.Fatal(err)
	}
	runs, err := store.Runs(context.Background(), stored.ID)
	if err != nil || len(runs) != 1 || runs[0].DriverOf() != "pgbench" || runs[0].Status != results.RunOK {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	checkExportedLogs(t, store, runs, out, r.stdout)
}

// checkExportedLogs checks each run's interval log in out: export's
// output names it, its measured lines hold the run's operations and its
// warmup lines the warmup's, and, where java and HdrHistogram's jar are
// here, HdrHistogram's own HistogramLogProcessor finds the run's p50 and
// p99 in it, up to one operation's rank (the two libraries round a
// percentile's rank apart).
func checkExportedLogs(t *testing.T, store *results.Store, runs []results.Run, out, stdout string) {
	t.Helper()
	ctx := context.Background()
	java, javaErr := exec.LookPath("java")
	_, jarErr := os.Stat(hdrJar())
	for _, run := range runs {
		path := filepath.Join(out, run.ID+".hlog")
		if !strings.Contains(stdout, path+": ") {
			t.Errorf("export's output does not name %s:\n%s", path, stdout)
		}
		measured, warmup := readLog(t, path)
		wantWarmup, err := store.Histogram(ctx, run.ID, results.OpAll, results.KindLatency, "warmup")
		if err != nil {
			t.Fatal(err)
		}
		if measured.TotalCount() != run.Ops || warmup.TotalCount() != wantWarmup.TotalCount() {
			t.Errorf("%s: the log's measured lines hold %d values and its warmup lines %d; the run has %d ops and %d in warmup",
				path, measured.TotalCount(), warmup.TotalCount(), run.Ops, wantWarmup.TotalCount())
		}
		if javaErr != nil || jarErr != nil {
			continue
		}
		got := processorTotals(t, java, path)
		h, err := store.Histogram(ctx, run.ID, results.OpAll, results.KindLatency, "measured")
		if err != nil {
			t.Fatal(err)
		}
		for q, java := range got {
			// One rank either side of the quantile, in µs, and 0.001 µs
			// for the processor's printing.
			step := 100 / float64(h.TotalCount())
			lo, hi := float64(h.ValueAtQuantile(q-step))/1e3-0.001, float64(h.ValueAtQuantile(q+step))/1e3+0.001
			ours := float64(h.ValueAtQuantile(q)) / 1e3
			t.Logf("%s p%v: HistogramLogProcessor %.3f µs, tierbench %.3f µs", run.ID, q, java, ours)
			if java < lo || java > hi {
				t.Errorf("%s p%v: HistogramLogProcessor says %.3f µs, tierbench %.3f µs (one rank away: %.3f to %.3f)", run.ID, q, java, ours, lo, hi)
			}
		}
		if q := run.Latency.P99; q != float64(h.ValueAtQuantile(99))/1e3 {
			t.Errorf("%s: the run's p99 %v µs is not its stored histogram's", run.ID, q)
		}
	}
	if javaErr != nil || jarErr != nil {
		testenv.Skipf(t, "HdrHistogram's HistogramLogProcessor not run: java %v, jar %s: %v (scripts/setup.sh fetches it)", javaErr, hdrJar(), jarErr)
	}
}

// readLog reads an interval log with hdrhistogram-go's reader: the merge
// of its untagged lines and of its lines tagged warmup.
func readLog(t *testing.T, path string) (measured, warmup *hdr.Histogram) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	measured, warmup = hist.New(), hist.New()
	rd := hdr.NewHistogramLogReader(f)
	for {
		h, err := rd.NextIntervalHistogram()
		if h == nil || errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch h.Tag() {
		case "":
			measured.Merge(h)
		case "warmup":
			warmup.Merge(h)
		default:
			t.Errorf("%s: a line tagged %q", path, h.Tag())
		}
	}
	return measured, warmup
}

// processorTotals runs HdrHistogram's HistogramLogProcessor on an interval
// log (its default: the untagged lines), in µs, and returns its last
// line's totals: p50 and p99 over every interval.
func processorTotals(t *testing.T, java, log string) map[float64]float64 {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "processed")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-cp", hdrJar(), "org.HdrHistogram.HistogramLogProcessor", "-i", log, "-o", prefix, "-outputValueUnitRatio", "1000")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("HistogramLogProcessor: %v\n%s", err, b)
	}
	b, err := os.ReadFile(prefix)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// "4.824: I:3180 ( ... ) T:11828 ( 154.367 1318.911 5464.063 13025.279 30900.223 33259.519 )"
	m := regexp.MustCompile(`T:\d+ \(\s*([\d.]+)\s+[\d.]+\s+([\d.]+)\s`).FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("HistogramLogProcessor's output has no totals:\n%s", b)
	}
	t.Logf("HistogramLogProcessor on %s:\n%s", filepath.Base(log), b)
	p50, _ := strconv.ParseFloat(m[1], 64)
	p99, _ := strconv.ParseFloat(m[2], 64)
	return map[float64]float64{50: p50, 99: p99}
}

// TestExportHdrRefusals: export without --hdr, onto a file, of a study
// whose runs kept no latency per interval (stored before), or of no study,
// exits with the documented code, one line, and writes nothing.
func TestExportHdrRefusals(t *testing.T) {
	work := t.TempDir()
	resultsDir := filepath.Join(work, "results")
	store, err := results.Open(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	old := &results.Study{ID: "20251128-100000-aaaaaa", Name: "old", Engine: "pebble", Workload: "ycsb-a", Status: results.StudyDone, StartedAt: time.Now()}
	if err := store.PutStudy(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	if err := store.AddRun(context.Background(), &results.Run{ID: old.ID + "-001", StudyID: old.ID, Seq: 1, Placement: "p", Durability: "sync",
		Clients: 1, Repeat: 1, Status: results.RunOK, Ops: 10}, nil); err != nil {
		t.Fatal(err)
	}
	store.Close()
	file := filepath.Join(work, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "out")
	in := []string{"--results", resultsDir}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no --hdr", append([]string{"export", old.ID}, in...), exitBadInput, "say what to write: --format csv (one table: --what runs, groups, comparisons or events), --format json, or --hdr DIR"},
		{"an empty --hdr", append([]string{"export", old.ID, "--hdr="}, in...), exitBadInput, "--hdr needs a folder"},
		{"onto a file", append([]string{"export", old.ID, "--hdr", filepath.Join(file, "logs")}, in...), exitBadInput, "is below a file, not a folder; give a folder you can write"},
		{"no interval kept", append([]string{"export", old.ID, "--hdr", out}, in...), exitNothingStored, "study 20251128-100000-aaaaaa has no run with latency per interval to export, nothing was written: stored before tierbench kept latency per interval, or driven by the engine's own client (Ignite's), which reports none (20251128-100000-aaaaaa-001)"},
		{"no such study", append([]string{"export", "nosuch", "--hdr", out}, in...), exitNothingStored, `study "nosuch" not found`},
		{"no store", []string{"export", "--results", filepath.Join(work, "none"), "--hdr", out}, exitNothingStored, "no results in"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := tierbenchEnv(t, work, nil, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("exit %d, want %d and one line with %q:\n%s", r.code, c.code, c.want, r.stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused export made %s", out)
			}
		})
	}
}

// TestNoIntervalsWhy: export --hdr says why each run it skips has no
// latency per interval, by what drove it.
func TestNoIntervalsWhy(t *testing.T) {
	tl := []results.Interval{{T: 1, Length: 1}}
	for _, c := range []struct {
		name     string
		platform string
		run      results.Run
		want     string
	}{
		{"failed early", "", results.Run{Status: results.RunFailed}, "it failed before its timeline began"},
		{"sysbench", "", results.Run{Status: results.RunOK, Driver: "sysbench", Timeline: tl}, "sysbench reports one latency percentile per interval"},
		{"an old pgbench run", "", results.Run{Status: results.RunOK, Driver: "pgbench", Timeline: tl}, "stored before tierbench built pgbench's histograms"},
		{"rados bench", "", results.Run{Status: results.RunOK, Driver: "radosbench", Timeline: tl}, "driver radosbench reports no latency histogram per interval"},
		{"an old builtin run", "", results.Run{Status: results.RunOK, Timeline: tl}, "stored before tierbench kept latency per interval"},
		{"on a cluster", "kind-kind/default", results.Run{Status: results.RunOK, Timeline: tl}, "it ran on a cluster"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := noIntervalsWhy(&results.Study{Platform: c.platform}, c.run); !strings.HasPrefix(got, c.want) {
				t.Errorf("got %q, want it to start %q", got, c.want)
			}
		})
	}
}
