package engine

import (
	"bufio"
	"os"
	"sync"
	"time"
)

// Event is something an engine did on its own during a run that can
// explain a dip or a spike in its figures: a checkpoint, a flush, a
// compaction. At is when it started; Duration, when the engine says, how
// long it took (0 for a moment).
type Event struct {
	At       time.Time
	Duration time.Duration
	// Kind is a short word shared across engines where the thing is the
	// same (EventCheckpoint, EventFlush, EventCompaction, ...).
	Kind string
	// Detail is the engine's own words about it, short: "wrote 1234
	// buffers (7.5%); write=0.1 s, sync=0.02 s".
	Detail string
}

// Event kinds. Engines use these where they fit, so a chart draws the
// same thing the same way whatever the engine.
const (
	EventCheckpoint = "checkpoint"
	EventFlush      = "flush"
	EventCompaction = "compaction"
	// EventSnapshot is a background snapshot of the data set (Redis's
	// BGSAVE) or a rewrite of its log (AOF rewrite).
	EventSnapshot = "snapshot"
	// EventCrash and EventRecovery are the runner's, on crash runs: the
	// moment the engine was killed, and its restart until it answered.
	EventCrash    = "crash"
	EventRecovery = "recovery"
)

// Overlaps reports whether e falls in [from, to]: it started in it, or
// was still running at from.
func (e Event) Overlaps(from, to time.Time) bool {
	return !e.At.After(to) && !e.At.Add(e.Duration).Before(from)
}

// LogEvents reads a server's log at path with parse and keeps the events
// that overlap [from, to]: what an engine whose events are in its log
// answers Eventer with. A log that cannot be read has none.
func LogEvents(path string, parse func(*bufio.Scanner) []Event, from, to time.Time) []Event {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []Event
	for _, e := range parse(bufio.NewScanner(f)) {
		if e.Overlaps(from, to) {
			out = append(out, e)
		}
	}
	return out
}

// maxEvents bounds an EventLog: a compaction storm of a long run is
// thousands, not millions, and the oldest matter least to the window.
const maxEvents = 10000

// EventLog keeps the events an in-process engine hears of (Pebble's
// event listener) for its Eventer, the last maxEvents of them. It is
// safe for concurrent use; its zero value is ready.
type EventLog struct {
	mu     sync.Mutex
	events []Event
}

// Add records e, dropping the oldest past the bound.
func (l *EventLog) Add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.events) >= maxEvents {
		l.events = append(l.events[:0], l.events[len(l.events)-maxEvents+1:]...)
	}
	l.events = append(l.events, e)
}

// Between returns the events that overlap [from, to], in the order they
// were added.
func (l *EventLog) Between(from, to time.Time) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if e.Overlaps(from, to) {
			out = append(out, e)
		}
	}
	return out
}
