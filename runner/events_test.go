package runner

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/study"
)

// TestPebbleFlushesOnTheTimeline runs in-process Pebble with a memtable
// small enough to flush during the run: the flushes are stored with the
// run, on its timeline's clock.
func TestPebbleFlushesOnTheTimeline(t *testing.T) {
	root := t.TempDir()
	st := tinyStudy(t, map[string]string{"disk": filepath.Join(root, "disk")}, []study.Placement{
		{Name: "a", Components: map[string]string{"data": "disk", "wal": "disk"}},
	})
	st.Options = map[string]string{"memtable": "64KiB"}
	st.Duration = time.Second
	runs := runStored(t, root, st)
	if len(runs) != 1 || runs[0].Status != "ok" {
		t.Fatalf("runs %+v", runs)
	}
	r := runs[0]
	flushes := 0
	end := r.Timeline[len(r.Timeline)-1].T
	for _, e := range r.Events {
		if e.Kind != engine.EventFlush {
			continue
		}
		flushes++
		// On the timeline's clock: inside the driven part (a flush that
		// began before it and ended in it starts before 0).
		if e.T+e.DurationS < 0 || e.T > end+1 || e.Detail == "" || e.At.Before(r.StartedAt) {
			t.Errorf("flush %+v off the run's timeline (ends at %.2fs)", e, end)
		}
	}
	if flushes == 0 {
		t.Errorf("no flush stored with a run of a 64KiB memtable: events %+v", r.Events)
	}
	t.Logf("%d events, first %+v", len(r.Events), r.Events[0])
}
