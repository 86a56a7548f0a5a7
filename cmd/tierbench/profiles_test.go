package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"missing profile file", "{path: DISK, profile: ./gone.yaml}", "", "read profile file: open"},
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
