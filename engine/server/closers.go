package server

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// Closers is what an Open got that must be given back, in the order got:
// a temporary folder, a started server, a client pool. Open adds each
// thing as it gets it and defers CloseOnError, so a failed Open releases
// exactly what it got, in reverse order; the DB's Close is Closers.Close,
// which runs once however often and from wherever it is called. Modelled on
// prometheus tsdb's open() and closeAll.
//
// A closer reports only what goes wrong while closing (a server that had
// to be killed, a folder that would not go); a server that died before
// is reported by the engine's Close, so that a failed Open does not tell
// of its server's death twice.
type Closers struct {
	mu   sync.Mutex
	fns  []func() error
	done bool
	err  error
}

// Add appends fn, labelled what in its error ("close connections"; no
// label when empty).
func (c *Closers) Add(what string, fn func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fns = append(c.fns, func() error {
		err := fn()
		if err != nil && what != "" {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return err
	})
}

// Do appends fn, which cannot fail (forget a pid, mark the DB closed).
func (c *Closers) Do(fn func()) { c.Add("", func() error { fn(); return nil }) }

// RemoveAll appends the removal of dir, a folder the Open made for itself
// (a scratch or socket folder).
func (c *Closers) RemoveAll(dir string) {
	c.Add("remove "+dir, func() error { return os.RemoveAll(dir) })
}

// Close runs every closer, last added first, and joins their errors. It
// runs them once: later calls, concurrent ones included, wait for the first
// and return its result. A closer must not call Add or Close.
func (c *Closers) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.err
	}
	c.done = true
	errs := make([]error, 0, len(c.fns))
	for i := len(c.fns) - 1; i >= 0; i-- {
		errs = append(errs, c.fns[i]())
	}
	c.fns = nil
	c.err = errors.Join(errs...)
	return c.err
}

// CloseOnError closes everything when *err is set, joining what closing
// hit to it: `var c Closers; defer c.CloseOnError(&err)` at the top of an
// Open with a named error result.
func (c *Closers) CloseOnError(err *error) {
	if *err != nil {
		*err = errors.Join(*err, c.Close())
	}
}
