package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/engine/mariadb"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/host/mountinfo"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/throttle"
)

// binary is tierbench built once for these end-to-end tests.
var binary string

// testBinary names, in a child test binary (TestTimeoutUndoes), the
// tierbench its parent built, which it runs with the parent's state
// folder instead of building its own.
const testBinary = "TIERBENCH_TEST_BINARY"

func TestMain(m *testing.M) {
	if binary = os.Getenv(testBinary); binary != "" {
		os.Exit(testenv.Main(m))
	}
	dir, err := os.MkdirTemp("", "tierbench-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Server engines run as their own users, who must reach the state
	// folder's scratch templates.
	os.Chmod(dir, 0o755)
	binary = filepath.Join(dir, "tierbench")
	// Keep the tests' ledger, mounts and images away from a real one.
	os.Setenv("TIERBENCH_STATE_DIR", filepath.Join(dir, "state"))
	if out, err := buildStatic(binary); err != nil {
		fmt.Fprintf(os.Stderr, "build tierbench: %v\n%s", err, out)
		os.Exit(1)
	}
	enginetest.Name("cmd")
	// Under a watchdog: a test that started a node or a server and is
	// stuck near the -timeout has it undone (testenv.OnTimeout).
	code := testenv.Main(m)
	enginetest.Done()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func tierbench(t *testing.T, args ...string) result {
	t.Helper()
	return runBinary(t, binary, "", nil, args...)
}

// ramDir returns a fresh folder on tmpfs when the machine has /dev/shm.
func ramDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "tierbench-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// serverWork makes a 0755 folder under /var/tmp, which servers running as
// their own OS users can enter, removed when the test ends.
func serverWork(t *testing.T, prefix string) string {
	t.Helper()
	work, err := os.MkdirTemp("/var/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return work
}

func writeStudy(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const tinyStudy = `name: e2e
engine: pebble
tiers:
  ram:  {path: %q}
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-ram:  {data: disk, wal: ram}
baseline: all-disk
durability: [sync, nosync]
workload:
  name: ycsb-a
  records: 2000
clients: [1, 4]
warmup: 200ms
duration: 600ms
repeat: 1
options: {cache: 8MiB}
`

// showJSON mirrors the documented JSON of `show --format json`.
type showJSON struct {
	Study struct {
		ID, Name, Engine, Workload, Baseline string
		StartedAt                            time.Time `json:"started_at"`
		FinishedAt                           time.Time `json:"finished_at"`
		Status                               string
		Env                                  struct {
			Hostname         string
			Kernel           string
			CPUs             int    `json:"cpus"`
			MemoryBytes      uint64 `json:"memory_bytes"`
			TierbenchVersion string `json:"tierbench_version"`
		}
		Tiers map[string]struct {
			Path    string
			FSType  string `json:"fs_type"`
			Device  string
			Durable bool
		}
	}
	Runs []struct {
		ID, Placement, Durability, Status, Error string
		Components                               map[string]string
		Clients, Repeat                          int
		DurationS                                float64 `json:"duration_s"`
		Ops, Errors                              int64
		Throughput                               float64            `json:"throughput_ops_s"`
		Latency                                  map[string]float64 `json:"latency_us"`
		Service                                  map[string]float64 `json:"service_time_us"`
		ByOp                                     map[string]struct {
			Ops     int64
			Latency map[string]float64 `json:"latency_us"`
		} `json:"by_op"`
	}
}

func TestRunTinyStudyEndToEnd(t *testing.T) {
	work := t.TempDir()
	ram, disk := ramDir(t), filepath.Join(work, "disk")
	resultsDir := filepath.Join(work, "results")
	st := writeStudy(t, work, fmt.Sprintf(tinyStudy, ram, disk))

	r := tierbench(t, "run", st, "--results", resultsDir)
	if r.code != 0 {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"answer:", "placement +ops/s", "vs all-disk", "sync", "nosync"} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("final table lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "measured") || !strings.Contains(r.stderr, "ops/s") {
		t.Errorf("no per-second progress lines:\n%s", r.stderr)
	}
	for _, tierDir := range []string{ram, disk} {
		if ents, _ := os.ReadDir(tierDir); len(ents) != 0 {
			t.Errorf("run folders left in %s", tierDir)
		}
	}

	r = tierbench(t, "show", "latest", "--results", resultsDir, "--format", "json")
	if r.code != 0 {
		t.Fatalf("show exit %d: %s", r.code, r.stderr)
	}
	var got showJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("show json: %v\n%s", err, r.stdout)
	}
	var raw struct {
		Study map[string]any `json:"study"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	// How the rounds ran and were ordered, and the margin verdicts use.
	for _, k := range []string{"order_seed", "rounds", "stop_reason", "order", "margin"} {
		if _, ok := raw.Study[k]; !ok {
			t.Errorf("show's study object lacks %q: %v", k, raw.Study)
		}
	}
	s := got.Study
	if s.Name != "e2e" || s.Engine != "pebble" || s.Workload != "ycsb-a" || s.Baseline != "all-disk" || s.Status != "done" {
		t.Errorf("study header: %+v", s)
	}
	if s.StartedAt.IsZero() || s.FinishedAt.Before(s.StartedAt) || s.Env.CPUs < 1 || s.Env.MemoryBytes == 0 || s.Env.Kernel == "" {
		t.Errorf("study times/env: %+v", s)
	}
	if ramTier := s.Tiers["ram"]; strings.HasPrefix(ram, "/dev/shm") && (ramTier.FSType != "tmpfs" || ramTier.Durable) {
		t.Errorf("ram tier: %+v, want tmpfs and not durable", ramTier)
	}
	if d := s.Tiers["disk"]; d.Path != disk || d.FSType == "" || d.Device == "" {
		t.Errorf("disk tier: %+v", d)
	}
	if len(got.Runs) != 8 {
		t.Fatalf("%d runs, want 2 placements x 2 durability x 2 clients = 8", len(got.Runs))
	}
	for _, run := range got.Runs {
		if run.Status != "ok" || run.Ops == 0 || run.Throughput <= 0 || run.DurationS <= 0 {
			t.Errorf("run %s: %+v", run.ID, run)
		}
		for _, k := range []string{"p50", "p90", "p99", "p999", "max", "mean"} {
			if _, ok := run.Latency[k]; !ok {
				t.Errorf("run %s: latency_us lacks %s", run.ID, k)
			}
		}
		if run.Latency["p50"] <= 0 || run.Latency["p99"] < run.Latency["p50"] || run.Service["p50"] <= 0 {
			t.Errorf("run %s: latency %v service %v", run.ID, run.Latency, run.Service)
		}
		if run.ByOp["read"].Ops == 0 || run.ByOp["update"].Ops == 0 || run.ByOp["read"].Latency["p99"] <= 0 {
			t.Errorf("run %s: by_op %+v", run.ID, run.ByOp)
		}
		if run.Components["wal"] == "" || run.Components["data"] != "disk" {
			t.Errorf("run %s: components %v", run.ID, run.Components)
		}
	}

	// The stored histograms answer percentiles and agree with the run.
	store, err := results.OpenExisting(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run := got.Runs[0]
	h, err := store.Histogram(context.Background(), run.ID, results.OpAll, results.KindLatency, "measured")
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != run.Ops {
		t.Errorf("stored histogram holds %d values, run has %d ops", h.TotalCount(), run.Ops)
	}
	if p99 := hist.Summarize(h).P99; p99 != run.Latency["p99"] {
		t.Errorf("p99 from stored histogram %v != run's %v", p99, run.Latency["p99"])
	}
	if _, err := store.Histogram(context.Background(), run.ID, "read", results.KindLatency, "warmup"); err != nil {
		t.Errorf("warmup histogram not stored: %v", err)
	}

	// Re-reporting from stored results: CSV, compare, HTML and Markdown.
	r = tierbench(t, "show", "--results", resultsDir, "--format", "csv")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 9 || !strings.HasPrefix(lines[0], "study_id,run_id") {
		t.Errorf("csv: exit %d, %d lines\n%s", r.code, len(lines), r.stdout)
	}
	r = tierbench(t, "compare", "latest", "--placements", "all-disk,wal-ram", "--results", resultsDir)
	if r.code != 0 || !strings.Contains(r.stdout, "throughput") || !strings.Contains(r.stdout, "wal-ram") {
		t.Errorf("compare placements: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	html := filepath.Join(work, "report.html")
	if r = tierbench(t, "report", "--results", resultsDir, "-o", html); r.code != 0 {
		t.Errorf("report: exit %d\n%s", r.code, r.stderr)
	} else if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("wal-ram")) {
		t.Error("the HTML report has no charts")
	}
	md := filepath.Join(work, "report.md")
	if r = tierbench(t, "report", "--results", resultsDir, "--format", "markdown", "-o", md); r.code != 0 {
		t.Errorf("markdown report: exit %d\n%s", r.code, r.stderr)
	} else if svgs, _ := filepath.Glob(filepath.Join(work, "report-charts", "*.svg")); len(svgs) == 0 {
		t.Error("the Markdown report wrote no SVG charts")
	}
	// The format follows the file's name: .markdown is Markdown without --format.
	byName := filepath.Join(work, "by-name.markdown")
	if r = tierbench(t, "report", "--results", resultsDir, "-o", byName); r.code != 0 {
		t.Errorf("report -o %s: exit %d\n%s", byName, r.code, r.stderr)
	} else if svgs, _ := filepath.Glob(filepath.Join(work, "by-name-charts", "*.svg")); len(svgs) == 0 {
		t.Error("report -o FILE.markdown wrote no Markdown charts")
	}

	// A study with another record count is refused by compare unless --force.
	other := writeStudy(t, t.TempDir(), strings.NewReplacer("records: 2000", "records: 1000", "clients: [1, 4]", "clients: [1]",
		"durability: [sync, nosync]", "durability: [sync]").Replace(fmt.Sprintf(tinyStudy, ram, disk)))
	if r = tierbench(t, "run", other, "--results", resultsDir); r.code != 0 {
		t.Fatalf("second study: exit %d\n%s", r.code, r.stderr)
	}
	r = tierbench(t, "compare", s.ID, "latest", "--results", resultsDir)
	if r.code != 2 || !strings.Contains(r.stderr, "record count differs") {
		t.Errorf("compare of different record counts: exit %d\n%s", r.code, r.stderr)
	}
	if r = tierbench(t, "compare", s.ID, "latest", "--results", resultsDir, "--force"); r.code != 0 {
		t.Errorf("compare --force: exit %d\n%s", r.code, r.stderr)
	}

	r = tierbench(t, "list", "--results", resultsDir)
	if r.code != 0 || !strings.Contains(r.stdout, s.ID) || !strings.Contains(r.stdout, "studies in "+resultsDir) {
		t.Errorf("list: exit %d\n%s", r.code, r.stdout)
	}
	r = tierbench(t, "show", s.ID[:len(s.ID)-2], "--results", resultsDir)
	if r.code != 0 || !strings.Contains(r.stdout, "wal-ram") || !strings.Contains(r.stdout, "stored in "+resultsDir) {
		t.Errorf("show by id prefix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestBadInput checks that every kind of bad input exits 2 with a line that
// names the problem, and writes nothing to the results store.
func TestBadInput(t *testing.T) {
	work := t.TempDir()
	good := fmt.Sprintf(tinyStudy, filepath.Join(work, "ram"), filepath.Join(work, "disk"))
	cases := []struct {
		name, from, to, want string
	}{
		{"unknown engine", "engine: pebble", "engine: rocksdb", `unknown engine "rocksdb"`},
		{"unknown workload", "name: ycsb-a", "name: ycsb-z", `unknown workload "ycsb-z"`},
		{"unknown tier", "wal-ram:  {data: disk, wal: ram}", "wal-ram:  {data: disk, wal: rma}", `unknown tier "rma"`},
		{"unknown component", "wal-ram:  {data: disk, wal: ram}", "wal-ram:  {data: disk, wal: ram, journal: ram}", `"journal"`},
		{"unknown durability", "[sync, nosync]", "[sync, fsync]", `"fsync"`},
		{"missing component", "wal-ram:  {data: disk, wal: ram}", "wal-ram:  {data: disk}", `"wal"`},
		{"missing baseline", "baseline: all-disk\n", "", "baseline"},
		{"baseline not a placement", "baseline: all-disk", "baseline: all-ssd", `"all-ssd"`},
		{"tier cannot be created", "disk: {path: ", "disk: {path: /nonexistent-parent/x, old: ", "unknown key"},
		{"tier parent missing", fmt.Sprintf("disk: {path: %q}", filepath.Join(work, "disk")), "disk: {path: /nonexistent-parent/tier}", "does not exist"},
		{"yaml syntax", "clients: [1, 4]", "clients: [1, 4", "line"},
		{"typo key", "duration: 600ms", "duraton: 600ms", `did you mean "duration"`},
		{"zero duration", "duration: 600ms", "duration: 0s", "duration"},
		{"negative warmup", "warmup: 200ms", "warmup: -1s", "warmup"},
		{"zero clients", "clients: [1, 4]", "clients: [0, 4]", "clients"},
		{"negative records", "records: 2000", "records: -5", "records"},
		{"unknown option", "options: {cache: 8MiB}", "options: {cahce: 8MiB}", `"cahce"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.from) {
				t.Fatalf("test bug: %q not in study", tc.from)
			}
			dir := t.TempDir()
			st := writeStudy(t, dir, strings.Replace(good, tc.from, tc.to, 1))
			resultsDir := filepath.Join(dir, "results")
			for _, cmd := range [][]string{{"validate", st}, {"run", st, "--results", resultsDir}} {
				r := tierbench(t, cmd...)
				if r.code != 2 {
					t.Errorf("%s: exit %d, want 2\n%s", cmd[0], r.code, r.stderr)
				}
				if !strings.Contains(r.stderr, tc.want) {
					t.Errorf("%s: stderr lacks %q:\n%s", cmd[0], tc.want, r.stderr)
				}
			}
			if _, err := os.Stat(resultsDir); !os.IsNotExist(err) {
				t.Error("bad input wrote a results directory")
			}
		})
	}
	for _, args := range [][]string{
		{"validate"},
		{"run", "/no/such/study.yaml"},
		{"show", "--format", "xml"},
		{"run", "--no-such-flag"},
	} {
		if r := tierbench(t, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}

// TestInterrupt sends SIGINT during a run: the study is stored as
// interrupted, the run folders are removed, and the exit code is 130.
func TestInterrupt(t *testing.T) {
	work := t.TempDir()
	ram, disk := ramDir(t), filepath.Join(work, "disk")
	resultsDir := filepath.Join(work, "results")
	text := strings.Replace(fmt.Sprintf(tinyStudy, ram, disk), "duration: 600ms", "duration: 30s", 1)
	st := writeStudy(t, work, text)
	cmd := exec.Command(binary, "run", st, "--results", resultsDir)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String(), "measured") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, errb.String())
	}
	for _, tierDir := range []string{ram, disk} {
		if ents, _ := os.ReadDir(tierDir); len(ents) != 0 {
			t.Errorf("run folders left in %s after Ctrl-C", tierDir)
		}
	}
	r := tierbench(t, "show", "--results", resultsDir, "--format", "json")
	var got showJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("show json: %v\n%s", err, r.stdout)
	}
	if got.Study.Status != "interrupted" || got.Study.FinishedAt.IsZero() {
		t.Errorf("study status %q finished %v", got.Study.Status, got.Study.FinishedAt)
	}
}

