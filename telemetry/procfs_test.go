package telemetry

import (
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/procfs"
	"github.com/tierbench/tierbench/testenv"
)

// Two captures of /proc/diskstats two seconds apart. sda is a kernel before
// 4.18 (14 fields), vda1 4.18..5.4 (18 fields, discards), vda 5.5+ (20
// fields, flushes); hda1 is the pre-2.6.25 partition format, which is
// skipped.
const (
	diskstatsBefore = `   8       0 sda 100 5 2000 50 200 10 4000 150 0 300 400
 254       0 vda 1000 10 20000 500 2000 30 40000 1500 0 3000 4000 10 0 80 5 500 40
 254       1 vda1 900 10 18000 450 1900 30 38000 1400 0 2900 3800 10 0 80 5
 253       0 dm-0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 104       0 cciss!c0d0 1 0 8 1 1 0 8 1 0 2 2
   7       3 loop3 500 0 1000 10 500 0 1000 10 0 100 100 0 0 0 0 0 0
   3       1 hda1 10 20 30 40
`
	diskstatsAfter = `   8       0 sda 300 5 6096 150 600 10 12192 650 1 1300 1400
 254       0 vda 1000 10 20000 500 3000 30 60480 2000 2 5500 6000 10 0 80 5 550 45
 254       1 vda1 940 10 26192 470 1900 30 38000 1400 0 2920 3820 12 0 96 6
 253       0 dm-0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 104       0 cciss!c0d0 1 0 8 1 1 0 8 1 0 2 2
   7       3 loop3 5 0 10 1 5 0 10 1 0 1 1 0 0 0 0 0 0
   3       1 hda1 11 20 30 40
`
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestParseDiskstatsCounters(t *testing.T) {
	got, err := parseDiskstats(diskstatsBefore)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]diskEntry{
		"sda": {8, 0, diskCounters{reads: 100, sectorsRead: 2000, readMs: 50, writes: 200,
			sectorsWritten: 4000, writeMs: 150, ioTicks: 300}},
		"vda": {254, 0, diskCounters{reads: 1000, sectorsRead: 20000, readMs: 500, writes: 2000,
			sectorsWritten: 40000, writeMs: 1500, ioTicks: 3000, flushes: 500, flushMs: 40, hasFlush: true}},
		"vda1": {254, 1, diskCounters{reads: 900, sectorsRead: 18000, readMs: 450, writes: 1900,
			sectorsWritten: 38000, writeMs: 1400, ioTicks: 2900}},
		"dm-0": {253, 0, diskCounters{hasFlush: true}},
		"cciss!c0d0": {104, 0, diskCounters{reads: 1, sectorsRead: 8, readMs: 1, writes: 1,
			sectorsWritten: 8, writeMs: 1, ioTicks: 2}},
		"loop3": {7, 3, diskCounters{reads: 500, sectorsRead: 1000, readMs: 10, writes: 500,
			sectorsWritten: 1000, writeMs: 10, ioTicks: 100, hasFlush: true}},
	}
	if len(got) != len(want) {
		t.Errorf("got %d devices %v, want %d (hda1's 7-field line skipped)", len(got), slices.Sorted(maps.Keys(got)), len(want))
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: got %+v, want %+v", name, g, w)
		}
	}
}

