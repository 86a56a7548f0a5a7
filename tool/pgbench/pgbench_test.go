package pgbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload/tpcb"
)

func TestMain(m *testing.M) { enginetest.Main(m, "pgbench") }

func TestParseLogLine(t *testing.T) {
	for _, c := range []struct {
		line    string
		want    Entry
		wantErr bool
	}{
		{"0 199 2241 0 1700000000 123456", Entry{End: 1700000000_123456, Latency: 2241}, false},
		{"3 12 1510 0 1700000001 5 0", Entry{End: 1700000001_000005, Latency: 1510}, false},
		{"1 7 failed 0 1700000002 42", Entry{End: 1700000002_000042, Failed: true}, false},
		{"1 7 serialization 0 1700000002 42 0 1", Entry{End: 1700000002_000042, Failed: true}, false},
		{"garbage", Entry{}, true},
		{"0 1 2 0 x 5", Entry{}, true},
	} {
		got, err := ParseLogLine(c.line)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParseLogLine(%q) = %+v, %v; want %+v, error %v", c.line, got, err, c.want, c.wantErr)
		}
	}
}

func TestParseProgress(t *testing.T) {
	for _, c := range []struct {
		line   string
		ok     bool
		ops    int64
		phase  driver.Phase
		meanMs float64
	}{
		{"progress: 1.0 s, 1234.5 tps, lat 3.236 ms stddev 1.064, 0 failed", true, 1235, driver.Warmup, 3.236},
		{"progress: 3.0 s, 900.0 tps, lat 1.000 ms stddev 0.100", true, 900, driver.Measured, 1},
		{"pgbench (15.18)", false, 0, "", 0},
		{"progress: x s", false, 0, "", 0},
	} {
		iv, ok := ParseProgress(c.line, 2*time.Second)
		if ok != c.ok {
			t.Errorf("ParseProgress(%q) ok = %v", c.line, ok)
			continue
		}
		if !ok {
			continue
		}
		if iv.Ops != c.ops || iv.Phase != c.phase || iv.P50 != time.Duration(c.meanMs*float64(time.Millisecond)) {
			t.Errorf("ParseProgress(%q) = %+v", c.line, iv)
		}
	}
}

// TestSummarize checks the split at the warmup boundary by completion time,
// the exclusion of transactions after the window, and per-second intervals.
func TestSummarize(t *testing.T) {
	const epoch = int64(1_700_000_000_000_000)
	us := func(sec float64) int64 { return epoch + int64(sec*1e6) }
	entries := []Entry{
		{End: us(0.001), Latency: 1000}, // t0 = epoch
		{End: us(0.5), Latency: 2000},
		{End: us(1.2), Latency: 3000},   // measured (warmup 1 s)
		{End: us(1.9), Failed: true},    // measured error
		{End: us(2.5), Latency: 4000},   // measured, second 2
		{End: us(3.5), Latency: 100000}, // after warmup+duration: dropped
	}
	res := Summarize(entries, time.Second, 2*time.Second)
	if res.Warmup.Ops != 2 || res.Measured.Ops != 2 || res.Measured.Errors != 1 {
		t.Fatalf("warmup %d ops, measured %d ops %d errors; want 2, 2, 1", res.Warmup.Ops, res.Measured.Ops, res.Measured.Errors)
	}
	if got := res.Measured.ByOp[0].Latency.Max(); got > 4100_000 {
		t.Errorf("measured max %d ns includes the dropped transaction", got)
	}
	if res.Measured.ByOp[0].Name != tpcb.OpTPCB {
		t.Errorf("op %q, want %q", res.Measured.ByOp[0].Name, tpcb.OpTPCB)
	}
	if len(res.Intervals) != 3 || res.Intervals[0].Phase != driver.Warmup || res.Intervals[1].Phase != driver.Measured ||
		res.Intervals[1].Errors != 1 || res.Intervals[2].Ops != 1 {
		t.Errorf("intervals %+v", res.Intervals)
	}
	if l := res.Measured.Length; l < 1400*time.Millisecond || l > 2*time.Second {
		t.Errorf("measured length %v", l)
	}
	if !res.Began.Equal(time.UnixMicro(epoch)) {
		t.Errorf("began %v, want the first transaction's start %v", res.Began, time.UnixMicro(epoch))
	}
	checkIntervalHists(t, res)

	// A second in which nothing completed is on the timeline at 0 ops.
	gap := Summarize([]Entry{{End: us(0.2), Latency: 1000}, {End: us(2.2), Latency: 1000}}, 0, 3*time.Second)
	if len(gap.Intervals) != 3 || gap.Intervals[1].Index != 1 || gap.Intervals[1].Ops != 0 || gap.Intervals[2].Ops != 1 {
		t.Errorf("intervals around a stall: %+v", gap.Intervals)
	}
	checkIntervalHists(t, gap)
}

