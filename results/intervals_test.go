package results

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hist"
)

// TestIntervalHistograms: a run's interval histograms are stored beside
// its phase histograms and read back in order with their time; a
// replacement of the run drops them with it.
func TestIntervalHistograms(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const id = "20261122-130000-dddddd"
	if err := s.PutStudy(ctx, &Study{ID: id, Name: "s", Engine: "pebble", Workload: "ycsb-a", Status: StudyDone}); err != nil {
		t.Fatal(err)
	}
	began := time.Date(2026, 11, 22, 13, 0, 0, 123456789, time.UTC)
	var hists []Histogram
	for i, phase := range []string{"warmup", "measured", "measured"} {
		h := hist.New()
		for range i + 1 {
			hist.Record(h, time.Duration(i+1)*time.Millisecond)
		}
		enc, err := hist.Encode(h)
		if err != nil {
			t.Fatal(err)
		}
		hists = append(hists, Histogram{Op: OpAll, Kind: KindLatency, Phase: phase, Encoded: enc,
			Interval: &Span{Index: i, Start: began.Add(time.Duration(i) * time.Second), Length: time.Second}})
	}
	hists = append(hists, Histogram{Op: OpAll, Kind: KindLatency, Phase: "measured", Encoded: hists[2].Encoded})
	r := &Run{ID: "i1", StudyID: id, Seq: 1, Status: RunOK}
	if err := s.AddRun(ctx, r, hists); err != nil {
		t.Fatal(err)
	}
	back, err := s.IntervalHistograms(ctx, "i1", OpAll, KindLatency)
	if err != nil || len(back) != 3 {
		t.Fatalf("interval histograms: %d, %v; want 3", len(back), err)
	}
	for i, h := range back {
		dec, err := hist.Decode(h.Encoded)
		if err != nil {
			t.Fatal(err)
		}
		want := hists[i]
		if h.Interval.Index != i || h.Phase != want.Phase || !h.Interval.Start.Equal(want.Interval.Start) ||
			h.Interval.Length != time.Second || dec.TotalCount() != int64(i+1) {
			t.Errorf("interval %d read back as %d %s at %v for %v with %d values", i, h.Interval.Index, h.Phase,
				h.Interval.Start, h.Interval.Length, dec.TotalCount())
		}
	}
	if ph, err := s.Histogram(ctx, "i1", OpAll, KindLatency, "measured"); err != nil || ph.TotalCount() != 3 {
		t.Errorf("the phase histogram: %v, %v", ph, err)
	}
	if err := s.ReplaceRun(ctx, &Run{ID: "i1", StudyID: id, Seq: 1, Status: RunFailed}, nil); err != nil {
		t.Fatal(err)
	}
	if back, err := s.IntervalHistograms(ctx, "i1", OpAll, KindLatency); err != nil || len(back) != 0 {
		t.Errorf("after the run's replacement: %d interval histograms, %v", len(back), err)
	}
}

// TestStoreWithoutIntervals: a store made before interval histograms were
// kept (no table for them) opens, shows its runs, and its runs have none.
func TestStoreWithoutIntervals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	const id = "20251122-130000-eeeeee"
	for _, q := range []string{schema + probeSchema, "PRAGMA user_version = 1",
		`INSERT INTO studies (id, name, engine, workload, status, started_at, doc) VALUES ('` + id + `', 'old', 'pebble', 'ycsb-a', 'done', '2025-11-22T13:00:00Z', '{"id":"` + id + `","name":"old"}')`,
		`INSERT INTO runs (id, study_id, seq, placement, durability, clients, repeat, status, error, throughput, doc)
			VALUES ('o1', '` + id + `', 1, 'p', 'sync', 1, 1, 'ok', '', 10, '{"id":"o1","study_id":"` + id + `","status":"ok"}')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := OpenExisting(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx, id)
	if err != nil || len(runs) != 1 {
		t.Fatalf("the old store's runs: %+v, %v", runs, err)
	}
	if back, err := s.IntervalHistograms(ctx, "o1", OpAll, KindLatency); err != nil || len(back) != 0 {
		t.Errorf("an old run's interval histograms: %d, %v; want none", len(back), err)
	}
}