func TestDiskRatesFromTwoCaptures(t *testing.T) {
	a, err := parseDiskstats(diskstatsBefore)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseDiskstats(diskstatsAfter)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dev       string
		want      DiskRates
		backwards bool
	}{
		// 200 reads, 2 MiB, 100 ms; 400 writes, 4 MiB, 500 ms; 1000 ms busy.
		{dev: "sda", want: DiskRates{ReadIOPS: 100, WriteIOPS: 200, ReadMBps: 1, WriteMBps: 2,
			AwaitMs: 1, ReadAwaitMs: 0.5, WriteAwaitMs: 1.25, UtilPct: 50}},
		// 1000 writes of 10 MiB in 500 ms; 2500 ms busy in 2000 is capped;
		// 50 flushes in 5 ms.
		{dev: "vda", want: DiskRates{WriteIOPS: 500, WriteMBps: 5, AwaitMs: 0.5, WriteAwaitMs: 0.5, UtilPct: 100,
			FlushesPerS: 25, FlushAwaitMs: 0.1}},
		// Discard fields present, no flush fields: flushes stay 0.
		{dev: "vda1", want: DiskRates{ReadIOPS: 20, ReadMBps: 2, AwaitMs: 0.5, ReadAwaitMs: 0.5, UtilPct: 1}},
		// Idle: no I/O must not divide by zero.
		{dev: "dm-0", want: DiskRates{}},
		{dev: "cciss!c0d0", want: DiskRates{}},
		// Counters reset between captures: zeros, not wrapped-around rates.
		{dev: "loop3", want: DiskRates{}, backwards: true},
	} {
		t.Run(tc.dev, func(t *testing.T) {
			got := diskRates(a[tc.dev].c, b[tc.dev].c, 2*time.Second)
			if !near(got.ReadIOPS, tc.want.ReadIOPS) || !near(got.WriteIOPS, tc.want.WriteIOPS) ||
				!near(got.ReadMBps, tc.want.ReadMBps) || !near(got.WriteMBps, tc.want.WriteMBps) ||
				!near(got.AwaitMs, tc.want.AwaitMs) || !near(got.UtilPct, tc.want.UtilPct) ||
				!near(got.FlushesPerS, tc.want.FlushesPerS) || !near(got.FlushAwaitMs, tc.want.FlushAwaitMs) ||
				!near(got.ReadAwaitMs, tc.want.ReadAwaitMs) || !near(got.WriteAwaitMs, tc.want.WriteAwaitMs) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if bw := b[tc.dev].c.lessThan(a[tc.dev].c); bw != tc.backwards {
				t.Errorf("lessThan = %v, want %v", bw, tc.backwards)
			}
		})
	}
	if got := diskRates(a["sda"].c, b["sda"].c, 0); got != (DiskRates{}) {
		t.Errorf("zero span: got %+v, want zeros", got)
	}
}

