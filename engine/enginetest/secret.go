package enginetest

import (
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/host/secrets"
)

// WatchSecret scans every process's command line and environment for
// secret (a run's password) until the returned stop is called, which then
// fails t if a process showed it, or if no process whose command line
// holds marker (a word of the tool's command line, such as "tpcb-like")
// was seen: a scan that missed the tool proves nothing.
func WatchSecret(t testing.TB, secret, marker string) (stop func()) {
	t.Helper()
	var (
		mu    sync.Mutex
		shown []string
		seen  bool
	)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			s := secrets.ProcessesShowing(secret, true)
			found := len(secrets.ProcessesShowing(marker, false)) > 0
			mu.Lock()
			shown = append(shown, s...)
			seen = seen || found
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	return func() {
		t.Helper()
		close(done)
		wg.Wait()
		if len(shown) > 0 {
			t.Errorf("processes showed the password: %q", shown)
		}
		if !seen {
			t.Errorf("no process with %q on its command line was seen: the scan missed the tool", marker)
		}
	}
}