// checkIntervalHists checks that each interval of res keeps its latency
// histogram, of as many transactions as it counts, and that the measured
// intervals' add up to the measured window's (warmup a whole second).
func checkIntervalHists(t *testing.T, res *driver.Result) {
	t.Helper()
	var measured int64
	for _, iv := range res.Intervals {
		h, err := hist.Decode(iv.Latency)
		if err != nil || h.TotalCount() != iv.Ops {
			t.Errorf("interval %d: %d ops, its histogram %v (%v)", iv.Index, iv.Ops, h, err)
			continue
		}
		if iv.Phase == driver.Measured {
			measured += h.TotalCount()
		}
	}
	if measured != res.Measured.Ops {
		t.Errorf("the measured intervals' histograms hold %d transactions, the window %d", measured, res.Measured.Ops)
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		engine, workload string
		ok               bool
	}{{"postgres", "tpcb", true}, {"mariadb", "tpcb", false}, {"postgres", "ycsb-a", false}} {
		if err := check(c.engine, c.workload); (err == nil) != c.ok {
			t.Errorf("check(%s, %s) = %v", c.engine, c.workload, err)
		}
	}
}

// TestDrive runs real pgbench against a real server on data tierbench's
// tpcb workload loaded.
func TestDrive(t *testing.T) {
	e := enginetest.SQLEngines(t)[0]
	db := enginetest.Open(t, e)
	w, err := tpcb.Spec().Build(map[string]string{"scale": "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := w.Load(ctx, db, 2); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ext, err := Tool().New(tool.Request{Engine: e.Name, WorkloadName: "tpcb", Workload: w, DB: db, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ticks := 0
	ep := db.(engine.Served).Endpoint()
	if ep.Password == "" {
		t.Fatal("the server's endpoint has no password")
	}
	stop := enginetest.WatchSecret(t, ep.Password, "tpcb-like")
	watch := &loadLog{}
	ext.(driver.LoadReporter).WatchLoad(watch)
	res, err := ext.Drive(ctx, driver.Config{Warmup: time.Second, Duration: 2 * time.Second,
		OnTick: func(driver.Interval) { ticks++ }}, 2)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if watch.name != "pgbench" || watch.started <= 0 || watch.exited != watch.started || watch.cpu <= 0 {
		t.Errorf("load watch %+v: want pgbench's process reported started, then exited with its CPU", watch)
	}
	if _, err := os.Stat(filepath.Join(dir, passFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the password file is left after the run: %v", err)
	}
	if res.Measured.Ops == 0 || res.Warmup.Ops == 0 || res.Measured.ByOp[0].Latency.TotalCount() != res.Measured.Ops {
		t.Errorf("measured %d ops (hist %d), warmup %d", res.Measured.Ops, res.Measured.ByOp[0].Latency.TotalCount(), res.Warmup.Ops)
	}
	if ticks < 2 || len(res.Intervals) < 3 {
		t.Errorf("%d live ticks, %d intervals", ticks, len(res.Intervals))
	}
	checkIntervalHists(t, res)
	if tps := res.Measured.Throughput(); tps <= 0 {
		t.Errorf("throughput %v", tps)
	}
	if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM pgbench_history"); got < res.Measured.Ops {
		t.Errorf("history has %d rows, fewer than the %d measured transactions", got, res.Measured.Ops)
	}
	t.Logf("pgbench: %.0f tps, p99 %v", res.Measured.Throughput(), time.Duration(res.Measured.ByOp[0].Latency.ValueAtQuantile(99)))
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

// TestPassFile checks the password file libpq reads: 0600, one line that
// matches this server whatever its address, with ':' and '\' escaped.
func TestPassFile(t *testing.T) {
	dir := t.TempDir()
	path, err := writePassFile(dir, engine.Endpoint{Host: "127.0.0.1", Port: 5432, User: "u", Password: `a:b\c`, Database: "d"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || string(b) != `*:*:*:*:a\:b\\c`+"\n" {
		t.Errorf("pass file %q mode %v: %v", b, st.Mode(), err)
	}
	if _, err := writePassFile(dir, engine.Endpoint{Password: "again"}); err != nil {
		t.Errorf("a second Drive in the same folder: %v", err)
	}
	env := withoutEnv([]string{"PGPASSWORD=x", "HOME=/root", "PGPASSFILE=/y", "PGPASSWORDX=z"}, "PGPASSWORD", "PGPASSFILE")
	if strings.Join(env, " ") != "HOME=/root PGPASSWORDX=z" {
		t.Errorf("withoutEnv = %q", env)
	}
}

// loadLog records what a load generator reports of its process.
type loadLog struct {
	name            string
	started, exited int
	cpu             time.Duration
}

func (l *loadLog) Started(name string, pid int)      { l.name, l.started = name, pid }
func (l *loadLog) Exited(pid int, cpu time.Duration) { l.exited, l.cpu = pid, cpu }
func (l *loadLog) Begin()                            {}
