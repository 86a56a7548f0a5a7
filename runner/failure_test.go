package runner

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

// TestFailureWords covers how the runner reads a failure: a full disk by
// type (ENOSPC anywhere in the chain, engine.ErrDiskFull) or, failing
// that, by a server's words; and "open <engine>: " said by the runner.
func TestFailureWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		full bool
	}{
		{"enospc-wrapped", fmt.Errorf("load: %w", &os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}), true},
		{"engine-sentinel", fmt.Errorf("insert: %w", engine.ErrDiskFull), true},
		{"server-words", errors.New(`ERROR: could not extend file "base/5/16384"`), true},
		{"other", fmt.Errorf("load: %w", syscall.EIO), false},
	} {
		if got := diskFull(tc.err); got != tc.full {
			t.Errorf("%s: diskFull(%v) = %v, want %v", tc.name, tc.err, got, tc.full)
		}
	}
	if got := openError("pebble", errors.New("device gone")).Error(); got != "open pebble: device gone" {
		t.Errorf("openError = %q", got)
	}
}
