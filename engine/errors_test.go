package engine

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// TestIsDiskFull covers how a full disk is recognised: by type (ENOSPC
// anywhere in the chain, ErrDiskFull) or, failing that, by a server's words.
func TestIsDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		full bool
	}{
		{"enospc-wrapped", fmt.Errorf("load: %w", &os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}), true},
		{"engine-sentinel", fmt.Errorf("insert: %w", ErrDiskFull), true},
		{"server-words", errors.New(`ERROR: could not extend file "base/5/16384"`), true},
		{"other", fmt.Errorf("load: %w", syscall.EIO), false},
	} {
		if got := IsDiskFull(tc.err); got != tc.full {
			t.Errorf("%s: IsDiskFull(%v) = %v, want %v", tc.name, tc.err, got, tc.full)
		}
	}
}
