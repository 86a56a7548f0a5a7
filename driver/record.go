package driver

import (
	"sync"
	"time"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/cpu"

	"github.com/tierbench/tierbench/hist"
)

// worker is one client's recording state. What record writes on every
// operation (the lock, the counters) lies between cache-line pads, so no
// two clients write to one cache line (a histogram's total lies inside its
// own 144-byte struct):
// measured on the whole path (workload/ycsb's BenchmarkWholePath), two
// workers' 16-byte counter slices allocated side by side, with the
// clients' key buffers and random states, held two clients in one process
// to 1.3x one client's operations per second.
type worker struct {
	_       cpu.CacheLinePad
	mu      sync.Mutex
	lat     []*hdr.Histogram // per op, current interval
	svc     []*hdr.Histogram // per op, open loop only
	ops     []int64          // per op, from padded
	errs    []int64          // per op, from padded
	late    int64
	firstEr error
	// held are latencies of successful operations not yet recorded, kept by
	// the client's goroutine alone (hold, flush): outside mu.
	held      [holdMax]heldOp
	nHeld     int
	heldSince time.Duration // when the first of them started
	// gaps are the client's sampled send gaps (open loop), set under mu
	// when it stops.
	gaps []time.Duration
	_    cpu.CacheLinePad
}

// heldOp is one held-back successful operation.
type heldOp struct {
	op      int
	latency time.Duration
}

// A closed-loop client records its successful operations in batches: of
// up to holdMax, spanning at most holdFor from the first one's start. An
// operation that takes holdFor or longer is recorded at once, with the
// batch before it. Taking the worker's lock for every operation was 5-7% of
// the whole path's CPU (workload/ycsb's BenchmarkWholePath, 1 and 2
// clients). What it costs: the last operations (up to holdFor's worth)
// before a slow one are recorded when the slow one completes, so they may
// count in the next tick's interval, or in the measured window rather than
// warmup.
const (
	holdMax = 32
	holdFor = 100 * time.Microsecond
)

// hold keeps a successful operation that completed at done (offset from the
// client's epoch) to be recorded with others, flushing the batch when it is
// full or spans holdFor; it reports whether it flushed.
func (w *worker) hold(op int, latency, done time.Duration) (flushed bool) {
	if w.nHeld == 0 {
		w.heldSince = done - latency
	}
	w.held[w.nHeld] = heldOp{op, latency}
	w.nHeld++
	if w.nHeld == holdMax || done-w.heldSince >= holdFor {
		w.flush()
		return true
	}
	return false
}

// flush records the held operations under one lock.
func (w *worker) flush() {
	if w.nHeld == 0 {
		return
	}
	w.mu.Lock()
	for _, h := range w.held[:w.nHeld] {
		w.recordLocked(h.op, nil, h.latency, h.latency, false)
	}
	w.mu.Unlock()
	w.nHeld = 0
}

func newWorker(nops int, open bool) *worker {
	counts := padded(2 * nops)
	w := &worker{lat: make([]*hdr.Histogram, nops), ops: counts[:nops], errs: counts[nops:]}
	for i := range w.lat {
		w.lat[i] = hist.New()
	}
	if open {
		w.svc = make([]*hdr.Histogram, nops)
		for i := range w.svc {
			w.svc[i] = hist.New()
		}
	}
	return w
}

// padded returns n counters with a cache line of padding on each side,
// where a plain small slice would share its line with whatever the
// allocator put next to it.
func padded(n int) []int64 {
	const line = int(unsafe.Sizeof(cpu.CacheLinePad{})) / 8
	return make([]int64, line+n+line)[line : line+n : line+n]
}

func (w *worker) record(op int, err error, latency, service time.Duration, late bool) {
	w.mu.Lock()
	w.recordLocked(op, err, latency, service, late)
	w.mu.Unlock()
}

func (w *worker) recordLocked(op int, err error, latency, service time.Duration, late bool) {
	if op < 0 || op >= len(w.lat) {
		op = 0 // a client that failed before choosing an op reports 0
	}
	if err != nil {
		w.errs[op]++
		if w.firstEr == nil {
			w.firstEr = err
		}
	} else {
		w.ops[op]++
		hist.Record(w.lat[op], latency)
		if w.svc != nil {
			hist.Record(w.svc[op], service)
		}
	}
	if late {
		w.late++
	}
}

