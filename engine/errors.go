package engine

import "errors"

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
