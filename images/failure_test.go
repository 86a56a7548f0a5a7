package images_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/host/mountinfo"
	"github.com/tierbench/tierbench/images"
	"github.com/tierbench/tierbench/images/imagestest"
)

// TestBuildFailures checks that a failed or cancelled mmdebstrap says
// why (apt's complaint; the context's error) and leaves nothing behind:
// no tarball, no build folder, nothing mounted, no process.
func TestBuildFailures(t *testing.T) {
	imagestest.Cache(t) // the same conditions as the Debian images
	cache := t.TempDir()
	// A missing suite fails at once; a missing package would fail the
	// same way, after the essential packages' half minute.
	bad := images.Recipe{Name: "tierbench.local/bad:1", Suite: "tierbench-no-such-suite", Packages: []string{"hello"}}
	_, err := images.Build(context.Background(), bad, cache)
	if err == nil || !strings.Contains(err.Error(), "mmdebstrap") || !strings.Contains(err.Error(), "tierbench-no-such-suite") {
		t.Errorf("a missing suite: %v; want mmdebstrap's complaint", err)
	}
	t.Logf("a missing suite: %v", err)
	leftNothing(t, cache)

	// Cancelled while dpkg runs (PostgreSQL's packages take longer than
	// the timeout): mmdebstrap unmounts and stops.
	big := images.Recipe{Name: "tierbench.local/cancelled:1", Suite: images.Suite, Packages: []string{"postgresql-15"}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = images.Build(ctx, big, cache)
	if err == nil {
		t.Fatalf("a cancelled build succeeded")
	}
	t.Logf("cancelled after %s: %v", time.Since(start).Round(time.Millisecond), firstLine(err))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a cancelled build: %v; want the context's error", err)
	}
	if took := time.Since(start); took > 25*time.Second {
		t.Errorf("the cancelled build took %s to stop", took)
	}
	leftNothing(t, cache)
}

// leftNothing fails the test if cache holds more than lock files, or
// anything is mounted below it.
func leftNothing(t *testing.T, cache string) {
	t.Helper()
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("the failed build left %s", e.Name())
		}
	}
	mounts, err := mountinfo.Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if strings.HasPrefix(m.Point, cache) {
			t.Errorf("the failed build left mount %s", m.Point)
		}
	}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
