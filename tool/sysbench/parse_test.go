package sysbench

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
)

// The testdata files are real sysbench 1.0.20 output, captured from runs
// against servers started by the engines in this repository (see
// TestCapture): `run --report-interval=1 --histogram=on --percentile=99`,
// with --report-checkpoints where a warmup is named in the file name.

func readData(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParse(t *testing.T) {
	type sum struct {
		tx, errs, events int64
		total            time.Duration
		pct              time.Duration
	}
	for _, tc := range []struct {
		file        string
		lines       int
		firstLine   Line
		checkpoints []sum
		final       *sum
		buckets     int
		firstBucket Bucket
		lastBucket  Bucket
	}{
		{
			file:      "postgres-read-write-warmup1.txt",
			lines:     3,
			firstLine: Line{At: time.Second, Threads: 2, TPS: 72.90, QPS: 1491.92, P99: 3360 * time.Microsecond, ErrPerSec: 0},
			checkpoints: []sum{
				{tx: 73, errs: 0, events: 73, total: 1000200 * time.Microsecond, pct: 3360 * time.Microsecond},
			},
			final:       &sum{tx: 2864, errs: 15, events: 2864, total: 3005700 * time.Microsecond, pct: 2300 * time.Microsecond},
			buckets:     91,
			firstBucket: Bucket{Ms: 0.619, Count: 4},
			lastBucket:  Bucket{Ms: 995.508, Count: 2},
		},
		{
			// The interval report of the checkpoint's second came after
			// the checkpoint emptied the histogram: p99 0.00.
			file:      "mariadb-read-write-warmup1.txt",
			lines:     2,
			firstLine: Line{At: time.Second, Threads: 2, TPS: 1163.02, QPS: 23372.26, P99: 0, ErrPerSec: 4.99},
			checkpoints: []sum{
				{tx: 1165, errs: 5, events: 1165, total: 1000100 * time.Microsecond, pct: 2300 * time.Microsecond},
			},
			final:       &sum{tx: 1150, errs: 2, events: 1150, total: 2003600 * time.Microsecond, pct: 2220 * time.Microsecond},
			buckets:     46,
			firstBucket: Bucket{Ms: 1.102, Count: 1},
			lastBucket:  Bucket{Ms: 5.373, Count: 1},
		},
		{
			// No warmup; the last second's report lost the race with the
			// end of the run.
			file:      "mariadb-write-only-nowarmup.txt",
			lines:     1,
			firstLine: Line{At: time.Second, Threads: 4, TPS: 5874.63, QPS: 35331.64, P99: 1580 * time.Microsecond, ErrPerSec: 29.95},
			final:     &sum{tx: 11920, errs: 60, events: 11920, total: 2002700 * time.Microsecond, pct: 1580 * time.Microsecond},
			buckets:   152,
		},
		{
			// Two-digit seconds; PostgreSQL's 1 s deadlock_timeout under
			// sysbench's hot ids.
			file:      "postgres-read-write-4threads-12s.txt",
			lines:     12,
			firstLine: Line{At: time.Second, Threads: 4, TPS: 583.34, QPS: 11873.60, P99: 4180 * time.Microsecond, ErrPerSec: 7.99},
			checkpoints: []sum{
				{tx: 1398, errs: 19, events: 1398, total: 2000200 * time.Microsecond, pct: 4100 * time.Microsecond},
			},
			final:   &sum{tx: 2405, errs: 42, events: 2405, total: 12691600 * time.Microsecond, pct: 995510 * time.Microsecond},
			buckets: 133,
		},
		{file: "mariadb-access-denied.txt"},
		{file: "postgres-missing-table.txt"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rep := Parse(readData(t, tc.file))
			if len(rep.Lines) != tc.lines {
				t.Fatalf("%d interval lines, want %d", len(rep.Lines), tc.lines)
			}
			if tc.lines > 0 {
				if got := rep.Lines[0]; got != tc.firstLine {
					t.Errorf("first line %+v, want %+v", got, tc.firstLine)
				}
				for i, l := range rep.Lines {
					if l.At != time.Duration(i+1)*time.Second {
						t.Errorf("line %d at %v", i, l.At)
					}
				}
			}
			if len(rep.Checkpoints) != len(tc.checkpoints) {
				t.Fatalf("%d checkpoints, want %d", len(rep.Checkpoints), len(tc.checkpoints))
			}
			check := func(what string, got Summary, want sum) {
				if got.Transactions != want.tx || got.IgnoredErrors != want.errs || got.Events != want.events ||
					got.TotalTime != want.total || got.PctAt != want.pct || got.Percentile != 99 {
					t.Errorf("%s %+v, want %+v", what, got, want)
				}
				if got.Queries <= got.Transactions || got.Min <= 0 || got.Avg < got.Min || got.Max < got.Avg {
					t.Errorf("%s %+v: queries or latencies missing", what, got)
				}
			}
			for i, want := range tc.checkpoints {
				check("checkpoint", rep.Checkpoints[i], want)
			}
			if (rep.Final == nil) != (tc.final == nil) {
				t.Fatalf("final %+v, want %+v", rep.Final, tc.final)
			}
			if tc.final == nil {
				return
			}
			check("final", *rep.Final, *tc.final)
			if len(rep.Histogram) != tc.buckets {
				t.Errorf("%d buckets, want %d", len(rep.Histogram), tc.buckets)
			}
			if tc.firstBucket.Count > 0 && (rep.Histogram[0] != tc.firstBucket || rep.Histogram[len(rep.Histogram)-1] != tc.lastBucket) {
				t.Errorf("buckets %+v .. %+v", rep.Histogram[0], rep.Histogram[len(rep.Histogram)-1])
			}
			// Every printed value names one of sysbench's buckets, and the
			// histogram holds every event of the final report.
			var n int64
			for _, b := range rep.Histogram {
				n += b.Count
				if v := bucketValue(b.Ms); v == b.Ms || math.Abs(v-b.Ms) > 0.0005 {
					t.Errorf("bucket %.3f ms: value %v is not a sysbench bucket", b.Ms, v)
				}
			}
			if n != rep.Final.Events {
				t.Errorf("histogram holds %d events, the report %d", n, rep.Final.Events)
			}
			h := Histogram(rep.Histogram)
			if h.TotalCount() != n {
				t.Errorf("HDR histogram has %d values, want %d", h.TotalCount(), n)
			}
			// The HDR p99 is sysbench's bucket: within HDR's 0.1% of the
			// 99th percentile sysbench printed (itself rounded to 10 µs).
			p99 := time.Duration(h.ValueAtQuantile(99))
			if diff := math.Abs(float64(p99-rep.Final.PctAt)) / float64(rep.Final.PctAt); diff > 0.005 {
				t.Errorf("HDR p99 %v, sysbench's %v", p99, rep.Final.PctAt)
			}
			if h.Min() < int64(rep.Final.Min)*98/100 || h.Max() > int64(rep.Final.Max)*102/100 {
				t.Errorf("HDR range %d..%d ns, sysbench's %v..%v", h.Min(), h.Max(), rep.Final.Min, rep.Final.Max)
			}
		})
	}
}