// collector merges workers' interval histograms at each tick.
type collector struct {
	cfg     Config
	workers []*worker
	// spares are swapped into workers so the ticker never allocates either.
	spareLat [][]*hdr.Histogram
	spareSvc [][]*hdr.Histogram
	tickLat  *hdr.Histogram
	// tickByOp are the interval's histograms per op, lent to OnTick.
	tickByOp []*hdr.Histogram
	// scratch counters copied out of a worker under its lock.
	scratchOps, scratchErrs []int64
	phases                  map[Phase]*PhaseResult
	result                  Result
	// warmByOp are the warmup intervals' latency histograms per op,
	// encoded, kept when the window is chosen after the fact (truncate);
	// warmSvcByOp their service-time histograms, in open loop.
	warmByOp    [][][]byte
	warmSvcByOp [][][]byte
	// tickSvcByOp are the interval's service-time histograms per op, in
	// open loop with a window chosen after the fact.
	tickSvcByOp []*hdr.Histogram
}

func newCollector(cfg Config, workers []*worker, open bool) *collector {
	c := &collector{cfg: cfg, workers: workers, tickLat: hist.New(), phases: map[Phase]*PhaseResult{},
		scratchOps: make([]int64, len(cfg.Ops)), scratchErrs: make([]int64, len(cfg.Ops)),
		tickByOp: make([]*hdr.Histogram, len(cfg.Ops))}
	for i := range c.tickByOp {
		c.tickByOp[i] = hist.New()
	}
	if open && cfg.AfterTheFact {
		c.tickSvcByOp = make([]*hdr.Histogram, len(cfg.Ops))
		for i := range c.tickSvcByOp {
			c.tickSvcByOp[i] = hist.New()
		}
	}
	for _, ph := range []Phase{Warmup, Measured} {
		pr := &PhaseResult{ByOp: make([]OpResult, len(cfg.Ops))}
		for i, name := range cfg.Ops {
			pr.ByOp[i] = OpResult{Name: name, Latency: hist.New()}
			if open {
				pr.ByOp[i].Service = hist.New()
			}
		}
		c.phases[ph] = pr
	}
	c.spareLat = make([][]*hdr.Histogram, len(workers))
	c.spareSvc = make([][]*hdr.Histogram, len(workers))
	for i := range workers {
		c.spareLat[i] = make([]*hdr.Histogram, len(cfg.Ops))
		for j := range c.spareLat[i] {
			c.spareLat[i][j] = hist.New()
		}
		if open {
			c.spareSvc[i] = make([]*hdr.Histogram, len(cfg.Ops))
			for j := range c.spareSvc[i] {
				c.spareSvc[i][j] = hist.New()
			}
		}
	}
	return c
}

