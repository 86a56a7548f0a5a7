package emulate

import "time"

// SetCloseWait makes Close wait d for the helper, until the returned
// function restores the wait.
func SetCloseWait(d time.Duration) (restore func()) {
	old := closeWait
	closeWait = d
	return func() { closeWait = old }
}
