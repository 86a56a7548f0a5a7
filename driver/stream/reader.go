package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
)

// message is any one line; ops and errors are an object per op in an
// interval and a number in a final.
type message struct {
	Type     string          `json:"type"`
	Phase    string          `json:"phase"`
	Index    int             `json:"index"`
	StartNs  int64           `json:"start_ns"`
	LengthNs int64           `json:"length_ns"`
	Ops      json.RawMessage `json:"ops"`
	Errors   json.RawMessage `json:"errors"`
	P50Ns    int64           `json:"p50_ns"`
	P99Ns    int64           `json:"p99_ns"`
	MaxNs    int64           `json:"max_ns"`
	Op       string          `json:"op"`
	Message  string          `json:"message"`
	Hist     string          `json:"hist"`
	Threads  int             `json:"threads"`
	Records  int64           `json:"records"`
}

// counts decodes a line's ops and errors (errors may be absent) into ops
// and errs: an object per op in an interval, a number in a final.
func (m message) counts(ops, errs any) error {
	if err := json.Unmarshal(m.Ops, ops); err != nil {
		return fmt.Errorf("ops: %w", err)
	}
	if len(m.Errors) > 0 {
		if err := json.Unmarshal(m.Errors, errs); err != nil {
			return fmt.Errorf("errors: %w", err)
		}
	}
	return nil
}

// LoadedRecords reads a "loaded" line: the number of records a load wrote.
func LoadedRecords(line []byte) (records int64, ok bool) {
	var m message
	if !isObject(line) || json.Unmarshal(line, &m) != nil || m.Type != "loaded" {
		return 0, false
	}
	return m.Records, true
}

func isObject(line []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) }

// Reader turns a run's lines into a driver.Result.
type Reader struct {
	// from names the producer in errors ("the Ignite client").
	from      string
	cfg       driver.Config
	intervals []driver.Interval
	phases    map[driver.Phase]*driver.PhaseResult
	finals    map[driver.Phase]int
	firstErr  error
	hung      int
	done      bool
	bad       error // the first line that could not be understood
}

// NewReader reads the lines of a run driven with cfg (its Ops name the
// ops the lines may report; its OnTick sees each interval as it is read).
// from names the producer in errors: "the Ignite client", "tierbench drive".
func NewReader(from string, cfg driver.Config) *Reader {
	p := &Reader{from: from, cfg: cfg, phases: map[driver.Phase]*driver.PhaseResult{}, finals: map[driver.Phase]int{}}
	for _, ph := range []driver.Phase{driver.Warmup, driver.Measured} {
		pr := &driver.PhaseResult{ByOp: make([]driver.OpResult, len(cfg.Ops))}
		for i, name := range cfg.Ops {
			pr.ByOp[i] = driver.OpResult{Name: name, Latency: hist.New()}
		}
		p.phases[ph] = pr
	}
	return p
}

// Line handles one line of the producer's output; lines that are not JSON
// objects (a JVM's own messages) are skipped.
func (p *Reader) Line(b []byte) {
	if !isObject(b) {
		return
	}
	if err := p.handle(b); err != nil && p.bad == nil {
		p.bad = fmt.Errorf("%s's output %q: %w", p.from, truncate(string(b), 200), err)
	}
}

func (p *Reader) handle(b []byte) error {
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	switch m.Type {
	case "interval":
		return p.interval(m)
	case "final":
		return p.final(m)
	case "error":
		if p.firstErr == nil {
			msg := m.Message
			if m.Op != "" {
				msg = m.Op + ": " + msg
			}
			p.firstErr = errors.New(msg)
		}
	case "hung":
		p.hung = m.Threads
	case "done":
		p.done = true
	case "ready", "loaded":
	default:
		return fmt.Errorf("unknown type %q", m.Type)
	}
	return nil
}

func (p *Reader) phase(name string) (driver.Phase, error) {
	switch ph := driver.Phase(name); ph {
	case driver.Warmup, driver.Measured:
		return ph, nil
	}
	return "", fmt.Errorf("unknown phase %q", name)
}

func (p *Reader) opIndex(name string) (int, error) {
	i := slices.Index(p.cfg.Ops, name)
	if i < 0 {
		return 0, fmt.Errorf("op %q is not one of the workload's ops (%s)", name, strings.Join(p.cfg.Ops, ", "))
	}
	return i, nil
}

func (p *Reader) interval(m message) error {
	ph, err := p.phase(m.Phase)
	if err != nil {
		return err
	}
	var ops, errs map[string]int64
	if err := m.counts(&ops, &errs); err != nil {
		return err
	}
	iv := driver.Interval{Index: m.Index, Phase: ph, Start: time.Duration(m.StartNs), Length: time.Duration(m.LengthNs),
		P50: time.Duration(m.P50Ns), P99: time.Duration(m.P99Ns), Max: time.Duration(m.MaxNs),
		PerOpOK: make([]int64, len(p.cfg.Ops)), PerOpErr: make([]int64, len(p.cfg.Ops))}
	for name, n := range ops {
		i, err := p.opIndex(name)
		if err != nil {
			return err
		}
		iv.PerOpOK[i] += n
		iv.Ops += n
	}
	for name, n := range errs {
		i, err := p.opIndex(name)
		if err != nil {
			return err
		}
		iv.PerOpErr[i] += n
		iv.Errors += n
	}
	p.intervals = append(p.intervals, iv)
	if p.cfg.OnTick != nil {
		p.cfg.OnTick(iv)
	}
	return nil
}

func (p *Reader) final(m message) error {
	ph, err := p.phase(m.Phase)
	if err != nil {
		return err
	}
	i, err := p.opIndex(m.Op)
	if err != nil {
		return err
	}
	var ops, errs int64
	if err := m.counts(&ops, &errs); err != nil {
		return err
	}
	h, err := hist.Decode([]byte(m.Hist))
	if err != nil {
		return fmt.Errorf("op %s: %w", m.Op, err)
	}
	if h.TotalCount() != ops {
		return fmt.Errorf("op %s: histogram holds %d operations, the line says %d", m.Op, h.TotalCount(), ops)
	}
	pr := p.phases[ph]
	o := &pr.ByOp[i]
	o.Latency.Merge(h)
	o.Ops += ops
	o.Errors += errs
	pr.Ops += ops
	pr.Errors += errs
	pr.Length = time.Duration(m.LengthNs) // the same on every op's line
	p.finals[ph]++
	return nil
}

// Done reports whether the run's last line, done, was read: a follower
// of a log that does not end with its producer (a pod's) stops there.
func (p *Reader) Done() bool { return p.done }

// Result assembles what was read; runErr is the producer's own failure.
// A run that ended without its measured figures is an error even when the
// producer exited 0.
func (p *Reader) Result(runErr error) (*driver.Result, error) {
	res := &driver.Result{
		Warmup: *p.phases[driver.Warmup], Measured: *p.phases[driver.Measured],
		Intervals: p.intervals, FirstError: p.firstErr,
	}
	errs := []error{runErr, p.bad}
	if p.hung > 0 {
		errs = append(errs, fmt.Errorf("%w: %d threads of %s were still in an operation after the run ended (engine stuck?)", driver.ErrHung, p.hung, p.from))
	}
	if runErr == nil && p.bad == nil && p.finals[driver.Measured] == 0 {
		errs = append(errs, fmt.Errorf("%s ended without reporting its measured figures", p.from))
	}
	return res, errors.Join(errs...)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
