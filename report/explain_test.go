package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/results"
)

// oldRunJSON is a run as tierbench stored it before bottlenecks carried
// evidence and telemetry split await by direction: its sentence was
// computed while it ran.
const oldRunJSON = `{"id":"r1","study_id":"s1","seq":1,"placement":"all-disk","components":{"data":"disk","wal":"disk"},
 "durability":"sync","clients":1,"repeat":1,"status":"ok","throughput_ops_s":1762,
 "bottleneck":{"kind":"none","text":"not storage-bound: CPU at 25%, busiest device disk (vda) at 55% utilisation"},
 "telemetry":{"tiers":{"disk":{"device":"vda","read_iops":0,"write_iops":1971,"read_mbps":0,"write_mbps":4.4,"await_ms":0.14,"util_pct":55,"flushes_per_s":872}},
  "host":{"cpu_user_pct":17,"cpu_sys_pct":8,"cpu_iowait_pct":0,"cpu_steal_pct":0},"engine":{"rss_bytes_max":1,"cpu_pct":16}}}`

// oldRunNoTelemetryJSON is a run stored with a sentence but no telemetry.
const oldRunNoTelemetryJSON = `{"id":"r2","study_id":"s1","seq":2,"placement":"all-disk","components":{"data":"disk","wal":"disk"},
 "durability":"nosync","clients":1,"repeat":1,"status":"ok","throughput_ops_s":20000,
 "bottleneck":{"kind":"cpu","text":"CPU-bound: 2 cores at 97%"}}`

func oldStudy(t *testing.T) (*results.Study, []results.Run) {
	t.Helper()
	st := &results.Study{ID: "s1", Name: "old", Engine: "pebble", Workload: "ycsb-a", Baseline: "all-disk", Status: results.StudyDone,
		Env: hostenv.Env{CPUs: 2}, Durability: []string{"sync", "nosync"}, Clients: []int{1},
		Placements: []results.Placement{{Name: "all-disk", Components: map[string]string{"data": "disk", "wal": "disk"}}}}
	var runs []results.Run
	for _, doc := range []string{oldRunJSON, oldRunNoTelemetryJSON} {
		var r results.Run
		if err := json.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return st, runs
}

// TestOldStoredRunsStillShowASentence: runs stored before evidence existed
// get a sentence computed from their telemetry (with its evidence), or
// keep the stored one when they have no telemetry.
func TestOldStoredRunsStillShowASentence(t *testing.T) {
	st, runs := oldStudy(t)
	var table strings.Builder
	if err := Show(&table, st, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sync c=1 all-disk: no single limit found: CPU 25% busy (engine 16% of one core), busiest device disk (vda) 55% utilised",
		"synced commits also waited on WAL's device vda (872 flushes/s, at least 12% of wall time",
		"nosync c=1 all-disk: CPU-bound: 2 cores at 97%",
	} {
		// show wraps its lines at 120 columns.
		if !strings.Contains(strings.Join(strings.Fields(table.String()), " "), want) {
			t.Errorf("show lacks %q:\n%s", want, table.String())
		}
	}
	var js strings.Builder
	if err := JSON(&js, st, runs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []results.Run `json:"runs"`
	}
	if err := json.Unmarshal([]byte(js.String()), &doc); err != nil {
		t.Fatal(err)
	}
	b := doc.Runs[0].Bottleneck
	if b == nil || b.Text == "" || b.Evidence["cpu_busy_pct"] != 25 || b.Evidence["device_util_pct"] != 55 {
		t.Errorf("json bottleneck %+v, want a sentence with its evidence", b)
	}
	if b := doc.Runs[1].Bottleneck; b == nil || b.Text != "CPU-bound: 2 cores at 97%" {
		t.Errorf("json bottleneck of the run without telemetry: %+v, want the stored one", b)
	}
}

// TestVerifiedIsShown: a run whose invariant check held says so in show,
// its JSON and the report's runs table.
func TestVerifiedIsShown(t *testing.T) {
	st, runs := oldStudy(t)
	for i := range runs {
		runs[i].Verified, runs[i].Verification = true, "sum of balances = 10000000 over 100000 accounts"
	}
	var table strings.Builder
	if err := Show(&table, st, runs); err != nil {
		t.Fatal(err)
	}
	if want := "verified after 2 of 2 ok run(s): sum of balances = 10000000 over 100000 accounts"; !strings.Contains(table.String(), want) {
		t.Errorf("show lacks %q:\n%s", want, table.String())
	}
	var js strings.Builder
	if err := JSON(&js, st, runs); err != nil {
		t.Fatal(err)
	}
	if want := `"verified": true`; !strings.Contains(js.String(), want) {
		t.Errorf("json lacks %s", want)
	}
	var md strings.Builder
	if err := Markdown(&md, Input{Study: st, Runs: runs}, t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| verified |", "yes: sum of balances = 10000000 over 100000 accounts", `cpu\_busy\_pct=25 `} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown report lacks %q", want)
		}
	}
}
