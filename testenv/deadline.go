package testenv

// A test binary killed by its -timeout runs no t.Cleanup and no deferred
// call: a node, a server or a mount a test started stays behind, and
// disturbs every measurement after it. So a test that starts one stops
// waiting a margin before the -timeout (Context), which leaves it time to
// undo what it started, and what it registers with OnTimeout is undone by
// Main's watchdog, half a margin before the -timeout, if the test is stuck
// where no context reaches.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"
)

// Margin is how long before a test binary's -timeout of timeout a test's
// Context ends: a fifth of it, at least 10 s and at most 5 minutes (a
// node's cluster down may take 3), and never more than half of it.
func Margin(timeout time.Duration) time.Duration {
	return min(max(timeout/5, 10*time.Second), 5*time.Minute, timeout/2)
}

// Deadline is when t's Context ends: Margin before the test binary's
// -timeout; false with no -timeout (-timeout 0).
func Deadline(t *testing.T) (time.Time, bool) {
	end, ok := t.Deadline()
	if !ok {
		return time.Time{}, false
	}
	return end.Add(-Margin(timeoutFlag())), true
}

// Context returns a context that ends at Deadline, so a test that waits on
// a node, a server or a command gives up in time for its own cleanup to
// run before the binary is killed. It is not t.Context(), which ends
// before the cleanups run and so would cut them short.
func Context(t *testing.T) context.Context {
	end, ok := Deadline(t)
	if !ok {
		return context.Background()
	}
	ctx, cancel := context.WithDeadline(context.Background(), end)
	t.Cleanup(cancel)
	return ctx
}

// timeoutFlag is the test binary's -timeout.
func timeoutFlag() time.Duration {
	if f := flag.Lookup("test.timeout"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if d, ok := g.Get().(time.Duration); ok {
				return d
			}
		}
	}
	return 0
}

// undos are what OnTimeout registered and not yet forgot, oldest first.
var undos struct {
	sync.Mutex
	list []*undo
}

type undo struct {
	what string
	f    func()
}

// OnTimeout registers f, which undoes what (a node, a server, a mount),
// for Main's watchdog; forget unregisters it once the test undid it
// itself. f must be safe to call while the test still runs.
func OnTimeout(what string, f func()) (forget func()) {
	u := &undo{what: what, f: f}
	undos.Lock()
	undos.list = append(undos.list, u)
	undos.Unlock()
	return func() {
		undos.Lock()
		defer undos.Unlock()
		undos.list = slices.DeleteFunc(undos.list, func(x *undo) bool { return x == u })
	}
}

// Main runs m's tests, as a TestMain does with m.Run, under a watchdog:
// half a Margin before the -timeout, it undoes, newest first, what tests
// registered with OnTimeout and then ends the binary as the timeout would
// (a panic with every goroutine's stack), since the tests still running
// are stuck and the timeout would skip their cleanups. It parses the
// flags (TestMain must not read them before).
func Main(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if timeout := timeoutFlag(); timeout > 0 {
		fire := timeout - Margin(timeout)/2
		stop := time.AfterFunc(fire, func() { undoAll(timeout) })
		defer stop.Stop()
	}
	return m.Run()
}

// undoAll is the watchdog's work.
func undoAll(timeout time.Duration) {
	undos.Lock()
	list := slices.Clone(undos.list)
	undos.Unlock()
	fmt.Fprintf(os.Stderr, "testenv: the test binary's -timeout %v is %v away: undoing %d things the tests started\n",
		timeout, Margin(timeout)/2, len(list))
	for _, u := range slices.Backward(list) {
		start := time.Now()
		u.f()
		fmt.Fprintf(os.Stderr, "testenv: undid %s in %v\n", u.what, time.Since(start).Round(time.Millisecond))
	}
	debug.SetTraceback("all")
	panic(fmt.Sprintf("test timed out: stopped %v before -timeout %v, after undoing what the tests started", Margin(timeout)/2, timeout))
}
