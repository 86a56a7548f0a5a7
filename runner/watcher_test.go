package runner

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tierbench/tierbench/telemetry"
)

// samplerOf waits for w's sampler to differ from not, and returns it.
func samplerOf(t *testing.T, w *watcher, not *telemetry.Sampler) *telemetry.Sampler {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		w.mu.Lock()
		s := w.sampler
		w.mu.Unlock()
		if s != nil && s != not {
			return s
		}
	}
	t.Fatal("the window never opened")
	return nil
}

// TestWatcherBeginRestartsTheWindow: a load generator's Begin drops what
// was sampled of its start-up and times the window again; after stop,
// Begin changes nothing.
func TestWatcherBeginRestartsTheWindow(t *testing.T) {
	cfg := telemetry.Config{PID: os.Getpid(), LoadName: "tool", LoadPIDs: []int{os.Getpid()}}
	w := newWatcher(context.Background(), cfg, 0, time.Hour, nil)
	first := samplerOf(t, w, nil)
	w.Begin()
	second := samplerOf(t, w, first)
	if rep := first.Stop(); rep == nil {
		t.Error("the start-up's sampler has no report")
	}
	rep := w.stop()
	if rep == nil || rep.Summary.LoadGen == nil || rep.Summary.LoadGen.Name != "tool" {
		t.Fatalf("report %+v: want the load generator's CPU", rep)
	}
	w.Begin()
	if w.sampler != second || w.report != rep {
		t.Error("Begin after stop re-armed the window")
	}
}

// TestWatcherNeverOpened: a run that ends in its warmup has no telemetry.
func TestWatcherNeverOpened(t *testing.T) {
	w := newWatcher(context.Background(), telemetry.Config{PID: os.Getpid()}, time.Hour, time.Hour, nil)
	w.Begin()
	if rep := w.stop(); rep != nil {
		t.Errorf("report %+v from a window that never opened", rep)
	}
}
