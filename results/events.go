package results

import (
	"math"
	"sort"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// Event is something the engine did on its own during a run (a
// checkpoint, a flush, a compaction) or that the runner did to it (a
// crash run's crash and recovery), placed on the run's timeline: T is on
// the timeline's clock, seconds since the driven part began (warmup
// included), and At the same moment in wall-clock time.
type Event struct {
	T  float64   `json:"t_s"`
	At time.Time `json:"at"`
	// DurationS is how long it took, when known; 0 for a moment.
	DurationS float64 `json:"duration_s,omitempty"`
	Kind      string  `json:"kind"`
	Detail    string  `json:"detail,omitempty"`
}

// AddEvents places the engine's events on run r's timeline, whose clock
// starts at began, keeping r.Events in time order.
func (r *Run) AddEvents(began time.Time, events []engine.Event) {
	for _, e := range events {
		r.Events = append(r.Events, Event{T: micros(e.At.Sub(began)), At: e.At.UTC(),
			DurationS: micros(e.Duration), Kind: e.Kind, Detail: e.Detail})
	}
	sort.SliceStable(r.Events, func(i, j int) bool { return r.Events[i].At.Before(r.Events[j].At) })
}

// micros is d in seconds to the microsecond, which is finer than any
// engine's log and reads without float noise.
func micros(d time.Duration) float64 { return math.Round(d.Seconds()*1e6) / 1e6 }
