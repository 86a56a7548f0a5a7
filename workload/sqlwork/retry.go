package sqlwork

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// MaxRetries bounds the retries of one operation after deadlocks or
// serialization failures, as HammerDB and cockroach's workload driver
// retry them; an operation that still conflicts is an error.
const MaxRetries = 10

// ErrGaveUp marks an operation that still conflicted after MaxRetries
// retries: rolled back, so its changes are not in the data.
var ErrGaveUp = fmt.Errorf("gave up after %d retries", MaxRetries)

// Retries retries operations that hit a conflict (see Conflict) and counts
// the retries by kind and the operations given up, for a run's record.
// Safe for concurrent use; the zero value is ready.
type Retries struct {
	deadlock, serialization, lockWait atomic.Int64
	gaveUp                            atomic.Int64
}

// Do runs op until it succeeds, fails with something other than a
// conflict, or has been retried MaxRetries times. A conflict whose
// rollback failed (RollbackFailed) is not retried: the connection may
// still hold part of the transaction.
func (r *Retries) Do(ctx context.Context, op func() error) error {
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || ctx.Err() != nil {
			return err
		}
		kind := Conflict(err)
		var rf *RollbackFailed
		if kind == "" || errors.As(err, &rf) {
			return err
		}
		if attempt == MaxRetries {
			r.gaveUp.Add(1)
			return fmt.Errorf("%w (%w)", err, ErrGaveUp)
		}
		switch {
		case strings.HasPrefix(kind, "deadlock"):
			r.deadlock.Add(1)
		case strings.HasPrefix(kind, "serialization"):
			r.serialization.Add(1)
		default:
			r.lockWait.Add(1)
		}
	}
}

// Deadlocks is how many retries followed a deadlock.
func (r *Retries) Deadlocks() int64 { return r.deadlock.Load() }

// Reset zeroes the counts (a workload reused for a fresh load).
func (r *Retries) Reset() {
	for _, c := range []*atomic.Int64{&r.deadlock, &r.serialization, &r.lockWait, &r.gaveUp} {
		c.Store(0)
	}
}

// String says what was retried: "retries: 3 after deadlock, 1 after
// serialization failure" or "retries: none", and any given up.
func (r *Retries) String() string {
	var parts []string
	for _, k := range []struct {
		n    int64
		name string
	}{{r.deadlock.Load(), "deadlock"}, {r.serialization.Load(), "serialization failure"}, {r.lockWait.Load(), "lock wait timeout"}} {
		if k.n > 0 {
			parts = append(parts, fmt.Sprintf("%d after %s", k.n, k.name))
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	s := "retries: " + strings.Join(parts, ", ")
	if g := r.gaveUp.Load(); g > 0 {
		s += fmt.Sprintf(" (%d given up after %d)", g, MaxRetries)
	}
	return s
}