// mountsUnder lists mount points below dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	mounts, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range mounts {
		if strings.HasPrefix(m.Point, dir) {
			out = append(out, m.Point)
		}
	}
	return out
}

// studyIDs lists the ids of the studies stored in resultsDir.
func studyIDs(t *testing.T, resultsDir string) []string {
	t.Helper()
	r := tierbench(t, "list", "--results", resultsDir)
	var ids []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && studyIDRe.MatchString(f[0]) {
			ids = append(ids, f[0])
		}
	}
	return ids
}

// studyIDRe is a study id as list prints it: when it started, and 6 hex
// digits; list's heading lines are not ids.
var studyIDRe = regexp.MustCompile(`^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$`)

// loopsBackedBy lists loop devices whose backing file contains tag.
func loopsBackedBy(t *testing.T, tag string) []string {
	t.Helper()
	out, _ := exec.Command("losetup", "-l", "-n", "-O", "NAME,BACK-FILE").Output()
	var devs []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, tag) {
			devs = append(devs, line)
		}
	}
	return devs
}

const provisionedStudy = `name: provisioned
engine: pebble
tiers:
  pm:   {loop: {backing: ram, size: 64MiB, fs: ext4}}
  fast: {tmpfs: {size: 64MiB}}
  sata: {loop: {backing: ram, size: 64MiB, fs: ext4}, latency: {fsync: 1ms}, throttle: {write_iops: 5000}}
  disk: {path: %q}
placements:
  all-disk: {data: disk, wal: disk}
  wal-pm:   {data: disk, wal: pm}
  all-fast: {data: fast, wal: fast}
  all-sata: {data: sata, wal: sata}
baseline: all-disk
durability: [sync]
workload: {name: ycsb-a, records: 1000}
clients: [2]
warmup: 100ms
duration: %s
`

