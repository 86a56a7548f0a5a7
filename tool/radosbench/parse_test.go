package radosbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload/radosload"
)

func readCapture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParse reads real rados bench outputs (Ceph 16.2.15, testdata).
func TestParse(t *testing.T) {
	for _, c := range []struct {
		file       string
		rows       int
		noSummary  bool
		want       Summary
		lastRowFin int64
	}{
		{file: "write-5s-2clients.txt", rows: 5, lastRowFin: 832, want: Summary{
			TotalTime: 5003290 * time.Microsecond, Ops: 1072, Op: "write", OpSize: 4096, ObjectSize: 4096,
			BandwidthMBps: 0.836949, AvgIOPS: 214, AvgLat: 9321010 * time.Nanosecond, StddevLat: 11644400 * time.Nanosecond,
			MaxLat: 147766 * time.Microsecond, MinLat: 1387810 * time.Nanosecond}},
		// seq read every object once in half a second: only row 0.
		{file: "seq-ran-out.txt", rows: 1, lastRowFin: 0, want: Summary{
			TotalTime: 557682 * time.Microsecond, Ops: 1072, Op: "read", OpSize: 4096, ObjectSize: 4096,
			BandwidthMBps: 7.50876, AvgIOPS: 1922, AvgLat: 1033140 * time.Nanosecond,
			MaxLat: 58213900 * time.Nanosecond, MinLat: 261019 * time.Nanosecond}},
		{file: "rand-4s-2clients.txt", rows: 5, lastRowFin: 13204, want: Summary{
			TotalTime: 4004590 * time.Microsecond, Ops: 13206, Op: "read", OpSize: 4096, ObjectSize: 4096,
			BandwidthMBps: 12.8817, AvgIOPS: 3297, AvgLat: 586430 * time.Nanosecond,
			MaxLat: 37929800 * time.Nanosecond, MinLat: 203161 * time.Nanosecond}},
		// 22 s: the dated min/max line and the header again after row 19.
		{file: "write-22s-1client.txt", rows: 22, lastRowFin: 6936, want: Summary{
			TotalTime: 22000700 * time.Microsecond, Ops: 7256, Op: "write", OpSize: 4096, ObjectSize: 4096}},
		// --max-objects: no row but row 0, Min bandwidth printed as DBL_MAX.
		{file: "write-max-objects.txt", rows: 1, lastRowFin: 0, want: Summary{
			TotalTime: 229784 * time.Microsecond, Ops: 100, Op: "write", OpSize: 4096, ObjectSize: 4096,
			BandwidthMBps: 1.69997, AvgIOPS: 435, AvgLat: 4544340 * time.Nanosecond, StddevLat: 1874540 * time.Nanosecond,
			MaxLat: 14393200 * time.Nanosecond, MinLat: 2319700 * time.Nanosecond}},
		// seq without a write pass: stdout holds "hints = 1" only.
		{file: "seq-no-write-pass.txt", noSummary: true},
	} {
		t.Run(c.file, func(t *testing.T) {
			rep := Parse(readCapture(t, c.file), "")
			if len(rep.Rows) != c.rows {
				t.Errorf("rows = %d, want %d", len(rep.Rows), c.rows)
			}
			if c.noSummary {
				if rep.Summary != nil {
					t.Errorf("summary = %+v, want none", rep.Summary)
				}
				return
			}
			if rep.Summary == nil {
				t.Fatal("no summary")
			}
			got := *rep.Summary
			if c.want.AvgLat == 0 { // compare the counts only
				got = Summary{TotalTime: got.TotalTime, Ops: got.Ops, Op: got.Op, OpSize: got.OpSize, ObjectSize: got.ObjectSize}
			}
			if got != c.want {
				t.Errorf("summary\n got %+v\nwant %+v", got, c.want)
			}
			if last := rep.Rows[len(rep.Rows)-1]; last.Finished != c.lastRowFin {
				t.Errorf("last row finished = %d, want %d", last.Finished, c.lastRowFin)
			}
		})
	}
}

