package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
)

// testOptions keep a probe to a few seconds; Quick is for users.
var testOptions = Options{Runtime: 300 * time.Millisecond, Size: 16 << 20}

func checkPlausible(t *testing.T, tr Tier) {
	t.Helper()
	f := tr.Fio
	if f == nil {
		t.Fatalf("no fio results: %+v", tr)
	}
	for name, r := range map[string]IOResult{
		"randread_qd1": f.RandReadQD1, "randread_qd32": f.RandReadQD32,
		"randwrite_qd1": f.RandWriteQD1, "randwrite_qd32": f.RandWriteQD32,
	} {
		if r.IOPS <= 0 || r.Lat.P50 <= 0 || r.Lat.P99 < r.Lat.P50 {
			t.Errorf("%s implausible: %+v", name, r)
		}
	}
	if f.SeqReadMBps <= 0 || f.SeqWriteMBps <= 0 {
		t.Errorf("sequential MB/s implausible: %v/%v", f.SeqReadMBps, f.SeqWriteMBps)
	}
	if f.FsyncLat.P50 <= 0 || f.FsyncLat.P99 < f.FsyncLat.P50 {
		t.Errorf("fsync latency implausible: %+v", f.FsyncLat)
	}
	if want := 1e6 / f.FsyncLat.P50; f.SyncCeilingPerS <= 0 || f.SyncCeilingPerS != want {
		t.Errorf("sync ceiling %v, want 1e6/p50 = %v", f.SyncCeilingPerS, want)
	}
	if !strings.HasPrefix(f.FioVersion, "fio-") {
		t.Errorf("fio version %q", f.FioVersion)
	}
	if tr.Error != "" {
		t.Errorf("error set on success: %s", tr.Error)
	}
	// The scratch folder must be gone.
	if left, _ := filepath.Glob(filepath.Join(tr.Path, ".tierbench-probe-*")); len(left) > 0 {
		t.Errorf("scratch folders left behind: %v", left)
	}
}

func TestProbeDevShm(t *testing.T) {
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		testenv.Skip(t, "no /dev/shm")
	}
	tr, err := Probe(context.Background(), "/dev/shm", testOptions)
	if err != nil {
		t.Fatal(err)
	}
	checkPlausible(t, tr)
	if tr.FSType != "tmpfs" || tr.Durable || tr.Rotational {
		t.Errorf("/dev/shm: fs %q durable %v rotational %v, want tmpfs, false, false", tr.FSType, tr.Durable, tr.Rotational)
	}
	// RAM answers a 4k read in well under a millisecond.
	if p50 := tr.Fio.RandReadQD1.Lat.P50; p50 > 1000 {
		t.Errorf("tmpfs 4k read p50 %v µs", p50)
	}
}

func TestProbeDiskFolder(t *testing.T) {
	dir := t.TempDir()
	tr, err := Probe(context.Background(), dir, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	checkPlausible(t, tr)
	if tr.FSType == "" || tr.Device == "" || tr.MountOptions == "" {
		t.Errorf("facts missing: %+v", tr)
	}
	t.Logf("%s: %s on %s, direct %v, note %q", dir, tr.FSType, tr.Device, tr.Fio.Direct, tr.Fio.Note)
}

func TestMissingFio(t *testing.T) {
	opt := testOptions
	opt.FioPath = "/nonexistent/fio"
	dir := t.TempDir()
	tr, err := Probe(context.Background(), dir, opt)
	if !errors.Is(err, ErrNoFio) {
		t.Fatalf("error %v, want ErrNoFio", err)
	}
	if !strings.Contains(err.Error(), "fio is not installed: apt-get install fio") {
		t.Errorf("error %q does not say how to install fio", err)
	}
	if tr.Error != err.Error() || tr.FSType == "" {
		t.Errorf("tier should carry the facts and the error: %+v", tr)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("files left in %s: %v", dir, left)
	}
}

// TestCancelKillsFio cancels a probe mid-job: it must return promptly, leave
// no fio running and remove its scratch folder.
func TestCancelKillsFio(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Probe(ctx, dir, Options{Runtime: time.Minute, Size: 16 << 20})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want a deadline error", err)
	}
	if d := time.Since(start); d >= time.Minute {
		t.Errorf("cancelled probe returned after %v: fio ran its whole runtime", d)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("files left in %s: %v", dir, left)
	}
	if pids := fioProcessesIn(dir); len(pids) > 0 {
		t.Errorf("fio still running in %s: pids %v", dir, pids)
	}
}

// fioProcessesIn lists processes whose command line mentions dir.
func fioProcessesIn(dir string) []string {
	var pids []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(dir)) && bytes.Contains(b, []byte("fio")) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

func TestProbeRejectsMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing")
	tr, err := Probe(context.Background(), path, testOptions)
	if err == nil || tr.Error == "" {
		t.Fatalf("probe of a missing folder: err %v, tier %+v", err, tr)
	}
}

// TestWriteJSONFieldNames pins the JSON of `tierbench probe --format json`.
func TestWriteJSONFieldNames(t *testing.T) {
	full := Tier{Path: "/x", Fio: &Fio{}, BackingFile: "/img", PmemMode: "fsdax", Error: "e"}
	full.Fio.Note = "n"
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []Tier{{Path: "/x", Fio: &Fio{}}, full}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tiers []map[string]json.RawMessage `json:"tiers"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	tierKeys := []string{"path", "fs_type", "mount_options", "device", "rotational", "dax", "emulated", "durable", "fio"}
	optional := []string{"backing_file", "pmem_mode", "error"}
	fioKeys := []string{"randread_qd1", "randread_qd32", "randwrite_qd1", "randwrite_qd32",
		"seqread_mbps", "seqwrite_mbps", "fsync_lat_us", "sync_ceiling_per_s", "direct", "fio_version"}
	if got := keys(doc.Tiers[0]); !reflect.DeepEqual(got, sorted(tierKeys)) {
		t.Errorf("tier keys %v, want %v", got, sorted(tierKeys))
	}
	if got := keys(doc.Tiers[1]); !reflect.DeepEqual(got, sorted(append(tierKeys, optional...))) {
		t.Errorf("full tier keys %v", got)
	}
	var fio map[string]json.RawMessage
	json.Unmarshal(doc.Tiers[0]["fio"], &fio)
	if got := keys(fio); !reflect.DeepEqual(got, sorted(fioKeys)) {
		t.Errorf("fio keys %v, want %v", got, sorted(fioKeys))
	}
	var io map[string]map[string]json.RawMessage
	json.Unmarshal(fio["randread_qd1"], &io)
	if _, ok := io["lat_us"]["p50"]; !ok {
		t.Errorf("randread_qd1 is %s, want iops and lat_us.p50/p99", fio["randread_qd1"])
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"iops": 0`)) || !bytes.Contains(buf.Bytes(), []byte(`"p99": 0`)) {
		t.Errorf("unexpected JSON:\n%s", buf.String())
	}
	buf.Reset()
	WriteJSON(&buf, nil)
	if strings.TrimSpace(buf.String()) != "{\n  \"tiers\": []\n}" {
		t.Errorf("empty list written as %q", buf.String())
	}
}

func keys(m map[string]json.RawMessage) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	return sorted(k)
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func TestWriteTable(t *testing.T) {
	tiers := []Tier{
		{Path: "/dev/shm", FSType: "tmpfs", Device: "tmpfs", Fio: &Fio{
			RandReadQD1: IOResult{IOPS: 1.46e6}, RandReadQD32: IOResult{IOPS: 2.9e6},
			RandWriteQD1: IOResult{IOPS: 812}, RandWriteQD32: IOResult{IOPS: 45123},
			SeqReadMBps: 14000, SeqWriteMBps: 950.4, FsyncLat: Latency{P50: 0.18, P99: 0.19},
			SyncCeilingPerS: 5.5e6, Note: "tmpfs keeps data in RAM"}},
		{Path: "/mnt/broken", Error: "probe /mnt/broken: boom"},
	}
	var buf bytes.Buffer
	WriteTable(&buf, tiers)
	out := buf.String()
	for _, want := range []string{"PATH", "RAND READ QD1", "SYNC CEILING", "1.46M IOPS", "2.90M IOPS", "812 IOPS", "45.1k IOPS",
		"14.0 GB/s", "950 MB/s", "0.18 µs", "0.19 µs", "5.50M syncs/s",
		"/dev/shm: tmpfs keeps data in RAM", "/mnt/broken: error: probe /mnt/broken: boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Every figure has its unit: no cell of a probed row is a bare number.
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "/dev/shm ") {
			continue
		}
		for _, cell := range regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1) {
			if regexp.MustCompile(`^[0-9.]+[kM]?$`).MatchString(cell) {
				t.Errorf("figure %q has no unit in row %q", cell, line)
			}
		}
	}
}

func TestUnits(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{iops(12500), "12.5k IOPS"},
		{bandwidth(512), "512 MB/s"},
		{bandwidth(2345), "2.35 GB/s"},
		{latency(0.5), "0.50 µs"},
		{latency(85), "85.0 µs"},
		{latency(1500), "1.50 ms"},
		{latency(2.5e6), "2.50 s"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
