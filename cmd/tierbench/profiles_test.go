package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/probe"
)

// TestRefusesBadProfiles: a tier's profile that cannot be used is refused
// by validate and run alike, exit 2, one problem naming the fix, nothing
// created.
func TestRefusesBadProfiles(t *testing.T) {
	for _, c := range []struct {
		name, tier, file string
		want             string
	}{
		{"unknown profile", "{path: DISK, profile: sata-sdd}", "", `unknown profile "sata-sdd"; did you mean "sata-ssd"?`},
		{"profile and latency", "{path: DISK, profile: sata-ssd, latency: {fsync: 2ms}}", "", "has both profile and latency; a profile sets the tier's latency and caps: remove latency"},
		{"malformed profile file", "{path: DISK, profile: bad.yaml}", "latency: {fsync: {p50: 2ms}}\ndurability: sometimes\nsource: x\n", `durability "sometimes" is not one of synced, written or none`},
		{"profile file that is not yaml", "{path: DISK, profile: bad.yaml}", "latency: {fsync: [\n", "not a profile"},
		{"missing profile file", "{path: DISK, profile: ./gone.yaml}", "", "read profile file ./gone.yaml: no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			disk := filepath.Join(dir, "disk")
			if c.file != "" {
				if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(c.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			text := strings.Replace(hostileStudy, "{disk: {path: DISK}}", "{disk: "+c.tier+"}", 1)
			text = strings.NewReplacer("NAME", "prof", "PLACEMENT", "all-disk", "DURATION", "1s", "EXTRA", "", "DISK", disk).Replace(text)
			refused(t, dir, writeStudy(t, dir, text), nil, c.want)
			if _, err := os.Stat(disk); !os.IsNotExist(err) {
				t.Error("bad input created the tier folder")
			}
		})
	}
}

// TestProfilesCommand: tierbench profiles lists every shipped profile with
// its source, in text and JSON, and refuses an unknown name with exit 2.
func TestProfilesCommand(t *testing.T) {
	r := tierbench(t, "profiles")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, w := range []string{"optane-pmem-100", "optane-p4800x", "nvme-tlc", "sata-ssd", "hdd-7200", "aws-gp3", "source: ", "assumed: "} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("profiles lacks %q:\n%s", w, r.stdout)
		}
	}
	r = tierbench(t, "profiles", "--format", "json", "hdd-7200")
	var doc struct {
		Profiles []struct {
			Name    string `json:"name"`
			Source  string `json:"source"`
			Latency struct {
				Fsync struct {
					P50 int64 `json:"p50_ns"`
				} `json:"fsync"`
			} `json:"latency"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Profiles) != 1 || doc.Profiles[0].Latency.Fsync.P50 != 8_300_000 || doc.Profiles[0].Source == "" {
		t.Fatalf("profiles --format json: %v\n%s", err, r.stdout)
	}
	r = tierbench(t, "profiles", "optane-pmem")
	if r.code != 2 || !strings.Contains(r.stderr, `did you mean "optane-pmem-100"`) {
		t.Fatalf("unknown profile: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestProbeProfile: probe --profile mounts an emulated tier for the
// profile in a RAM folder, prints each figure asked against achieved with
// the FUSE floor (JSON: fidelity and floor), and leaves nothing behind:
// no mount, no folder in /dev/shm, nothing in the ledger.
func TestProbeProfile(t *testing.T) {
	skipWithoutFuseAndFio(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	before := shmEntries(t)
	r := tierbenchEnv(t, dir, []string{"TIERBENCH_STATE_DIR=" + state}, "probe", "--profile", "sata-ssd", "--format", "json",
		"--runtime", "200ms", "--size", "4194304", "--results", filepath.Join(dir, "results"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Tiers    []map[string]any `json:"tiers"`
		Profile  string           `json:"profile"`
		Fidelity []struct {
			Figure   string  `json:"figure"`
			Asked    float64 `json:"asked"`
			Achieved float64 `json:"achieved"`
			Error    float64 `json:"error"`
		} `json:"fidelity"`
		Floor struct {
			Ops []struct {
				Op    string `json:"op"`
				Layer struct {
					P50 float64 `json:"p50"`
				} `json:"layer_us"`
			} `json:"ops"`
		} `json:"floor"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if doc.Profile != "sata-ssd" || len(doc.Fidelity) != 10 || len(doc.Floor.Ops) != 3 || len(doc.Tiers) != 1 {
		t.Fatalf("probe --profile JSON: %s", r.stdout)
	}
	for _, row := range doc.Fidelity {
		if row.Asked <= 0 || row.Achieved <= 0 {
			t.Errorf("fidelity row %+v: want both figures", row)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "fuse-floor.json")); err != nil {
		t.Errorf("the floor was not kept for validate: %v", err)
	}
	leftNothing(t, state, before)
}

// TestSaveProfileRoundTrip: probe PATH --save-profile FILE measures a
// folder and writes a profile that a study can name (profile: FILE) and
// validate accepts.
func TestSaveProfileRoundTrip(t *testing.T) {
	skipWithoutFuseAndFio(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	disk := filepath.Join(dir, "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "mydisk.yaml")
	env := []string{"TIERBENCH_STATE_DIR=" + state}
	r := tierbenchEnv(t, dir, env, "probe", disk, "--save-profile", file, "--runtime", "200ms", "--size", "4194304", "--results", filepath.Join(dir, "results"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(data), "by tierbench probe") {
		t.Fatalf("saved profile: %v\n%s", err, data)
	}
	study := strings.Replace(hostileStudy, "{disk: {path: DISK}}", "{disk: {path: DISK}, ram: {tmpfs: {size: 64MiB}, profile: mydisk.yaml}}", 1)
	study = strings.Replace(study, "PLACEMENT: {data: disk, wal: disk}", "all-disk: {data: disk, wal: disk}\n  wal-ram: {data: disk, wal: ram}", 1)
	study = strings.NewReplacer("NAME", "roundtrip", "DURATION", "1s", "EXTRA", "baseline: all-disk", "DISK", filepath.Join(dir, "disk2")).Replace(study)
	r = tierbenchEnv(t, dir, env, "validate", writeStudy(t, dir, study))
	if r.code != 0 || !strings.Contains(r.stdout, ": ok:") {
		t.Fatalf("validate of a study with the saved profile: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = tierbenchEnv(t, dir, env, "probe", disk, "--save-profile", filepath.Join(dir, "no", "such", "folder.yaml"))
	if r.code != 2 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("--save-profile into a missing folder: exit %d, %s", r.code, r.stderr)
	}

	// A device, a link and a pipe of the test's own stay what they were:
	// the device is written through, the link's file written, the pipe
	// nothing reads refused (see TestWritersKeepDevicesPipesAndLinks).
	dev := filepath.Join(dir, "null")
	if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatalf("mknod: %v", err)
	}
	link := filepath.Join(dir, "link.yaml")
	must(t, os.Symlink("mydisk.yaml", link))
	fifo := filepath.Join(dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	for out, want := range map[string]int{dev: 0, link: 0, fifo: 2} {
		r = tierbenchEnv(t, dir, env, "probe", disk, "--save-profile", out, "--runtime", "200ms", "--size", "4194304", "--results", filepath.Join(dir, "results"))
		if r.code != want {
			t.Errorf("--save-profile %s: exit %d, want %d\n%s", out, r.code, want, r.stderr)
		}
	}
	kind(t, dev, os.ModeCharDevice)
	kind(t, link, os.ModeSymlink)
	kind(t, fifo, os.ModeNamedPipe)
}

func skipWithoutFuseAndFio(t *testing.T) {
	t.Helper()
	if err := emulate.Supported(); err != nil {
		t.Skipf("no FUSE: %v", err)
	}
	if err := probe.Available(); err != nil {
		t.Skipf("%v", err)
	}
}

// shmEntries lists /dev/shm, to tell what a command left there.
func shmEntries(t *testing.T) map[string]bool {
	t.Helper()
	ents, _ := os.ReadDir("/dev/shm")
	out := map[string]bool{}
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

// leftNothing fails if the ledger in state holds anything, a tierbench
// mount is still there, or /dev/shm gained a probe's folder
// ("tierbench-floor-PID", "tierbench-profile-PID": probe.go's provisioner).
// Other tests' RAM images there ("tierbench-STUDY-TIER.img") are not the
// probe's: a side lane of `make test` may be making them meanwhile.
func leftNothing(t *testing.T, state string, before map[string]bool) {
	t.Helper()
	ledger, err := tier.OpenLedger(state)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("left in the ledger: %v", left)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), state) {
		t.Errorf("a mount under %s is left", state)
	}
	for name := range shmEntries(t) {
		if !before[name] && (strings.HasPrefix(name, "tierbench-floor-") || strings.HasPrefix(name, "tierbench-profile-")) {
			t.Errorf("left in /dev/shm: %s", name)
		}
	}
}
