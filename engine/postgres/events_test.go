package postgres

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// TestCheckpointsFromLog reads the checkpoints of server logs as
// PostgreSQL 15 writes them.
func TestCheckpointsFromLog(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(logTimeLayout, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name string
		log  string
		want []engine.Event
	}{
		{"one timed", `2026-11-28 15:17:01.100 UTC [41] LOG:  checkpoint starting: time
2026-11-28 15:17:01.350 UTC [41] LOG:  checkpoint complete: wrote 3 buffers (0.0%); 0 WAL file(s) added, 0 removed, 0 recycled; write=0.201 s, sync=0.002 s, total=0.250 s; sync files=2, longest=0.001 s, average=0.001 s; distance=12 kB, estimate=12 kB
`, []engine.Event{{At: at("2026-11-28 15:17:01.100 UTC"), Duration: 250 * time.Millisecond, Kind: engine.EventCheckpoint,
			Detail: "time: wrote 3 buffers (0.0%); write=0.201 s, sync=0.002 s, total=0.250 s; distance=12 kB, estimate=12 kB"}}},
		{"other lines around, one left running", `2026-11-28 15:17:00.000 UTC [40] LOG:  database system is ready to accept connections
not a log line
2026-11-28 15:17:02.000 UTC [41] LOG:  checkpoint starting: immediate force wait
2026-11-28 15:17:02.000 UTC [41] LOG:  checkpoint complete: wrote 0 buffers (0.0%)
2026-11-28 15:17:03.000 UTC [41] LOG:  checkpoint starting: wal
`, []engine.Event{
			{At: at("2026-11-28 15:17:02.000 UTC"), Kind: engine.EventCheckpoint, Detail: "immediate force wait: wrote 0 buffers (0.0%)"},
			{At: at("2026-11-28 15:17:03.000 UTC"), Kind: engine.EventCheckpoint, Detail: "wal (not complete when the log was read)"},
		}},
		{"a complete without its start", `2026-11-28 15:17:02.000 UTC [41] LOG:  checkpoint complete: wrote 0 buffers (0.0%)
`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := checkpoints(bufio.NewScanner(strings.NewReader(c.log)))
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for i := range got {
				if !got[i].At.Equal(c.want[i].At) || got[i].Duration != c.want[i].Duration || got[i].Kind != c.want[i].Kind || got[i].Detail != c.want[i].Detail {
					t.Errorf("event %d: got %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// TestCheckpointEvent forces a checkpoint on a real server and finds it
// among the server's events, with what it wrote.
func TestCheckpointEvent(t *testing.T) {
	needPostgres(t)
	d := openTest(t, testConfig(t, engine.Sync, nil))
	ctx := context.Background()
	from := time.Now()
	if _, err := d.db.ExecContext(ctx, "CREATE TABLE t AS SELECT g FROM generate_series(1, 1000) g"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	var found []engine.Event
	// The server writes its log itself; give the line a moment to land.
	for range 50 {
		found = nil
		for _, e := range d.Events(ctx, from, time.Now()) {
			if strings.HasPrefix(e.Detail, "immediate force wait: wrote ") {
				found = append(found, e)
			}
		}
		if len(found) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(found) != 1 {
		t.Fatalf("want the forced checkpoint among the events, got %+v", d.Events(ctx, from, time.Now()))
	}
	e := found[0]
	if e.Kind != engine.EventCheckpoint || e.At.Before(from.Add(-time.Second)) || e.Duration < 0 {
		t.Errorf("checkpoint event %+v", e)
	}
	t.Logf("checkpoint: %s at %s, %s", e.Detail, e.At, e.Duration)
	if before := d.Events(ctx, from.Add(-time.Hour), from.Add(-30*time.Minute)); len(before) != 0 {
		t.Errorf("events before the server started: %+v", before)
	}
}
