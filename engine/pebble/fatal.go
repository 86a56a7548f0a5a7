package pebble

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
)

// Pebble reports errors it cannot recover from (a WAL write that fails
// because its tier is full, a MANIFEST that cannot be synced) through
// Logger.Fatalf and expects Fatalf not to return. Its default logger exits
// the process, which would take tierbench down with every mount, folder and
// ledger entry of the study still in place. Here a fatal error instead
// becomes the failure of the run:
//
//   - in a goroutine that is inside one of this package's session calls (a
//     client's commit, a loader's batch), Fatalf panics with a *FatalError
//     that the session call recovers and returns as its error;
//   - in one of Pebble's own background goroutines (flush, compaction),
//     Fatalf parks the goroutine for good: Pebble's state is broken, and
//     letting the goroutine go on would be worse than stopping it.
//
// Either way the DB remembers the error: later session calls fail at once
// with it, Check reports it (so the runner fails the run with it) and Close
// leaves the broken Pebble instance alone rather than wait on its parked
// goroutines. The instance's memory and open files are given up when the
// run ends; its folders are removed as usual.

// FatalError is a fatal Pebble error. It unwraps to the error Pebble passed
// (for example syscall.ENOSPC), so callers can test it with errors.Is.
type FatalError struct {
	Msg string
	Err error // the first error among Fatalf's arguments, if any
}

func (e *FatalError) Error() string { return "pebble fatal: " + e.Msg }
func (e *FatalError) Unwrap() error { return e.Err }

// fatalLogger is the Logger of one DB: quiet for information, errors on
// stderr, fatal errors as described above.
type fatalLogger struct {
	fatal *atomic.Pointer[FatalError]
}

func (fatalLogger) Infof(string, ...interface{}) {}

func (fatalLogger) Errorf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}

func (l fatalLogger) Fatalf(format string, args ...interface{}) {
	fe := &FatalError{Msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			fe.Err = err
			break
		}
	}
	l.fatal.CompareAndSwap(nil, fe) // the first fatal error is the cause
	if inSessionCall() {
		panic(fe)
	}
	select {} // a background goroutine of a broken instance: park it
}

// sessionFrame is the prefix of this package's session methods in a stack
// trace: "github.com/tierbench/tierbench/engine/pebble.(*Session).".
var sessionFrame = reflect.TypeOf(Session{}).PkgPath() + ".(*Session)."

// checkFrame is DB.CheckCorruption's frame, which recovers a *FatalError
// too: the corruption it finds is reported through Fatalf.
var checkFrame = reflect.TypeOf(Session{}).PkgPath() + ".(*DB).CheckCorruption"

// inSessionCall reports whether the calling goroutine is inside a session
// method or the corruption check, which recover a *FatalError.
func inSessionCall() bool {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, sessionFrame) || strings.HasPrefix(f.Function, checkFrame) {
			return true
		}
		if !more {
			return false
		}
	}
}

// guard runs a session call: it fails at once on a broken instance and turns
// a fatal error raised inside the call into its returned error.
func (d *DB) guard(err *error) {
	if p := recover(); p != nil {
		fe, ok := p.(*FatalError)
		if !ok {
			panic(p)
		}
		*err = fe
	}
}

// broken returns the instance's fatal error, if it had one.
func (d *DB) broken() error {
	if fe := d.fatal.Load(); fe != nil {
		return fe
	}
	return nil
}

// Check reports a fatal error the instance had (engine.Checker), so the run
// fails with it even when the clients saw only its consequences.
func (d *DB) Check() error { return d.broken() }
