package sysbench

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
)

// What sysbench 1.0.20 prints on stdout for
// `run --report-interval=1 --histogram=on --percentile=99 --report-checkpoints=W`
// (testdata holds real captures):
//
//	[ 1s ] thds: 2 tps: 1462.94 qps: 29411.80 (r/w/o: 20600.17/5846.74/2964.90) lat (ms,99%): 2.35 err/s: 10.01 reconn/s: 0.00
//	[ 2s ] Checkpoint report:
//	SQL statistics:
//	    ...
//	    transactions:                        73     (72.83 per sec.)
//	    ignored errors:                      0      (0.00 per sec.)
//	General statistics:
//	    total time:                          1.0002s
//	    total number of events:              73
//	Latency (ms):
//	         99th percentile:                        3.36
//	...
//	Latency histogram (values are in milliseconds)
//	       value  ------------- distribution ------------- count
//	       0.619 |*                                        4
//	...
//	SQL statistics:            (the final report, same shape)
//
// One interval line per second from the reporting thread; a checkpoint
// report (a thread of its own, so its lines and an interval line of the
// same second come in either order) at each --report-checkpoints time; at
// the end the latency histogram, then the final report. Errors (FATAL: ...)
// are on stdout too.

// Line is one per-second report.
type Line struct {
	At        time.Duration // end of the interval, since the threads started
	Threads   int
	TPS       float64
	QPS       float64
	P99       time.Duration // 0 when sysbench printed 0.00: see interval
	ErrPerSec float64
}

// Summary is one cumulative report: a checkpoint's (counters since the
// start or the previous checkpoint) or the final one (since the last
// checkpoint).
type Summary struct {
	Transactions  int64
	Queries       int64
	IgnoredErrors int64
	Reconnects    int64
	// TotalTime is since the threads started, whatever checkpoints reset.
	TotalTime  time.Duration
	Events     int64
	Min, Avg   time.Duration
	Max, PctAt time.Duration // PctAt: the --percentile value
	Percentile int
}

// Bucket is one line of sysbench's latency histogram.
type Bucket struct {
	Ms    float64 // the bucket's value as printed, in milliseconds
	Count int64
}

// Report is everything parsed from one sysbench run's output.
type Report struct {
	Lines       []Line
	Checkpoints []Summary
	Final       *Summary
	Histogram   []Bucket
}

var (
	lineRE   = regexp.MustCompile(`^\[\s*(\d+)s\s*\] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) .*lat \(ms,\d+%\): ([\d.]+) err/s: ([\d.]+)`)
	checkRE  = regexp.MustCompile(`^\[\s*\d+s\s*\] Checkpoint report:`)
	bucketRE = regexp.MustCompile(`^\s*([\d.]+) \|\**\s+(\d+)$`)
	countRE  = regexp.MustCompile(`^\s+(transactions|queries|ignored errors|reconnects|total number of events):\s+(\d+)`)
	timeRE   = regexp.MustCompile(`^\s+total time:\s+([\d.]+)s$`)
	latRE    = regexp.MustCompile(`^\s+(min|avg|max|(\d+)th percentile):\s+([\d.]+)$`)
)

// parser reads sysbench's output a line at a time.
type parser struct {
	rep        Report
	cur        *Summary // the report being read
	inHist     bool
	checkpoint bool // a "Checkpoint report:" line came, its figures not yet
}

// feed takes one line of output and returns the per-second report it is,
// if it is one.
func (p *parser) feed(s string) (Line, bool) {
	s = strings.TrimRight(s, "\r")
	if m := lineRE.FindStringSubmatch(s); m != nil {
		l := Line{At: time.Duration(atoi(m[1])) * time.Second, Threads: int(atoi(m[2])),
			TPS: atof(m[3]), QPS: atof(m[4]), P99: ms(atof(m[5])), ErrPerSec: atof(m[6])}
		p.rep.Lines = append(p.rep.Lines, l)
		return l, true
	}
	switch {
	case checkRE.MatchString(s):
		p.checkpoint = true
		return Line{}, false
	case strings.HasPrefix(s, "Latency histogram"):
		p.inHist, p.cur = true, nil
		return Line{}, false
	case strings.HasPrefix(s, "SQL statistics:"):
		p.inHist = false
		p.cur = &Summary{}
		if p.checkpoint {
			p.rep.Checkpoints = append(p.rep.Checkpoints, Summary{})
			p.cur = &p.rep.Checkpoints[len(p.rep.Checkpoints)-1]
			p.checkpoint = false
		} else {
			p.rep.Final = p.cur
		}
		return Line{}, false
	}
	if p.inHist {
		if m := bucketRE.FindStringSubmatch(s); m != nil {
			p.rep.Histogram = append(p.rep.Histogram, Bucket{Ms: atof(m[1]), Count: atoi(m[2])})
		}
		return Line{}, false
	}
	if p.cur == nil {
		return Line{}, false
	}
	if m := countRE.FindStringSubmatch(s); m != nil {
		n := atoi(m[2])
		switch m[1] {
		case "transactions":
			p.cur.Transactions = n
		case "queries":
			p.cur.Queries = n
		case "ignored errors":
			p.cur.IgnoredErrors = n
		case "reconnects":
			p.cur.Reconnects = n
		case "total number of events":
			p.cur.Events = n
		}
	} else if m := timeRE.FindStringSubmatch(s); m != nil {
		p.cur.TotalTime = time.Duration(math.Round(atof(m[1]) * 1e9))
	} else if m := latRE.FindStringSubmatch(s); m != nil {
		v := ms(atof(m[3]))
		switch m[1] {
		case "min":
			p.cur.Min = v
		case "avg":
			p.cur.Avg = v
		case "max":
			p.cur.Max = v
		default:
			p.cur.PctAt, p.cur.Percentile = v, int(atoi(m[2]))
		}
	}
	return Line{}, false
}

