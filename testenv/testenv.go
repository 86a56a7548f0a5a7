// Package testenv is how a test says it cannot run here because something
// it needs is missing: a program, root, a device, a kernel feature. On a
// developer's machine the test is skipped with the reason. Where
// TIERBENCH_NO_SKIP=1 (CI, whose setup installs everything the suite
// needs), it fails instead, so a missing install step cannot hide behind
// a green suite. Tests that skip on purpose (a child process's half of a
// test, an opt-in capture) call t.Skip themselves.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// NoSkip is the environment variable that turns a missing requirement
// into a failure.
const NoSkip = "TIERBENCH_NO_SKIP"

// Skip skips t for want of what args say, or fails it under NoSkip.
func Skip(t testing.TB, args ...any) {
	t.Helper()
	skip(t, fmt.Sprint(args...))
}

// Skipf is Skip with a format.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	skip(t, fmt.Sprintf(format, args...))
}

func skip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(NoSkip) == "1" {
		t.Fatalf("cannot run here: %s; with %s=1 a missing requirement fails the test: install it in scripts/setup.sh", why, NoSkip)
	}
	t.Skip(why)
}
