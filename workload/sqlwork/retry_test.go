package sqlwork

import (
	"context"
	"errors"
	"testing"
)

// TestRetries retries conflicts, counts them by kind, gives up after
// MaxRetries and passes other errors through at once.
func TestRetries(t *testing.T) {
	deadlock := errors.New("Error 1213: Deadlock found when trying to get lock")
	serial := errors.New("ERROR: could not serialize access (SQLSTATE 40001)")
	other := errors.New("ERROR: relation does not exist")
	var r Retries
	calls := 0
	err := r.Do(context.Background(), func() error {
		calls++
		switch calls {
		case 1:
			return deadlock
		case 2:
			return serial
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Do = %v after %d calls, want success on the third", err, calls)
	}
	if err := r.Do(context.Background(), func() error { return other }); err != other {
		t.Errorf("a non-conflict error came back as %v", err)
	}
	calls = 0
	if err := r.Do(context.Background(), func() error { calls++; return deadlock }); !errors.Is(err, deadlock) || !errors.Is(err, ErrGaveUp) || calls != MaxRetries+1 {
		t.Errorf("a lasting conflict: %v after %d calls", err, calls)
	}
	// A deadlock whose rollback failed is not retried.
	calls = 0
	unrolled := &RollbackFailed{errors.Join(deadlock, errors.New("rollback: connection reset"))}
	if err := r.Do(context.Background(), func() error { calls++; return unrolled }); err != unrolled || calls != 1 {
		t.Errorf("a conflict whose rollback failed: %v after %d calls, want it back after 1", err, calls)
	}
	want := "retries: 11 after deadlock, 1 after serialization failure (1 given up after 10)"
	if got := r.String(); got != want || r.Deadlocks() != 11 {
		t.Errorf("String() = %q, want %q", got, want)
	}
	r.Reset()
	if got := r.String(); got != "retries: none" {
		t.Errorf("after Reset: %q", got)
	}
}