// collect closes the interval [start, now) and assigns it to phase. The
// interval's latency histogram of all ops is kept encoded (Interval.Latency:
// a few hundred bytes a second, where a histogram is 200 KB).
func (c *collector) collect(phase Phase, start, now time.Duration) Interval {
	iv := Interval{Index: len(c.result.Intervals), Phase: phase, Start: start, Length: now - start,
		PerOpOK: make([]int64, len(c.cfg.Ops)), PerOpErr: make([]int64, len(c.cfg.Ops))}
	pr := c.phases[phase]
	c.tickLat.Reset()
	for _, h := range c.tickByOp {
		h.Reset()
	}
	for _, h := range c.tickSvcByOp {
		h.Reset()
	}
	for wi, w := range c.workers {
		lat, svc := c.spareLat[wi], c.spareSvc[wi]
		ops, errs := c.scratchOps, c.scratchErrs
		w.mu.Lock()
		w.lat, c.spareLat[wi] = lat, w.lat
		if svc != nil {
			w.svc, c.spareSvc[wi] = svc, w.svc
		}
		copy(ops, w.ops)
		copy(errs, w.errs)
		for i := range w.ops {
			w.ops[i], w.errs[i] = 0, 0
		}
		late := w.late
		w.late = 0
		if w.firstEr != nil && c.result.FirstError == nil {
			c.result.FirstError = w.firstEr
		}
		w.mu.Unlock()

		for op := range c.cfg.Ops {
			h := c.spareLat[wi][op]
			pr.ByOp[op].Latency.Merge(h)
			c.tickByOp[op].Merge(h)
			h.Reset()
			if svc != nil {
				s := c.spareSvc[wi][op]
				pr.ByOp[op].Service.Merge(s)
				if c.tickSvcByOp != nil {
					c.tickSvcByOp[op].Merge(s)
				}
				s.Reset()
			}
			pr.ByOp[op].Ops += ops[op]
			pr.ByOp[op].Errors += errs[op]
			iv.PerOpOK[op] += ops[op]
			iv.PerOpErr[op] += errs[op]
			iv.Ops += ops[op]
			iv.Errors += errs[op]
		}
		iv.Late += late
	}
	pr.Length += iv.Length
	pr.Ops += iv.Ops
	pr.Errors += iv.Errors
	pr.Late += iv.Late
	for _, h := range c.tickByOp {
		c.tickLat.Merge(h)
	}
	if c.tickLat.TotalCount() > 0 {
		iv.P50 = time.Duration(c.tickLat.ValueAtQuantile(50))
		iv.P99 = time.Duration(c.tickLat.ValueAtQuantile(99))
		iv.Max = time.Duration(c.tickLat.Max())
	}
	// Kept empty too: a second in which nothing completed is a stall the
	// log must show. Encoding cannot fail on a histogram of our geometry.
	iv.Latency, _ = hist.Encode(c.tickLat)
	if c.cfg.AfterTheFact && phase == Warmup {
		byOp := make([][]byte, len(c.tickByOp))
		for op, h := range c.tickByOp {
			byOp[op], _ = hist.Encode(h)
		}
		c.warmByOp = append(c.warmByOp, byOp)
		if c.tickSvcByOp != nil {
			svc := make([][]byte, len(c.tickSvcByOp))
			for op, h := range c.tickSvcByOp {
				svc[op], _ = hist.Encode(h)
			}
			c.warmSvcByOp = append(c.warmSvcByOp, svc)
		}
	}
	c.result.Intervals = append(c.result.Intervals, iv)
	lent := iv
	lent.ByOp = c.tickByOp
	if c.cfg.OnTick != nil {
		c.cfg.OnTick(lent)
	}
	return lent
}

// warmupIntervals are the intervals collected so far, all warmup's until
// the measured window begins.
func (c *collector) warmupIntervals() []Interval {
	return c.result.Intervals
}

// truncate chooses the measured window after the fact (Config.AfterTheFact):
// MSER-5 cuts the series at most the warmup's most in (in closed loop its
// throughput, in open loop its latency: TruncateLatency), the warmup phase
// is rebuilt from the intervals before the cut and those after it join the
// measured window, relabelled, with their service times in open loop.
func (c *collector) truncate() {
	t := Truncate(c.result.Intervals, c.cfg.Warmup, c.cfg.Steady)
	if c.result.OpenLoop {
		t = TruncateLatency(c.result.Intervals, c.cfg.Warmup)
	}
	c.result.Truncation = &t
	c.result.WarmupTaken = t.At
	c.result.Steady = t.Steady == nil || *t.Steady
	warm := &PhaseResult{ByOp: make([]OpResult, len(c.cfg.Ops))}
	for i, name := range c.cfg.Ops {
		warm.ByOp[i] = OpResult{Name: name, Latency: hist.New()}
		if c.result.OpenLoop {
			warm.ByOp[i].Service = hist.New()
		}
	}
	meas := c.phases[Measured]
	for i := range c.result.Intervals {
		iv := &c.result.Intervals[i]
		if iv.Phase != Warmup || i >= len(c.warmByOp) {
			continue
		}
		pr := warm
		if i >= t.Intervals {
			pr, iv.Phase = meas, Measured
		}
		pr.Length += iv.Length
		pr.Ops += iv.Ops
		pr.Errors += iv.Errors
		pr.Late += iv.Late
		for op, enc := range c.warmByOp[i] {
			if h, err := hist.Decode(enc); err == nil {
				pr.ByOp[op].Latency.Merge(h)
			}
			pr.ByOp[op].Ops += iv.PerOpOK[op]
			pr.ByOp[op].Errors += iv.PerOpErr[op]
		}
		if i < len(c.warmSvcByOp) {
			for op, enc := range c.warmSvcByOp[i] {
				if h, err := hist.Decode(enc); err == nil {
					pr.ByOp[op].Service.Merge(h)
				}
			}
		}
	}
	c.phases[Warmup] = warm
}
