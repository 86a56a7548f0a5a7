package results

import (
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// TestAddEvents places events on the timeline's clock, in time order
// whoever told them, to the microsecond.
func TestAddEvents(t *testing.T) {
	began := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	var r Run
	r.AddEvents(began, []engine.Event{
		{At: began.Add(2*time.Second + 123456789), Duration: 250 * time.Millisecond, Kind: engine.EventCheckpoint, Detail: "time"},
		{At: began.Add(-300 * time.Millisecond), Duration: 400 * time.Millisecond, Kind: engine.EventFlush},
	})
	r.AddEvents(began, []engine.Event{{At: began.Add(time.Second), Kind: engine.EventCrash}})
	want := []Event{
		{T: -0.3, At: began.Add(-300 * time.Millisecond), DurationS: 0.4, Kind: engine.EventFlush},
		{T: 1, At: began.Add(time.Second), Kind: engine.EventCrash},
		{T: 2.123457, At: began.Add(2*time.Second + 123456789), DurationS: 0.25, Kind: engine.EventCheckpoint, Detail: "time"},
	}
	if len(r.Events) != len(want) {
		t.Fatalf("events %+v", r.Events)
	}
	for i, e := range r.Events {
		if e.T != want[i].T || !e.At.Equal(want[i].At) || e.DurationS != want[i].DurationS || e.Kind != want[i].Kind || e.Detail != want[i].Detail {
			t.Errorf("event %d: %+v, want %+v", i, e, want[i])
		}
	}
}