func TestParseDiskstatsErrors(t *testing.T) {
	for name, text := range map[string]string{
		"empty":       "",
		"only old":    "   3       1 hda1 10 20 30 40\n",
		"not numeric": "   8       0 sda 100 5 x 50 200 10 4000 150 0 300 400\n",
	} {
		if _, err := parseDiskstats(text); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A negative in-flight count (an old accounting bug) must not lose the line.
	got, err := parseDiskstats("   8       0 sda 1 0 8 1 1 0 8 1 -1 2 2\n")
	if err != nil || got["sda"].c.reads != 1 {
		t.Errorf("negative in-flight: got %+v, %v", got, err)
	}
}

func TestParseCPUAndShares(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		want          HostSample
	}{
		{
			// Deltas: user 80 nice 20 system 30 idle 200 iowait 40 irq 5
			// softirq 5 steal 20 (guest 10, already inside user) = 400.
			name:   "current kernel",
			before: "cpu  1000 100 500 8000 200 50 50 0 30 0\ncpu0 500 50 250 4000 100 25 25 0 15 0\nintr 1 2 3\n",
			after:  "cpu  1080 120 530 8200 240 55 55 20 40 0\ncpu0 540 60 265 4100 120 28 27 10 20 0\nintr 4 5 6\n",
			want:   HostSample{CPUUserPct: 25, CPUSysPct: 10, CPUIowaitPct: 10, CPUStealPct: 5},
		},
		{
			name:   "before 2.6.11, no steal",
			before: "cpu 100 0 100 800 0 0 0\n",
			after:  "cpu 150 0 150 900 0 0 0\n",
			want:   HostSample{CPUUserPct: 25, CPUSysPct: 25},
		},
		{
			name:   "2.4, four columns",
			before: "cpu 1 2 3 4\n",
			after:  "cpu 2 2 4 6\n",
			want:   HostSample{CPUUserPct: 25, CPUSysPct: 25},
		},
		{
			// iowait stepping back is clamped and left out of the total.
			name:   "iowait backwards",
			before: "cpu  100 0 100 800 50 0 0 0 0 0\n",
			after:  "cpu  200 0 200 1000 40 0 0 0 0 0\n",
			want:   HostSample{CPUUserPct: 25, CPUSysPct: 25},
		},
		{name: "no time passed", before: "cpu 1 2 3 4 5 6 7 8 9 10\n", after: "cpu 1 2 3 4 5 6 7 8 9 10\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := parseCPU(tc.before)
			if err != nil {
				t.Fatal(err)
			}
			b, err := parseCPU(tc.after)
			if err != nil {
				t.Fatal(err)
			}
			got := cpuShares(a, b)
			if !near(got.CPUUserPct, tc.want.CPUUserPct) || !near(got.CPUSysPct, tc.want.CPUSysPct) ||
				!near(got.CPUIowaitPct, tc.want.CPUIowaitPct) || !near(got.CPUStealPct, tc.want.CPUStealPct) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4\n", "cpu 1 2 3\n", "cpu 1 2 x 4\n"} {
		if _, err := parseCPU(bad); err == nil {
			t.Errorf("parseCPU(%q): no error", bad)
		}
	}
}

func TestParseLiveProcFiles(t *testing.T) {
	for path, parse := range map[string]func(string) error{
		diskstatsPath: func(s string) error { _, err := parseDiskstats(s); return err },
		statPath:      func(s string) error { _, err := parseCPU(s); return err },
		"/proc/self/stat": func(s string) error {
			p, err := procfs.Parse(s)
			if err == nil && p.RSSPages == 0 {
				t.Errorf("/proc/self/stat: rss 0")
			}
			return err
		},
	} {
		text, err := readProc(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := parse(text); err != nil {
			t.Errorf("%s: %v\n%s", path, err, text)
		}
	}
}

func TestClockTicksMatchesGetconf(t *testing.T) {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		testenv.Skipf(t, "getconf: %v", err)
	}
	want, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if got := clockTicks(); got != want {
		t.Errorf("clockTicks() = %d, getconf CLK_TCK = %d", got, want)
	}
}

func TestResolveDevice(t *testing.T) {
	stats := map[string]diskEntry{"null": {major: 1, minor: 3}, "dm-7": {major: 253, minor: 7}}
	dir := t.TempDir()
	link := filepath.Join(dir, "mapper-x")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dev, want string }{
		{"tmpfs", ""}, {"", ""}, {"overlay", ""}, {"server:/export", ""},
		{"/dev/null", "null"},
		{link, "null"}, // a symlink, like /dev/mapper/x → ../dm-N
	} {
		got, err := resolveDevice(tc.dev, stats)
		if err != nil || got != tc.want {
			t.Errorf("resolveDevice(%q) = %q, %v; want %q", tc.dev, got, err, tc.want)
		}
	}
	for _, dev := range []string{"/dev/tierbench-no-such-device", link} {
		if got, err := resolveDevice(dev, map[string]diskEntry{"vda": {major: 254}}); err == nil {
			t.Errorf("resolveDevice(%q) = %q, want an error", dev, got)
		}
	}
	// A block node that is no symlink is matched by major:minor.
	node := filepath.Join(dir, "mapper-y")
	if err := unix.Mknod(node, unix.S_IFBLK|0o600, int(unix.Mkdev(253, 7))); err != nil {
		t.Logf("skip major:minor case: mknod: %v", err)
		return
	}
	if got, err := resolveDevice(node, stats); err != nil || got != "dm-7" {
		t.Errorf("resolveDevice(block node 253:7) = %q, %v; want dm-7", got, err)
	}
}
