package runner

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/telemetry"
)

// liveLog records what a study tells its live view.
type liveLog struct {
	mu      sync.Mutex
	started []string // series of each run started
	ticks   map[string]int64
	lent    int // ticks whose histograms per op were lent
	samples int
	runs    [][2]int
	current string
}

func (l *liveLog) RunStarted(st *results.Study, r *results.Run, series string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started, l.current = append(l.started, series), series
}

func (l *liveLog) Tick(ops []string, iv driver.Interval) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if iv.Phase == driver.Measured {
		l.ticks[l.current] += iv.Ops
	}
	if len(iv.ByOp) == len(ops) {
		l.lent++
	}
}

func (l *liveLog) Sampled(telemetry.Reading) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples++
}

func (l *liveLog) Runs(done, planned int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, [2]int{done, planned})
}

// TestLiveIsToldTheStudy runs a pebble study with a live view: it is told
// each run as it starts, every tick (whose measured operations are the
// run's), the telemetry of the measured window and the runs done; each
// run's per-second histograms are stored with it.
func TestLiveIsToldTheStudy(t *testing.T) {
	root := t.TempDir()
	st := tinyStudy(t, map[string]string{"disk": filepath.Join(root, "disk")}, []study.Placement{
		{Name: "a", Components: map[string]string{"data": "disk", "wal": "disk"}},
		{Name: "b", Components: map[string]string{"data": "disk", "wal": "disk"}},
	})
	st.Duration = 1500 * time.Millisecond
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	live := &liveLog{ticks: map[string]int64{}}
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Live: live})
	if err != nil || sum.OK != 2 {
		t.Fatalf("ok %d, %v", sum.OK, err)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	if len(live.started) != 2 || live.lent == 0 || live.samples == 0 {
		t.Errorf("started %v, %d ticks with histograms per op, %d telemetry readings", live.started, live.lent, live.samples)
	}
	if last := live.runs[len(live.runs)-1]; last != [2]int{2, 2} || live.runs[0] != [2]int{0, 2} {
		t.Errorf("runs done told %v, want from 0 of 2 to 2 of 2", live.runs)
	}
	for _, r := range runs {
		if live.ticks[r.Placement] != r.Ops {
			t.Errorf("%s: the ticks told %d measured ops, the run stored %d", r.Placement, live.ticks[r.Placement], r.Ops)
		}
		ivs, err := store.IntervalHistograms(context.Background(), r.ID, results.OpAll, results.KindLatency)
		if err != nil || len(ivs) != len(r.Timeline) {
			t.Errorf("%s: %d interval histograms stored for %d intervals: %v", r.Placement, len(ivs), len(r.Timeline), err)
		}
	}
}
