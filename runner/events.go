package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// events places on the run's timeline what the engine did on its own
// while it was driven (engine.Eventer) and, on a crash run, the crash and
// the recovery. The timeline's clock starts when the driven part began
// (driver.Result.Began, or when the drive started for a load generator
// that does not say). It never fails the run: events explain figures,
// they are not figures.
func (r *run) events(ctx context.Context) error {
	if r.driveStart.IsZero() {
		return nil // the run never reached its drive
	}
	began := r.driveStart
	if r.res != nil && !r.res.Began.IsZero() {
		began = r.res.Began
	}
	to := r.driveEnd
	var crash []engine.Event
	if r.crashes() && !r.crashedAt.IsZero() {
		// The restarted engine reads what its predecessor logged too
		// (PostgreSQL's log is appended to), and its own recovery.
		to = time.Now()
		crash = r.crashEvents()
	}
	if e, ok := r.db.(engine.Eventer); ok {
		r.rec.AddEvents(began, e.Events(ctx, began, to))
	}
	r.rec.AddEvents(began, crash)
	return nil
}

// crashEvents are a crash run's crash moment and its recovery, from
// restart to the first answer, as events.
func (r *run) crashEvents() []engine.Event {
	c := r.rec.Crash
	what := c.Kind + " crash"
	if c.Nodes > 0 {
		what += fmt.Sprintf(" of %d node(s)", c.Nodes)
	}
	out := []engine.Event{{At: r.crashedAt, Kind: engine.EventCrash, Detail: what}}
	if !r.restartedAt.IsZero() {
		detail := "from the restart to the first operation it answered"
		switch {
		case c.RecoveryS == 0:
			detail = c.Detail // it did not come back: why
		case c.Replayed != "":
			detail += ": " + c.Replayed
		}
		out = append(out, engine.Event{At: r.restartedAt, Duration: time.Duration(c.RecoveryS * float64(time.Second)),
			Kind: engine.EventRecovery, Detail: detail})
	}
	return out
}
