package runner

import (
	"errors"
	"testing"
)

// TestOpenError covers "open <engine>: ", said by the runner.
func TestOpenError(t *testing.T) {
	if got := openError("pebble", errors.New("device gone")).Error(); got != "open pebble: device gone" {
		t.Errorf("openError = %q", got)
	}
}
