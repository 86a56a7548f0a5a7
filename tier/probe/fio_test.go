package probe

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestParseFio parses JSON captured from fio on this project's test machine
// (testdata/fio-3.33-*.json, real runs of the jobs probe uses) and one file
// shaped like fio 2.x output (latencies in µs under "clat", no "sync"
// section), which is constructed, not captured.
func TestParseFio(t *testing.T) {
	cases := []struct {
		file      string
		version   string
		iops      float64
		p50, p99  float64 // µs
		mbps      float64
		sync      Latency
		syncExact bool
	}{
		{"fio-3.33-randread-qd1-ext4.json", "fio-3.33", 20069.860279, 48.384, 67.072, 82.206147, Latency{}, false},
		{"fio-3.33-randread-qd32-threads-tmpfs.json", "fio-3.33", 3153641.791045, 0.532, 0.916, 12917.316776, Latency{}, false},
		{"fio-3.33-randwrite-qd32-libaio-ext4.json", "fio-3.33", 147227.54491, 209.920, 477.184, 603.305644, Latency{}, false},
		{"fio-3.33-seqread-ext4.json", "fio-3.33", 1183.431953, 6586.368, 7045.120, 1255.395723, Latency{}, false},
		{"fio-3.33-fsync-ext4.json", "fio-3.33", 10708.582834, 3.216, 4.960, 43.862355, Latency{P50: 89.6, P99: 132.096}, true},
		// fio printed "note: ... queue depth will be capped at 1" on stdout
		// before the JSON.
		{"fio-3.33-note-before-json.json", "fio-3.33", 1561398.00995, 0.482, 0.644, 6395.486248, Latency{}, false},
		// No bw_bytes: bw is KiB/s. No sync section: p50 falls back to
		// 1e6/IOPS.
		{"fio-2-style-constructed.json", "fio-2.2.10", 500, 4, 12, 2000 * 1024 / 1e6, Latency{P50: 2000}, false},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			out, err := parseFio(b)
			if err != nil {
				t.Fatal(err)
			}
			if out.Version != tc.version {
				t.Errorf("version %q, want %q", out.Version, tc.version)
			}
			if len(out.Jobs) != 1 {
				t.Fatalf("%d jobs, want 1", len(out.Jobs))
			}
			j := out.Jobs[0]
			r := j.result()
			near(t, "iops", r.IOPS, tc.iops)
			near(t, "p50", r.Lat.P50, tc.p50)
			near(t, "p99", r.Lat.P99, tc.p99)
			near(t, "MB/s", j.mbps(), tc.mbps)
			if tc.file == "fio-3.33-fsync-ext4.json" || tc.file == "fio-2-style-constructed.json" {
				lat, exact := j.syncLatency()
				if exact != tc.syncExact {
					t.Errorf("sync exact %v, want %v", exact, tc.syncExact)
				}
				near(t, "sync p50", lat.P50, tc.sync.P50)
				near(t, "sync p99", lat.P99, tc.sync.P99)
			}
		})
	}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestParseFioRejectsNonJSON(t *testing.T) {
	for _, in := range []string{"", "fio: engine libaio not loadable\n", "{\"jobs\": [", "note: x\n{oops}"} {
		if _, err := parseFio([]byte(in)); err == nil {
			t.Errorf("parseFio(%q) succeeded, want an error", in)
		}
	}
}

// TestBufferedJobsRun runs every job the way probe does where O_DIRECT is
// not supported (tmpfs before Linux 6.6, some FUSE filesystems), which this
// machine's filesystems cannot show by themselves.
func TestBufferedJobsRun(t *testing.T) {
	fio, err := findFio("")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{fio: fio, dir: t.TempDir(), size: 16 << 20, runtime: 200 * time.Millisecond}
	f, err := r.measure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f.Direct {
		t.Error("Direct is true for a buffered run")
	}
	for name, res := range map[string]IOResult{"rr1": f.RandReadQD1, "rr32": f.RandReadQD32, "rw1": f.RandWriteQD1, "rw32": f.RandWriteQD32} {
		if res.IOPS <= 0 || res.Lat.P50 <= 0 || res.Lat.P99 < res.Lat.P50 {
			t.Errorf("%s: implausible %+v", name, res)
		}
	}
	if f.SeqReadMBps <= 0 || f.SeqWriteMBps <= 0 || f.SyncCeilingPerS <= 0 {
		t.Errorf("implausible %+v", f)
	}
}
