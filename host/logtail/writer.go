package logtail

import "sync"

// Writer keeps the last Max bytes written to it (a tool's or client's
// output), for error messages. It is safe for concurrent use.
type Writer struct {
	Max int
	mu  sync.Mutex
	buf []byte
}

func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns everything kept.
func (t *Writer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Last returns the last n lines kept.
func (t *Writer) Last(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Lines(t.buf, n)
}
