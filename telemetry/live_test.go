package telemetry

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
)

// testInterval keeps the live tests short while still giving several
// samples per test.
const testInterval = 100 * time.Millisecond

// writeAndSync writes size bytes into a new file in dir, fsyncing every
// 8 MiB so that the device sees the writes (and flushes) while sampled.
func writeAndSync(t *testing.T, dir string, size int) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "telemetry-load"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for n := 0; n < size; n += len(buf) {
		if _, err := f.Write(buf); err != nil {
			t.Fatalf("write: %v", err)
		}
		if (n+len(buf))%(8<<20) == 0 {
			if err := f.Sync(); err != nil {
				t.Fatalf("fsync: %v", err)
			}
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("fsync: %v", err)
	}
}

// checkHost asserts every CPU split is a valid share of the machine, and
// when the test made the host busy, that the summary saw it.
func checkHost(t *testing.T, r *Report, busy bool) {
	t.Helper()
	if len(r.Host) == 0 {
		t.Errorf("no host samples")
	}
	all := []HostSummary{r.Summary.Host}
	for _, h := range r.Host {
		all = append(all, HostSummary{h.CPUUserPct, h.CPUSysPct, h.CPUIowaitPct, h.CPUStealPct})
	}
	for i, h := range all {
		parts := []float64{h.CPUUserPct, h.CPUSysPct, h.CPUIowaitPct, h.CPUStealPct}
		sum := 0.0
		for _, p := range parts {
			if p < 0 || p > 100 {
				t.Errorf("host %d: %+v has a share outside 0..100", i, h)
			}
			sum += p
		}
		if sum > 100.5 {
			t.Errorf("host %d: %+v sums to %.2f%%", i, h, sum)
		}
	}
	if s := r.Summary.Host; busy && s.CPUUserPct+s.CPUSysPct == 0 {
		t.Errorf("host summary %+v: no user or system time while writing", s)
	}
}

// checkSamplesOrdered asserts sample times increase, as consumers plot them.
func checkSamplesOrdered(t *testing.T, name string, ts []float64) {
	t.Helper()
	if !slices.IsSorted(ts) || (len(ts) > 0 && ts[0] <= 0) {
		t.Errorf("%s sample times not increasing from >0: %v", name, ts)
	}
}