// Parse parses a whole run's output.
func Parse(out string) Report {
	var p parser
	for _, l := range strings.Split(out, "\n") {
		p.feed(l)
	}
	return p.rep
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func atof(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// ms converts milliseconds to a duration, rounded to the nanosecond.
func ms(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

// sysbench's latency histogram (sb_logger.c, sb_histogram.c): 1024
// buckets on a log scale from 0.001 ms to 100000 ms, so neighbouring
// buckets are a factor exp(ln(1e8)/1023) ≈ 1.018 apart (≈1.8%); an event
// of latency v goes to bucket i = round((ln v - ln 0.001) * m), whose value
// exp(i/m + ln 0.001) sysbench prints with 3 decimals ("%12.3f").
const (
	sbBuckets = 1024
	sbMinMs   = 1e-3
	sbMaxMs   = 1e5
)

var sbMult = (sbBuckets - 1) / (math.Log(sbMaxMs) - math.Log(sbMinMs))

// bucketValue returns a printed bucket value at full precision: the value
// of the bucket it names, when it names one, else the printed value (a
// sysbench with another geometry).
func bucketValue(printed float64) float64 {
	if printed <= 0 {
		return printed
	}
	i := math.Round((math.Log(printed) - math.Log(sbMinMs)) * sbMult)
	exact := math.Exp(i/sbMult + math.Log(sbMinMs))
	if math.Abs(exact-printed) <= 0.0005+1e-9 {
		return exact
	}
	return printed
}

// Histogram returns sysbench's latency histogram as a tierbench HDR
// histogram in nanoseconds: each bucket's count recorded at the bucket's
// value (bucketValue), clamped into hist's range (1 ns to 60 s; sysbench's
// reaches 100 s). It is as coarse as sysbench's: ~1.8% buckets, so a
// percentile is good to about ±0.9% however fine the HDR histogram is.
func Histogram(buckets []Bucket) *hdr.Histogram {
	h := hist.New()
	for _, b := range buckets {
		v := int64(math.Round(bucketValue(b.Ms) * 1e6))
		v = max(hist.LowestNs, min(v, hist.HighestNs))
		_ = h.RecordValues(v, b.Count) // cannot fail: v is in range
	}
	return h
}

// interval turns a per-second report into the driver's Interval number
// index: warmup while it ends within the first warmup seconds. Ops and
// Errors are sysbench's per-second rates times the 1 s interval, rounded.
// P99 is the interval's, from sysbench's histogram; 0 when unknown: an
// interval report that runs just after the checkpoint report of the same
// second finds the histogram emptied by it and prints 0.00.
func interval(l Line, index int, warmup time.Duration) driver.Interval {
	const length = time.Second // --report-interval=1
	phase := driver.Measured
	if l.At <= warmup {
		phase = driver.Warmup
	}
	ops := int64(math.Round(l.TPS * length.Seconds()))
	return driver.Interval{
		Index:   index,
		Phase:   phase,
		Start:   l.At - length,
		Length:  length,
		Ops:     ops,
		Errors:  int64(math.Round(l.ErrPerSec * length.Seconds())),
		P99:     l.P99,
		PerOpOK: []int64{ops},
	}
}

// result builds the driver's Result from a finished run's report. With a
// warmup, sysbench ran with --report-checkpoints at its end: the checkpoint
// report holds the warmup's counts (and reset every counter, timer and the
// histogram), the final report the measured window's. sysbench prints no
// histogram at a checkpoint, so the warmup's latency histogram is empty.
func result(rep Report, warmup time.Duration, op string) (*driver.Result, error) {
	if rep.Final == nil {
		return nil, fmt.Errorf("sysbench printed no final report")
	}
	fin := *rep.Final
	res := &driver.Result{}
	measuredFrom := time.Duration(0)
	if warmup > 0 {
		if len(rep.Checkpoints) == 0 {
			return nil, fmt.Errorf("sysbench printed no checkpoint report at the end of the %v warmup, so its figures would include the warmup", warmup)
		}
		cp := rep.Checkpoints[0]
		measuredFrom = cp.TotalTime
		res.Warmup = driver.PhaseResult{Length: cp.TotalTime, Ops: cp.Transactions, Errors: cp.IgnoredErrors,
			ByOp: []driver.OpResult{{Name: op, Ops: cp.Transactions, Errors: cp.IgnoredErrors, Latency: hist.New()}}}
	} else {
		res.Warmup = driver.PhaseResult{ByOp: []driver.OpResult{{Name: op, Latency: hist.New()}}}
	}
	res.Measured = driver.PhaseResult{Length: fin.TotalTime - measuredFrom, Ops: fin.Transactions, Errors: fin.IgnoredErrors,
		ByOp: []driver.OpResult{{Name: op, Ops: fin.Transactions, Errors: fin.IgnoredErrors, Latency: Histogram(rep.Histogram)}}}
	for i, l := range rep.Lines {
		res.Intervals = append(res.Intervals, interval(l, i, warmup))
	}
	if n := res.Warmup.Errors + res.Measured.Errors; n > 0 {
		res.FirstError = fmt.Errorf("sysbench: %d ignored errors (deadlocks, lock wait timeouts, serialization failures or duplicate keys); sysbench restarted each of those transactions", n)
	}
	return res, nil
}