// TestProvisionedTiersAndKill9 runs a study on a RAM-backed loop tier and a
// tmpfs tier to the end (nothing may be left), then kills tierbench with -9
// mid-run: `run` must then refuse and name the leftovers, and `cleanup`
// must leave no mount, loop device, image or run folder behind.
func TestProvisionedTiersAndKill9(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root for mounts and loop devices")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skipf(t, "%s not installed", tool)
		}
	}
	if err := emulate.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	if err := throttle.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	state := os.Getenv("TIERBENCH_STATE_DIR")
	work := t.TempDir()
	disk := filepath.Join(work, "disk")
	resultsDir := filepath.Join(work, "results")
	// nothingLeft checks for what this test's studies could leave; resources
	// are named after the study id, so other tests running at the same time
	// do not count.
	nothingLeft := func(when string) {
		t.Helper()
		if m := mountsUnder(t, state); len(m) != 0 {
			t.Errorf("%s: mounts left: %v", when, m)
		}
		if mnts, _ := os.ReadDir(filepath.Join(state, "mnt")); len(mnts) != 0 {
			t.Errorf("%s: mount point folders left: %v", when, mnts)
		}
		if ents, _ := os.ReadDir(disk); len(ents) != 0 {
			t.Errorf("%s: run folders left in %s", when, disk)
		}
		for _, id := range studyIDs(t, resultsDir) {
			if l := loopsBackedBy(t, "tierbench-"+id); len(l) != 0 {
				t.Errorf("%s: loop devices left: %v", when, l)
			}
			for _, pattern := range []string{"/dev/shm/tierbench-" + id + "*", "/sys/fs/cgroup/tierbench-" + id, "/sys/fs/cgroup/*/tierbench-" + id} {
				if left, _ := filepath.Glob(pattern); len(left) != 0 {
					t.Errorf("%s: left behind: %v", when, left)
				}
			}
		}
	}

	st := writeStudy(t, work, fmt.Sprintf(provisionedStudy, disk, "300ms"))
	r := tierbench(t, "run", st, "--results", resultsDir)
	if r.code != 0 {
		t.Fatalf("run exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "loop") && !strings.Contains(r.stdout, "ext4") {
		t.Errorf("the table does not describe the loop tier:\n%s", r.stdout)
	}
	nothingLeft("after a finished study")
	r = tierbench(t, "show", "--results", resultsDir, "--format", "json")
	var doc struct {
		Runs []struct {
			Placement string
			Telemetry struct {
				Tiers map[string]struct {
					Device    string  `json:"device"`
					WriteIOPS float64 `json:"write_iops"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, run := range doc.Runs {
		if run.Placement != "wal-pm" {
			continue
		}
		// The device and its writes, counted over the window; not the host's
		// CPU, a per-second sample that a 300ms window may not hold.
		pm := run.Telemetry.Tiers["pm"]
		if !strings.HasPrefix(pm.Device, "loop") || pm.WriteIOPS <= 0 {
			t.Errorf("telemetry of a synced run with its WAL on a loop tier: %+v", run.Telemetry)
		}
	}

	st = writeStudy(t, work, fmt.Sprintf(provisionedStudy, disk, "60s"))
	cmd := exec.Command(binary, "run", st, "--results", resultsDir)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String(), "measured") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if m := mountsUnder(t, state); len(m) == 0 {
		t.Fatalf("the killed run left no mounts: the test did not kill it mid-run\n%s", errb.String())
	}

	r = tierbench(t, "run", st, "--results", resultsDir)
	if r.code != 2 || !strings.Contains(r.stderr, "tierbench cleanup") || !strings.Contains(r.stderr, "mount") {
		t.Errorf("run with leftovers: exit %d, want 2 naming them\n%s", r.code, r.stderr)
	}
	r = tierbench(t, "cleanup")
	if r.code != 0 || !strings.Contains(r.stdout, "undone") {
		t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	nothingLeft("after cleanup")
	if r = tierbench(t, "cleanup"); r.code != 0 || !strings.Contains(r.stdout, "nothing to clean up") {
		t.Errorf("second cleanup: exit %d\n%s", r.code, r.stdout)
	}
}

// TestServerEngines runs a tiny study on each server engine: the server is
// started per run on 127.0.0.1 with its components on two tiers, YCSB runs
// against it, its version is recorded, and no server outlives the study.
func TestServerEngines(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "server engines run their servers as their own users, which needs root")
	}
	cases := []struct {
		engine, binary, components string
	}{
		{"postgres", "/usr/lib/postgresql", "{data: disk, wal: fast}"},
		{"mariadb", "mariadbd", "{data: disk, redo: fast}"},
		{"redis", "redis-server", "{data: fast}"},
	}
	for _, tc := range cases {
		t.Run(tc.engine, func(t *testing.T) {
			if _, err := os.Stat(tc.binary); err != nil {
				if _, err := exec.LookPath(tc.binary); err != nil {
					testenv.Skipf(t, "%s not installed", tc.binary)
				}
			}
			// Server users must be able to enter the tier folders.
			work := serverWork(t, "tierbench-e2e-")
			st := writeStudy(t, work, fmt.Sprintf(`name: %s-e2e
engine: %s
tiers:
  disk: {path: %q}
  fast: {path: %q}
placements:
  p: %s
baseline: p
durability: [sync, async]
workload: {name: ycsb-a, records: 500}
clients: [2]
warmup: 200ms
duration: 500ms
`, tc.engine, tc.engine, filepath.Join(work, "disk"), filepath.Join(work, "fast"), tc.components))
			resultsDir := filepath.Join(work, "results")
			r := tierbench(t, "run", st, "--results", resultsDir)
			if r.code != 0 {
				t.Fatalf("run exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			r = tierbench(t, "show", "--results", resultsDir, "--format", "json")
			var doc struct {
				Study struct {
					EngineVersion string `json:"engine_version"`
				}
				Runs []struct {
					Status     string
					Ops        int64
					Durability string
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Study.EngineVersion == "" || len(doc.Runs) != 2 {
				t.Fatalf("study %+v", doc)
			}
			for _, run := range doc.Runs {
				if run.Status != "ok" || run.Ops == 0 {
					t.Errorf("%s run: %+v", run.Durability, run)
				}
			}
			if left := serversUsing(work); len(left) > 0 {
				t.Errorf("servers left running: %v", left)
			}
		})
	}
}

// serversUsing lists live processes whose command line or working folder
// mentions dir.
func serversUsing(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		stat, _ := os.ReadFile(filepath.Join(p, "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // a zombie holds nothing
		}
		cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		if bytes.Contains(cmd, []byte(dir)) || strings.HasPrefix(cwd, dir) {
			out = append(out, p+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// TestStandardDrivers runs each standard tool beside tierbench's own
// driver as one more axis of the matrix: every run carries its driver, and
// show compares placement/driver series with the baseline placement under
// the first driver.
func TestStandardDrivers(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "server engines run their servers as their own users, which needs root")
	}
	cases := []struct {
		engine, components, workload, tool, op string
	}{
		{"postgres", "{data: disk, wal: disk}", "{name: tpcb, scale: 1}", "pgbench", "tpcb"},
		{"mariadb", "{data: disk, redo: disk}", "{name: oltp-read-write, table_size: 2000, rand_type: uniform}", "sysbench", "transaction"},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			if _, err := exec.LookPath(tc.tool); err != nil {
				testenv.Skipf(t, "%s not installed", tc.tool)
			}
			work := serverWork(t, "tierbench-e2e-")
			st := writeStudy(t, work, fmt.Sprintf(`name: drivers-e2e
engine: %s
tiers:
  disk: {path: %q}
placements:
  p: %s
baseline: p
durability: [async]
driver: [builtin, %s]
workload: %s
clients: [2]
warmup: 1s
duration: 2s
probe: off
`, tc.engine, filepath.Join(work, "disk"), tc.components, tc.tool, tc.workload))
			resultsDir := filepath.Join(work, "results")
			r := tierbench(t, "run", st, "--results", resultsDir)
			if r.code != 0 {
				t.Fatalf("run exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "p/"+tc.tool) || !strings.Contains(r.stdout, "drivers builtin, "+tc.tool) {
				t.Errorf("show does not name the drivers:\n%s", r.stdout)
			}
			r = tierbench(t, "show", "--results", resultsDir, "--format", "json")
			type driverRun struct {
				Driver, Status, Error string
				Ops                   int64
				ByOp                  map[string]json.RawMessage `json:"by_op"`
			}
			var doc struct {
				Study  struct{ Drivers []string }
				Runs   []driverRun
				Groups []struct {
					Placement string
					Ratio     float64 `json:"ratio_vs_baseline"`
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(doc.Study.Drivers, []string{"builtin", tc.tool}) || len(doc.Runs) != 2 {
				t.Fatalf("study drivers %v, %d runs", doc.Study.Drivers, len(doc.Runs))
			}
			// The round's two cells ran in a shuffled order: one run each.
			for _, want := range []string{"builtin", tc.tool} {
				i := slices.IndexFunc(doc.Runs, func(r driverRun) bool { return r.Driver == want })
				if i < 0 {
					t.Errorf("no run of driver %s", want)
					continue
				}
				if run := doc.Runs[i]; run.Status != "ok" || run.Ops == 0 || run.ByOp[tc.op] == nil {
					t.Errorf("run of %s: status %s %s, %d ops, ops %v", want, run.Status, run.Error, run.Ops, run.ByOp)
				}
			}
			if len(doc.Groups) != 2 || doc.Groups[1].Placement != "p/"+tc.tool || doc.Groups[1].Ratio <= 0 {
				t.Errorf("groups %+v", doc.Groups)
			}
			if left := serversUsing(work); len(left) > 0 {
				t.Errorf("servers left running: %v", left)
			}
		})
	}
}

// TestTargetServer measures a server tierbench did not start: a real
// MariaDB started here plays the user's server. tierbench places nothing,
// records the target without its password, and leaves the server running.
func TestTargetServer(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "the server runs as its own OS user, which needs root")
	}
	if _, err := exec.LookPath("mariadbd"); err != nil {
		testenv.Skip(t, "mariadbd not installed")
	}
	work, err := os.MkdirTemp("/var/tmp", "tierbench-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	dirs := map[string]string{"data": filepath.Join(work, "data"), "redo": filepath.Join(work, "redo")}
	for _, d := range append([]string{work}, dirs["data"], dirs["redo"]) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o755)
	}
	db, err := mariadb.Engine{}.Open(context.Background(), engine.Config{Dirs: dirs, Durability: engine.Sync, Options: mariadb.Engine{}.Spec().MustResolveOptions(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ep := db.(engine.Served).Endpoint()
	if ep.Password == "" {
		t.Fatal("the started server's account has no password to hide")
	}
	st := writeStudy(t, work, fmt.Sprintf(`name: target-e2e
engine: mariadb
target: %s
workload: {name: ycsb-a, records: 500}
clients: [2]
warmup: 200ms
duration: 500ms
probe: off
`, ep.URL()))
	resultsDir := filepath.Join(work, "results")
	r := tierbench(t, "run", st, "--results", resultsDir)
	if r.code != 0 {
		t.Fatalf("run exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = tierbench(t, "show", "--results", resultsDir, "--format", "json")
	if strings.Contains(r.stdout, ep.Password) {
		t.Error("the target's password is in the stored results")
	}
	var doc struct {
		Study struct{ Target string }
		Runs  []struct {
			Placement, Durability, Status, Error string
			Ops                                  int64
			Dirs                                 map[string]string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Study.Target, "mysql://tierbench:xxxxx@127.0.0.1:") || len(doc.Runs) != 1 {
		t.Fatalf("target %q, %d runs", doc.Study.Target, len(doc.Runs))
	}
	if run := doc.Runs[0]; run.Status != "ok" || run.Ops == 0 || run.Placement != "target" || run.Durability != "as-configured" || len(run.Dirs) != 0 {
		t.Errorf("run %+v", run)
	}
	if err := db.(engine.Checker).Check(); err != nil {
		t.Errorf("the user's server did not survive the study: %v", err)
	}
}

// buildStatic builds tierbench as make build does (no cgo): the node's
// load generator image holds this binary and no C library.
func buildStatic(binary string) ([]byte, error) {
	cmd := exec.Command("go", "build", "-o", binary, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}
