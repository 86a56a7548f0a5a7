package stream

import (
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
)

// Writer writes a run in the protocol. Its methods may be called from the
// driver's ticker goroutine and the caller's; lines never interleave.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	ops []string
	err error // the first write error; later writes are skipped
}

// NewWriter writes to w a run whose ops are named ops.
func NewWriter(w io.Writer, ops []string) *Writer { return &Writer{w: w, ops: ops} }

func (w *Writer) line(v any) {
	b, err := json.Marshal(v)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if err == nil {
		_, err = w.w.Write(append(b, '\n'))
	}
	w.err = err
}

// Ready says the producer is connected and about to load or drive.
func (w *Writer) Ready() { w.line(map[string]string{"type": "ready"}) }

// Loaded reports a load phase.
func (w *Writer) Loaded(records int64, lengthNs int64) {
	w.line(map[string]any{"type": "loaded", "records": records, "length_ns": lengthNs})
}

// Interval writes one tick; set it as driver.Config.OnTick.
func (w *Writer) Interval(iv driver.Interval) {
	ops, errs := map[string]int64{}, map[string]int64{}
	for i, name := range w.ops {
		if i < len(iv.PerOpOK) {
			ops[name] = iv.PerOpOK[i]
		}
	}
	if iv.Errors > 0 && len(w.ops) > 0 {
		// The driver counts an interval's errors, not per op: they are
		// reported against the first op, as a client that failed before
		// choosing one does.
		errs[w.ops[0]] = iv.Errors
	}
	w.line(map[string]any{"type": "interval", "phase": iv.Phase, "index": iv.Index, "start_ns": int64(iv.Start),
		"length_ns": int64(iv.Length), "ops": ops, "errors": errs,
		"p50_ns": int64(iv.P50), "p99_ns": int64(iv.P99), "max_ns": int64(iv.Max)})
}

// Finish writes a finished run: its first operation error, hung clients
// (when runErr says so), each op's final figures per phase, and done. It
// returns the first write error, or an encoding error.
func (w *Writer) Finish(res *driver.Result, runErr error) error {
	if res == nil {
		return errors.Join(runErr, w.Err())
	}
	if res.FirstError != nil {
		w.line(map[string]string{"type": "error", "message": res.FirstError.Error()})
	}
	if errors.Is(runErr, driver.ErrHung) {
		w.line(map[string]any{"type": "hung", "threads": 1})
	}
	for _, ph := range []struct {
		phase driver.Phase
		res   driver.PhaseResult
	}{{driver.Warmup, res.Warmup}, {driver.Measured, res.Measured}} {
		for _, o := range ph.res.ByOp {
			b, err := hist.Encode(o.Latency)
			if err != nil {
				return err
			}
			w.line(map[string]any{"type": "final", "phase": ph.phase, "op": o.Name, "ops": o.Ops,
				"errors": o.Errors, "length_ns": int64(ph.res.Length), "hist": string(b)})
		}
	}
	w.line(map[string]string{"type": "done"})
	return w.Err()
}

// Err is the first write error.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