func TestLiveSamplerSeesWritesOnTempDirDevice(t *testing.T) {
	dir := t.TempDir()
	info, err := tier.Inspect("tmp", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Device, "/dev/") {
		testenv.Skipf(t, "%s is on %s (%s): no block device to watch", dir, info.Device, info.FSType)
	}
	s, err := Start(context.Background(), Config{
		Tiers:    map[string]string{"disk": info.Device, "ram": "tmpfs"},
		PID:      os.Getpid(),
		Interval: testInterval,
	})
	if err != nil {
		t.Fatal(err)
	}
	writeAndSync(t, dir, 64<<20)
	time.Sleep(3 * testInterval) // a few samples however fast the write was
	r := s.Stop()
	if r2 := s.Stop(); r2 != r {
		t.Errorf("second Stop returned another report")
	}
	if len(r.Errors) > 0 {
		t.Errorf("errors: %v", r.Errors)
	}

	d := r.Summary.Tiers["disk"]
	t.Logf("device %s → %+v", info.Device, d)
	if d.Device == "" || (!strings.HasSuffix(info.Device, d.Device) && !strings.HasPrefix(d.Device, "dm-")) {
		t.Errorf("summary device %q for %s", d.Device, info.Device)
	}
	if d.WriteMBps <= 0 || d.WriteIOPS <= 0 {
		t.Errorf("wrote 64 MiB with fsync but summary has write_mbps %v write_iops %v", d.WriteMBps, d.WriteIOPS)
	}
	if d.UtilPct < 0 || d.UtilPct > 100 {
		t.Errorf("util %v outside 0..100", d.UtilPct)
	}
	if len(r.Tiers["disk"]) < 2 {
		t.Errorf("want several disk samples, got %d", len(r.Tiers["disk"]))
	}
	var ts []float64
	var written float64
	for _, x := range r.Tiers["disk"] {
		ts = append(ts, x.T)
		written += x.WriteMBps
	}
	checkSamplesOrdered(t, "disk", ts)
	if written <= 0 {
		t.Errorf("no per-second sample saw the writes: %+v", r.Tiers["disk"])
	}

	if ram, ok := r.Tiers["ram"]; !ok || ram == nil || len(ram) != 0 {
		t.Errorf("tmpfs tier: got %#v, want present and empty", ram)
	}
	if got := r.Summary.Tiers["ram"]; got != (TierSummary{}) {
		t.Errorf("tmpfs tier summary %+v, want zeros and no device", got)
	}

	checkHost(t, r, true)

	if r.Summary.Engine.RSSBytesMax == 0 {
		t.Errorf("engine rss_bytes_max 0 for our own pid")
	}
	if len(r.Engine) == 0 || r.Engine[0].RSSBytes == 0 {
		t.Errorf("engine samples %+v, want rss > 0", r.Engine)
	}
	if c := r.Summary.Engine.CPUPct; c < 0 {
		t.Errorf("engine cpu %v < 0", c)
	}
	t.Logf("host %+v engine %+v, %d samples", r.Summary.Host, r.Summary.Engine, len(r.Host))

	// The summary is what `show --format json` prints: check its shape.
	b, err := json.Marshal(r.Summary)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary json: %s", b)
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	shape := map[string]map[string]any{}
	for k, v := range top {
		if m, ok := v.(map[string]any); ok {
			shape[k] = m
		}
	}
	if n, _ := top["sync_samples"].(float64); n <= 0 {
		t.Errorf("sync_samples %v: our own threads were not sampled (json %s)", top["sync_samples"], b)
	}
	if _, ok := shape["sync_wait"][OtherComponent]; !ok {
		t.Errorf("sync_wait lacks %q: the test's fsyncs are on no component's files (json %s)", OtherComponent, b)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	disk, _ := shape["tiers"]["disk"].(map[string]any)
	for name, want := range map[string][]string{
		"tiers.disk": {"await_ms", "device", "flush_await_ms", "flushes_per_s", "read_await_ms", "read_iops", "read_mbps", "util_pct",
			"write_await_ms", "write_iops", "write_mbps"},
		"host":   {"cpu_iowait_pct", "cpu_steal_pct", "cpu_sys_pct", "cpu_user_pct"},
		"engine": {"cpu_pct", "rss_bytes_max", "tree_cpu_pct"},
	} {
		m := map[string]map[string]any{"tiers.disk": disk, "host": shape["host"], "engine": shape["engine"]}[name]
		got := keys(m)
		if name == "engine" {
			got = slices.DeleteFunc(got, func(k string) bool { return k == "cpu_wait_pct" }) // omitted when 0
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s keys %v, want %v (json %s)", name, got, want, b)
		}
	}
}

func TestGoneEngineAndUnknownDeviceAreRecordedNotFatal(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		testenv.Skipf(t, "cannot run true: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Config{
		Tiers:    map[string]string{"gone": "/dev/tierbench-no-such-device"},
		PID:      cmd.Process.Pid, // exited and reaped
		Interval: testInterval,
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * testInterval)
	cancel() // sampling ends with ctx; Stop still reports
	r := s.Stop()
	t.Logf("errors: %q", r.Errors)
	if len(r.Errors) != 2 {
		t.Fatalf("want one error per broken source, got %q", r.Errors)
	}
	if !strings.Contains(r.Errors[0], "tier gone") || !strings.Contains(r.Errors[1], "engine pid") ||
		!strings.Contains(r.Errors[1], "times)") {
		t.Errorf("errors %q", r.Errors)
	}
	if !slices.Equal(r.Summary.Errors, r.Errors) {
		t.Errorf("summary errors %q, want %q", r.Summary.Errors, r.Errors)
	}
	if len(r.Engine) != 0 || r.Summary.Engine != (EngineSummary{}) {
		t.Errorf("engine figures for a gone process: %+v %+v", r.Engine, r.Summary.Engine)
	}
	if d, ok := r.Summary.Tiers["gone"]; !ok || d.Device != "" {
		t.Errorf("unresolved tier summary %+v (present %v)", d, ok)
	}
	checkHost(t, r, false)

	if _, err := Start(context.Background(), Config{Interval: -time.Second}); err == nil {
		t.Errorf("negative interval accepted")
	}
}

// run runs a command, failing the test with its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestLiveSamplerOnLoopDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to attach a loop device and mount it")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skipf(t, "%s not installed", tool)
		}
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		testenv.Skipf(t, "no loop devices here: losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	// Eager init: no ext4lazyinit thread writing behind the test's back.
	run(t, "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "mount", dev, mnt)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})

	// Watch the device the way runs will: as tier.Info.Device names it.
	info, err := tier.Inspect("loop", mnt)
	if err != nil {
		t.Fatal(err)
	}
	if info.Device != dev {
		t.Fatalf("tier.Inspect device %q, losetup gave %q", info.Device, dev)
	}
	s, err := Start(context.Background(), Config{Tiers: map[string]string{"loop": info.Device}, Interval: testInterval})
	if err != nil {
		t.Fatal(err)
	}
	writeAndSync(t, mnt, 32<<20)
	time.Sleep(2 * testInterval)
	r := s.Stop()
	if len(r.Errors) > 0 {
		t.Errorf("errors: %v", r.Errors)
	}
	d := r.Summary.Tiers["loop"]
	t.Logf("%s → %+v over %d samples", dev, d, len(r.Tiers["loop"]))
	if want := strings.TrimPrefix(dev, "/dev/"); d.Device != want {
		t.Errorf("device %q, want %q", d.Device, want)
	}
	if d.WriteMBps <= 0 || d.WriteIOPS <= 0 {
		t.Errorf("wrote 32 MiB with fsync onto %s but write_mbps %v write_iops %v", dev, d.WriteMBps, d.WriteIOPS)
	}
	// The samples, rate × interval, must account for at least the 32 MiB
	// that fsync saw reach the device before sampling stopped.
	var mib, prev float64
	for _, x := range r.Tiers["loop"] {
		mib += x.WriteMBps * (x.T - prev)
		prev = x.T
	}
	if mib < 32-1e-6 {
		t.Errorf("samples account for %.2f MiB written, want >= 32", mib)
	}
	if len(r.Engine) != 0 {
		t.Errorf("engine samples without a pid: %+v", r.Engine)
	}
	checkHost(t, r, true)
}
