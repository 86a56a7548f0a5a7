package server

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// TestClosers checks the order (last added first), the labels on errors,
// that Close runs the closers once however often and concurrently it is
// called, and that CloseOnError closes only on an error.
func TestClosers(t *testing.T) {
	var (
		c   Closers
		ran []string
	)
	boom := errors.New("boom")
	c.Do(func() { ran = append(ran, "folder") })
	c.Add("stop server", func() error { ran = append(ran, "server"); return boom })
	c.Add("", func() error { ran = append(ran, "pool"); return nil })
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	if want := []string{"pool", "server", "folder"}; !slices.Equal(ran, want) {
		t.Errorf("closers ran %v, want %v once", ran, want)
	}
	for _, err := range errs {
		if !errors.Is(err, boom) || err.Error() != "stop server: boom" {
			t.Errorf("Close = %v, want stop server: boom", err)
		}
	}

	for _, c := range []struct {
		name    string
		openErr error
		closed  bool
	}{{"ok", nil, false}, {"failed", boom, true}} {
		t.Run(c.name, func(t *testing.T) {
			var cl Closers
			closed := false
			cl.Add("remove folder", func() error { closed = true; return errors.New("busy") })
			err := c.openErr
			cl.CloseOnError(&err)
			if closed != c.closed {
				t.Errorf("closed %v, want %v", closed, c.closed)
			}
			if c.closed && (!errors.Is(err, boom) || err.Error() != "boom\nremove folder: busy") {
				t.Errorf("Open's error %q, want boom joined with what closing hit", err)
			}
		})
	}
}