func TestBucketValue(t *testing.T) {
	// Bucket i's value exp(i/m + ln 0.001): the first is 1 µs, the last
	// 100 s, neighbours ~1.8% apart.
	if got := bucketValue(0.001); math.Abs(got-0.001) > 1e-12 {
		t.Errorf("first bucket %v", got)
	}
	if got := bucketValue(100000.000); math.Abs(got-1e5) > 1e-6 {
		t.Errorf("last bucket %v", got)
	}
	if r := math.Exp(1 / sbMult); r < 1.0181 || r > 1.0182 {
		t.Errorf("bucket ratio %v", r)
	}
	// A value that is no bucket of this geometry stays as printed.
	if got := bucketValue(1.000); got != 1.000 {
		t.Errorf("1.000 ms: %v", got)
	}
	// Beyond tierbench's 60 s: clamped, not lost.
	h := Histogram([]Bucket{{Ms: 100000.000, Count: 3}, {Ms: 0.619, Count: 1}})
	if h.TotalCount() != 4 || time.Duration(h.Max()) < 59*time.Second {
		t.Errorf("clamped histogram: %d values, max %v", h.TotalCount(), time.Duration(h.Max()))
	}
}

func TestResult(t *testing.T) {
	rep := Parse(readData(t, "postgres-read-write-4threads-12s.txt"))
	res, err := result(rep, 2*time.Second, "transaction")
	if err != nil {
		t.Fatal(err)
	}
	w, m := res.Warmup, res.Measured
	if w.Length != 2000200*time.Microsecond || w.Ops != 1398 || w.Errors != 19 || len(w.ByOp) != 1 ||
		w.ByOp[0].Name != "transaction" || w.ByOp[0].Ops != 1398 || w.ByOp[0].Latency == nil || w.ByOp[0].Latency.TotalCount() != 0 {
		t.Errorf("warmup %+v", w)
	}
	if m.Length != (12691600-2000200)*time.Microsecond || m.Ops != 2405 || m.Errors != 42 || len(m.ByOp) != 1 ||
		m.ByOp[0].Ops != 2405 || m.ByOp[0].Errors != 42 || m.ByOp[0].Latency.TotalCount() != 2405 || m.ByOp[0].Service != nil {
		t.Errorf("measured %+v", m)
	}
	// sysbench's own figure: 2405 transactions, 224.95 per sec.
	if tp := m.Throughput(); math.Abs(tp-224.95) > 0.01 {
		t.Errorf("throughput %.2f, sysbench says 224.95", tp)
	}
	if len(res.Intervals) != 12 {
		t.Fatalf("%d intervals", len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		want := driver.Measured
		if i < 2 {
			want = driver.Warmup
		}
		if iv.Index != i || iv.Phase != want || iv.Start != time.Duration(i)*time.Second || iv.Length != time.Second || !slices.Equal(iv.PerOpOK, []int64{iv.Ops}) {
			t.Errorf("interval %d: %+v", i, iv)
		}
	}
	if iv := res.Intervals[0]; iv.Ops != 583 || iv.Errors != 8 || iv.P99 != 4180*time.Microsecond {
		t.Errorf("first interval %+v", iv)
	}
	if iv := res.Intervals[1]; iv.P99 != 0 || iv.Ops != 813 {
		t.Errorf("checkpoint second's interval %+v: p99 unknown", iv)
	}
	if res.FirstError == nil || !strings.Contains(res.FirstError.Error(), "61 ignored errors") || res.OpenLoop {
		t.Errorf("first error %v", res.FirstError)
	}

	// Without a warmup: no checkpoint, everything measured.
	rep = Parse(readData(t, "mariadb-write-only-nowarmup.txt"))
	res, err = result(rep, 0, "transaction")
	if err != nil {
		t.Fatal(err)
	}
	if res.Warmup.Ops != 0 || res.Warmup.ByOp[0].Latency == nil || res.Measured.Ops != 11920 || res.Measured.Length != 2002700*time.Microsecond {
		t.Errorf("no warmup: %+v / %+v", res.Warmup, res.Measured)
	}
	if res.Intervals[0].Phase != driver.Measured {
		t.Errorf("no warmup: interval %+v", res.Intervals[0])
	}
	// A warmup with no checkpoint report would count the warmup: refused.
	if _, err := result(rep, time.Second, "transaction"); err == nil || !strings.Contains(err.Error(), "checkpoint") {
		t.Errorf("warmup without a checkpoint: %v", err)
	}
	if _, err := result(Parse(readData(t, "mariadb-access-denied.txt")), 0, "transaction"); err == nil {
		t.Errorf("no final report accepted")
	}
}

func TestArgs(t *testing.T) {
	d := &Driver{Script: "oltp_read_write", DBDriver: "mysql",
		Endpoint:     engine.Endpoint{Scheme: "mysql", Host: "127.0.0.1", Port: 3307, User: "tierbench", Password: "secret", Database: "tierbench"},
		WorkloadArgs: []string{"--tables=1", "--table_size=2000"}}
	got := strings.Join(d.Args(1, 2, 4, "/run/x/sysbench-options"), " ")
	want := "oltp_read_write --db-driver=mysql --config-file=/run/x/sysbench-options --mysql-host=127.0.0.1 --mysql-port=3307 " +
		"--mysql-user=tierbench --mysql-db=tierbench --tables=1 --table_size=2000 --threads=4 --time=3 --report-checkpoints=1 " +
		"--report-interval=1 --histogram=on --percentile=99 run"
	if got != want {
		t.Errorf("args\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "secret") {
		t.Errorf("password on the command line")
	}
	d.DBDriver, d.Script = "pgsql", "oltp_write_only"
	got = strings.Join(d.Args(0, 5, 1, ""), " ")
	if !strings.HasPrefix(got, "oltp_write_only --db-driver=pgsql --pgsql-host=127.0.0.1") || strings.Contains(got, "checkpoints") ||
		strings.Contains(got, "config-file") || !strings.Contains(got, "--time=5 ") {
		t.Errorf("no warmup: %s", got)
	}
	for _, c := range []struct {
		in   time.Duration
		want int64
	}{{0, 0}, {time.Second, 1}, {1499 * time.Millisecond, 1}, {1500 * time.Millisecond, 2}, {2 * time.Minute, 120}} {
		if got := wholeSeconds(c.in); got != c.want {
			t.Errorf("wholeSeconds(%v) = %d", c.in, got)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, e := range []string{"postgres", "mariadb"} {
		for _, w := range []string{"oltp-read-write", "oltp-write-only"} {
			if err := Check(e, w); err != nil {
				t.Errorf("%s/%s: %v", e, w, err)
			}
		}
	}
	for _, c := range []struct{ engine, workload, want string }{
		{"pebble", "oltp-read-write", "not engine pebble"},
		{"postgres", "tpcb", "not workload tpcb"},
		{"redis", "ycsb-a", "not engine redis or workload ycsb-a"},
	} {
		err := Check(c.engine, c.workload)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "postgres and mariadb") ||
			!strings.Contains(err.Error(), "oltp-read-write and oltp-write-only") {
			t.Errorf("%s/%s: %v", c.engine, c.workload, err)
		}
	}
	if tl := Tool(); tl.Name != "sysbench" || tl.Check == nil || tl.New == nil {
		t.Errorf("tool %+v", tl)
	}
}

func TestTail(t *testing.T) {
	tl := &tailLines{max: 3}
	tl.add("a")
	tl.Write([]byte("b\nc"))
	tl.Write([]byte("d\ne\n"))
	tl.add("f")
	if got := tl.String(); got != "  cd\n  e\n  f" {
		t.Errorf("tail %q", got)
	}
}
