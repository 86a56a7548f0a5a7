package results

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hist"
)

func TestStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{"20261122-100000-aaaaaa", "20261122-110000-bbbbbb", "20261122-110000-bbbccc"} {
		st := &Study{ID: id, Name: "s", Engine: "pebble", Workload: "ycsb-a", Status: StudyRunning,
			StartedAt: t0.Add(time.Duration(i) * time.Hour)}
		if err := s.PutStudy(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	done := t0.Add(5 * time.Hour)
	if err := s.PutStudy(ctx, &Study{ID: "20261122-100000-aaaaaa", Name: "s", Engine: "pebble", Workload: "ycsb-a",
		Status: StudyDone, StartedAt: t0, FinishedAt: &done}); err != nil {
		t.Fatal(err)
	}

	list, err := s.Studies(ctx)
	if err != nil || len(list) != 3 || list[0].ID != "20261122-110000-bbbccc" {
		t.Fatalf("studies newest first: %v %v", list, err)
	}
	cases := []struct {
		ref, wantID, wantErr string
		is                   error // the sentinel the error wraps
	}{
		{"latest", "20261122-110000-bbbccc", "", nil},
		{"", "20261122-110000-bbbccc", "", nil},
		{"20261122-100000", "20261122-100000-aaaaaa", "", nil},
		{"20261122-110000-bbb", "", "ambiguous study id \"20261122-110000-bbb\": it matches 2 studies", ErrAmbiguous},
		{"2026", "", "20261122-110000-bbbccc  \"s\"", ErrAmbiguous},
		{"nope", "", "not found", ErrNoStudy},
		{"2026%", "", "not found", ErrNoStudy},
	}
	for _, tc := range cases {
		st, err := s.Study(ctx, tc.ref)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, tc.is) {
				t.Errorf("%q: err %v, want %q wrapping %v", tc.ref, err, tc.wantErr, tc.is)
			}
			continue
		}
		if err != nil || st.ID != tc.wantID {
			t.Errorf("%q: %v %v, want %s", tc.ref, st, err, tc.wantID)
		}
	}
	if st, _ := s.Study(ctx, "20261122-100000-aaaaaa"); st.Status != StudyDone || st.FinishedAt == nil {
		t.Errorf("update not stored: %+v", st)
	}

	h := hist.New()
	hist.Record(h, 1500*time.Microsecond)
	enc, err := hist.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	for seq := 2; seq >= 1; seq-- {
		r := &Run{ID: "r" + string(rune('0'+seq)), StudyID: "20261122-100000-aaaaaa", Seq: seq, Placement: "p",
			Durability: "sync", Clients: 4, Repeat: 1, Status: RunOK, ThroughputOpsS: 10}
		if err := s.AddRun(ctx, r, []Histogram{{Op: OpAll, Kind: KindLatency, Phase: "measured", Encoded: enc}}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.Runs(ctx, "20261122-100000-aaaaaa")
	if err != nil || len(runs) != 2 || runs[0].Seq != 1 {
		t.Fatalf("runs in order: %+v %v", runs, err)
	}
	back, err := s.Histogram(ctx, "r1", OpAll, KindLatency, "measured")
	if err != nil || back.TotalCount() != 1 {
		t.Fatalf("histogram: %v %v", back, err)
	}
	if _, err := s.Histogram(ctx, "r1", "read", KindLatency, "measured"); err == nil {
		t.Error("missing histogram found")
	}
	// A failed insert leaves nothing half-written.
	dup := &Run{ID: "r1", StudyID: "20261122-100000-aaaaaa", Seq: 3}
	if err := s.AddRun(ctx, dup, nil); err == nil {
		t.Error("duplicate run id accepted")
	}

	// A replacement takes the old run's place with its own histograms; one
	// that fails (a histogram twice) leaves the old run as it was.
	again := &Run{ID: "r1", StudyID: "20261122-100000-aaaaaa", Seq: 1, Placement: "p", Durability: "sync", Clients: 4, Repeat: 1, Status: RunFailed}
	twice := []Histogram{{Op: OpAll, Kind: KindLatency, Phase: "measured", Encoded: enc}, {Op: OpAll, Kind: KindLatency, Phase: "measured", Encoded: enc}}
	if err := s.ReplaceRun(ctx, again, twice); err == nil {
		t.Error("a replacement with a histogram twice stored")
	}
	if runs, _ := s.Runs(ctx, "20261122-100000-aaaaaa"); len(runs) != 2 || runs[0].Status != RunOK {
		t.Errorf("a failed replacement changed the runs: %+v", runs)
	}
	if h, err := s.Histogram(ctx, "r1", OpAll, KindLatency, "measured"); err != nil || h.TotalCount() != 1 {
		t.Errorf("a failed replacement lost the old histogram: %v", err)
	}
	if err := s.ReplaceRun(ctx, again, nil); err != nil {
		t.Fatal(err)
	}
	if runs, _ := s.Runs(ctx, "20261122-100000-aaaaaa"); len(runs) != 2 || runs[0].Status != RunFailed {
		t.Errorf("after the replacement: %+v", runs)
	}
	if _, err := s.Histogram(ctx, "r1", OpAll, KindLatency, "measured"); err == nil {
		t.Error("the replaced run's histogram is still there")
	}
}

func TestOpenExistingDoesNotCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	if _, err := OpenExisting(dir); !errors.Is(err, ErrNoStudy) {
		t.Fatalf("err %v, want ErrNoStudy", err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Study(context.Background(), "latest"); !errors.Is(err, ErrNoStudy) {
		t.Errorf("empty store: %v", err)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("err %v, want a refusal naming the newer schema", err)
	}
}

// TestVerifiedAndEvidenceRoundTrip: what a run proves (its invariant check)
// and the evidence of a bottleneck survive the store, and a run stored
// without them reads back without them.
func TestVerifiedAndEvidenceRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const id = "20261122-120000-cccccc"
	if err := s.PutStudy(ctx, &Study{ID: id, Name: "bank", Engine: "postgres", Workload: "bank", Status: StudyDone}); err != nil {
		t.Fatal(err)
	}
	checked := &Run{ID: "v1", StudyID: id, Seq: 1, Status: RunOK, Verified: true,
		Verification: "sum of balances = 10000000 over 100000 accounts",
		Crash: &Crash{Kind: "process", AtS: 1.25, RecoveryS: 0.2, Checked: true, LostAcked: 14, LostWindowMS: 1.5,
			Consistent: true, Detail: "14 of 4132 record fields with an acknowledged write lost it"},
		Bottleneck: &Bottleneck{Kind: "fsync", Text: "WAL fsync-bound", Evidence: map[string]float64{"flushes_per_s": 4922, "flush_await_ms": 0.07}}}
	plain := &Run{ID: "v2", StudyID: id, Seq: 2, Status: RunOK}
	for _, r := range []*Run{checked, plain} {
		if err := s.AddRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.Runs(ctx, id)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	if got := runs[0]; !got.Verified || got.Verification != checked.Verification ||
		got.Bottleneck == nil || got.Bottleneck.Evidence["flush_await_ms"] != 0.07 || got.Crash == nil || *got.Crash != *checked.Crash {
		t.Errorf("read back %+v (bottleneck %+v), want verified with its check and evidence", got, got.Bottleneck)
	}
	if got := runs[1]; got.Verified || got.Verification != "" || got.Crash != nil {
		t.Errorf("unchecked run reads back verified: %+v", got)
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, runs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(csv.String(), ",true,sum of balances = 10000000 over 100000 accounts,process,1.25,0.2,14,1.5,true,14 of 4132") {
		t.Errorf("csv lacks the check:\n%s", csv.String())
	}
}
