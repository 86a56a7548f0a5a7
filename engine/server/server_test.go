package server

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// TestDiedIsTyped starts real processes that exit, as a crashed server
// does: Died's error keeps its text (how it exited and its log's tail)
// and wraps engine.ErrServerDied, and engine.ErrDiskFull when its log says
// a tier is full, in strerror's words or the server's own (then with the
// server's note). The pid is tracked while the process lives.
func TestDiedIsTyped(t *testing.T) {
	for _, c := range []struct {
		name, says string
		pattern    *regexp.Regexp
		full       bool
		note       string
	}{
		{"crash", "segfault", nil, false, ""},
		{"strerror", "could not write file: No space left on device", nil, true, ""},
		{"own words", "Short write while writing to the AOF file", regexp.MustCompile("Short write"), true, " (disk full: the AOF could not grow)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tracked := 0
			p, err := Start(Spec{Name: "fake", Path: "/bin/sh", Args: []string{"-c", "echo ready; echo \"$0\"; exit 3", c.says},
				Log: filepath.Join(t.TempDir(), "log"), DiskFull: c.pattern, DiskFullNote: "the AOF could not grow",
				Track: func(pid int) func() { tracked = pid; return func() { tracked = 0 } }})
			if err != nil {
				t.Fatal(err)
			}
			if tracked != p.PID() {
				t.Errorf("tracked pid %d, started %d", tracked, p.PID())
			}
			select {
			case <-p.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("process did not exit")
			}
			err = p.Died()
			if !errors.Is(err, engine.ErrServerDied) || errors.Is(err, engine.ErrDiskFull) != c.full {
				t.Errorf("Died() = %v: died %v, disk full %v; want full %v", err, errors.Is(err, engine.ErrServerDied), errors.Is(err, engine.ErrDiskFull), c.full)
			}
			for _, want := range []string{"fake exited (exit status 3); last lines of its log", "ready\n" + c.says + c.note} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Died() = %q, want it to hold %q", err, want)
				}
			}
			op := errors.New("read: unexpected EOF")
			if err := p.Explain(op, true); !errors.Is(err, op) || !errors.Is(err, engine.ErrServerDied) {
				t.Errorf("Explain after a death = %v", err)
			}
			if err := p.Stop(time.Second, syscall.SIGTERM); err != nil {
				t.Errorf("Stop of an exited process: %v", err)
			}
			if tracked != 0 {
				t.Error("still tracked after Stop")
			}
		})
	}
}

// TestExplainDiskFull checks that a client's error that says a tier is
// full is marked so while the server runs, and that a nil Process (a
// target) leaves errors as they are.
func TestExplainDiskFull(t *testing.T) {
	p, err := Start(Spec{Name: "fake", Path: "/bin/sleep", Args: []string{"30"}, Log: filepath.Join(t.TempDir(), "log")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	full := errors.New(`ERROR: could not extend file "base/5/16384": No space left on device`)
	if err := p.Explain(full, false); !errors.Is(err, engine.ErrDiskFull) || err.Error() != full.Error() {
		t.Errorf("Explain(%v) = %v, want the same text marked disk full", full, err)
	}
	other := errors.New("duplicate key")
	if err := p.Explain(other, false); err != other {
		t.Errorf("Explain(%v) = %v, want it as it is", other, err)
	}
	var target *Process
	if err := target.Explain(full, true); err != full || target.Died() != nil || target.PID() != 0 {
		t.Errorf("a target's Explain = %v", err)
	}
}
