package engine

import (
	"errors"
	"strings"
	"syscall"
)

// Failures a caller decides on, found with errors.Is however deeply an
// engine wrapped them: the runner names the tier that filled up, or stores
// a run as failed because its server died, without reading error text.
// Their text is the words an engine's message already says ("... (disk
// full: the AOF could not grow)"), so wrapping one adds nothing to read.
var (
	// ErrDiskFull: a tier the engine writes to ran out of space. An engine
	// wraps it where it learns so from something other than the system
	// call's own ENOSPC (a server's log, a SQL error code); a syscall.ENOSPC
	// kept in the chain means the same.
	ErrDiskFull = errors.New("disk full")
	// ErrServerDied: a server the engine started exited under the run.
	ErrServerDied = errors.New("server died")
)

// diskFullWords are how servers say a disk is full in text only: the
// fallback for an error that carries neither ErrDiskFull nor ENOSPC.
var diskFullWords = []string{"no space left", "enospc", "disk full", "could not extend file"}

// IsDiskFull reports whether err says a tier ran out of space: by type
// first (ENOSPC kept in the chain, or ErrDiskFull that an engine wraps),
// by its words otherwise.
func IsDiskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrDiskFull) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, w := range diskFullWords {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