func TestParseRow(t *testing.T) {
	for _, c := range []struct {
		line string
		want Row
		ok   bool
	}{
		{"    1       2       193       191  0.746107  0.746094  0.00810325   0.0104081", Row{Sec: 1, Started: 193, Finished: 191, AvgLat: 10408100}, true},
		{"    0       0         0         0         0         0           -           0", Row{}, true},
		{"   20       1      6628      6627   1.29417   1.23828  0.00211292  0.00300849", Row{Sec: 20, Started: 6628, Finished: 6627, AvgLat: 3008490}, true},
		{"  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)", Row{}, false},
		{"2026-11-22T16:51:26.951540+0000 min lat: 0.000996599 max lat: 0.0457401 avg lat: 0.00300849", Row{}, false},
		{"hints = 1", Row{}, false},
	} {
		var p parser
		got, ok := p.feed(c.line)
		if ok != c.ok || got != c.want {
			t.Errorf("feed(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

func TestWrongReads(t *testing.T) {
	rep := Parse(readCapture(t, "rand-4s-2clients.txt"),
		"benchmark_data_vm_1_object7 is not correct!\nbenchmark_data_vm_1_object9 is not correct!\n")
	res, err := result(radosload.Settings{Mode: radosload.Rand}.Op(), nil, rep)
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Measured; m.Errors != 2 || m.Ops != 13204 || res.FirstError == nil {
		t.Errorf("measured ops %d errors %d first error %v; want 13204, 2 and an error", m.Ops, m.Errors, res.FirstError)
	}
}

// TestResult checks the figures a run stores, from real outputs: counts
// and lengths are rados bench's, intervals add up to them, and the
// histogram holds every op with rados bench's mean, minimum and maximum.
func TestResult(t *testing.T) {
	write := Parse(readCapture(t, "write-5s-2clients.txt"), "")
	long := Parse(readCapture(t, "write-22s-1client.txt"), "")
	seq := Parse(readCapture(t, "seq-ran-out.txt"), "")
	for _, c := range []struct {
		name          string
		warmup        *Report
		measured      Report
		wantIntervals int
	}{
		{"write, no warmup", nil, write, 5}, // rows 1-4 and the stretch after row 4
		{"write, warmup", &write, long, 5 + 22},
		{"seq, no row", nil, seq, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := result("write", c.warmup, c.measured)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Intervals) != c.wantIntervals {
				t.Errorf("%d intervals, want %d", len(res.Intervals), c.wantIntervals)
			}
			for _, ph := range []struct {
				name string
				reps []Report
				got  driver.PhaseResult
				tag  driver.Phase
			}{{"warmup", warmups(c.warmup), res.Warmup, driver.Warmup}, {"measured", []Report{c.measured}, res.Measured, driver.Measured}} {
				var ops, ivOps int64
				var length time.Duration
				var latSum float64
				minLat, maxLat := time.Hour, time.Duration(0)
				for _, r := range ph.reps {
					ops += r.Summary.Ops
					length += r.Summary.TotalTime
					latSum += r.Summary.AvgLat.Seconds() * float64(r.Summary.Ops)
					minLat, maxLat = min(minLat, r.Summary.MinLat), max(maxLat, r.Summary.MaxLat)
				}
				for _, iv := range res.Intervals {
					if iv.Phase == ph.tag {
						ivOps += iv.Ops
					}
				}
				if ph.got.Ops != ops || ph.got.Length != length || ivOps != ops {
					t.Errorf("%s: ops %d length %v, intervals' ops %d; want %d, %v", ph.name, ph.got.Ops, ph.got.Length, ivOps, ops, length)
				}
				if ops == 0 {
					continue
				}
				h := ph.got.ByOp[0].Latency
				if h.TotalCount() != ops {
					t.Errorf("%s: histogram holds %d ops, want %d", ph.name, h.TotalCount(), ops)
				}
				near := func(what string, got int64, want time.Duration) {
					if d := float64(got) - float64(want); d > 0.002*float64(want) || d < -0.002*float64(want) {
						t.Errorf("%s: histogram %s %v, rados bench's %v", ph.name, what, time.Duration(got), want)
					}
				}
				near("max", h.Max(), maxLat)
				near("min", h.Min(), minLat)
				near("mean", int64(h.Mean()), time.Duration(latSum/float64(ops)*1e9))
			}
			// Intervals follow each other without gaps or overlaps.
			var at time.Duration
			for i, iv := range res.Intervals {
				if iv.Index != i || iv.Start != at {
					t.Errorf("interval %d: index %d start %v, want start %v", i, iv.Index, iv.Start, at)
				}
				at = iv.Start + iv.Length
			}
		})
	}
}

func warmups(r *Report) []Report {
	if r == nil {
		return nil
	}
	return []Report{*r}
}

func TestResultWithoutSummary(t *testing.T) {
	rep := Parse(readCapture(t, "seq-no-write-pass.txt"), "")
	if _, err := result("read", nil, rep); err == nil || !strings.Contains(err.Error(), "no summary") {
		t.Errorf("err = %v, want no summary", err)
	}
}

var clusterFixture = engine.RadosCluster{Conf: "/r/ceph.conf", ID: "admin", Keyring: "/r/keyring", Pool: "bench"}

func TestArgs(t *testing.T) {
	d := &Driver{Cluster: clusterFixture, Settings: radosload.Settings{ObjectSize: 4096, Mode: radosload.Seq, Objects: 50}, RunName: "tierbench-r1"}
	for _, c := range []struct {
		b    bench
		want string
	}{
		{bench{mode: radosload.Write, seconds: writePassSeconds, objects: 50}, "-c /r/ceph.conf --id admin --keyring /r/keyring -p bench bench 600 write -t 4 -b 4096 --no-cleanup --max-objects 50 --run-name tierbench-r1 --client_mount_timeout 20"},
		{bench{mode: radosload.Seq, seconds: 3}, "-c /r/ceph.conf --id admin --keyring /r/keyring -p bench bench 3 seq -t 4 --run-name tierbench-r1 --client_mount_timeout 20"},
	} {
		if got := strings.Join(d.Args(c.b, 4), " "); got != c.want {
			t.Errorf("Args(%+v)\n got %s\nwant %s", c.b, got, c.want)
		}
	}
}

func TestObjectsFor(t *testing.T) {
	// seq-ran-out.txt: 1072 objects in 0.558 s, about 1922 a second.
	s := Parse(readCapture(t, "seq-ran-out.txt"), "").Summary
	for _, c := range []struct {
		want time.Duration
		n    int64
	}{{time.Second, 3000}, {5 * time.Second, 12000}, {60 * time.Second, 139000}} {
		if n := objectsFor(s, c.want); n != c.n {
			t.Errorf("objectsFor(%v) = %d, want %d", c.want, n, c.n)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct{ engine, workload, err string }{
		{"ceph", "rados", ""},
		{"postgres", "rados", "rados-bench drives engine ceph with workload rados, not engine postgres"},
		{"ceph", "object-70-30", "rados-bench drives engine ceph with workload rados, not workload object-70-30"},
	} {
		err := Check(c.engine, c.workload)
		if (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("Check(%s, %s) = %v, want %q", c.engine, c.workload, err, c.err)
		}
	}
}
