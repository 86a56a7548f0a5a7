package redis

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// TestBackgroundWritesFromLog reads the snapshots and AOF rewrites of
// server logs as Redis 7 writes them.
func TestBackgroundWritesFromLog(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.ParseInLocation(logTimeLayout, s, time.UTC)
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
		{"a bgsave", `41:M 28 Nov 2026 15:17:01.100 * Background saving started by pid 42
42:C 28 Nov 2026 15:17:01.200 * DB saved on disk
41:M 28 Nov 2026 15:17:01.300 * Background saving terminated with success
`, []engine.Event{{At: at("28 Nov 2026 15:17:01.100"), Duration: 200 * time.Millisecond, Kind: engine.EventSnapshot,
			Detail: "RDB snapshot (BGSAVE): Background saving terminated with success"}}},
		{"a rewrite, and a save left running", `41:M 28 Nov 2026 15:17:02.000 * Background append only file rewriting started by pid 43
41:M 28 Nov 2026 15:17:02.500 * Background AOF rewrite terminated with success
41:M 28 Nov 2026 15:17:02.510 * Background AOF rewrite finished successfully
41:M 28 Nov 2026 15:17:03.000 * Background saving started by pid 44
not a log line
`, []engine.Event{
			{At: at("28 Nov 2026 15:17:02.000"), Duration: 500 * time.Millisecond, Kind: engine.EventSnapshot, Detail: "AOF rewrite: Background AOF rewrite terminated with success"},
			{At: at("28 Nov 2026 15:17:03.000"), Kind: engine.EventSnapshot, Detail: "RDB snapshot (BGSAVE) (not ended when the log was read)"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := backgroundWrites(bufio.NewScanner(strings.NewReader(c.log)), time.UTC)
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for i := range got {
				if !got[i].At.Equal(c.want[i].At) || got[i].Duration != c.want[i].Duration || got[i].Detail != c.want[i].Detail || got[i].Kind != c.want[i].Kind {
					t.Errorf("event %d: got %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// TestSnapshotEvents asks a real server for a BGSAVE and an AOF rewrite
// and finds both among its events.
func TestSnapshotEvents(t *testing.T) {
	db := openTest(t, engine.Async, nil)
	ctx := context.Background()
	from := time.Now().Add(-time.Second) // the log's times are to the millisecond
	for _, cmd := range []string{"BGSAVE", "BGREWRITEAOF"} {
		if err := db.client.Do(ctx, cmd).Err(); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		// One background write at a time: wait until this one ended.
		for range 100 {
			info, err := db.client.Info(ctx, "persistence").Result()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(info, "rdb_bgsave_in_progress:0") && strings.Contains(info, "aof_rewrite_in_progress:0") &&
				!strings.Contains(info, "aof_rewrite_scheduled:1") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var got []string
	for _, e := range db.Events(ctx, from, time.Now()) {
		got = append(got, e.Detail)
		if e.Kind != engine.EventSnapshot || e.At.Before(from) || e.Duration < 0 {
			t.Errorf("event %+v", e)
		}
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"RDB snapshot (BGSAVE): Background saving terminated with success", "AOF rewrite: Background AOF rewrite"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q among the events:\n%s", want, all)
		}
	}
	t.Logf("events:\n%s", all)
}
