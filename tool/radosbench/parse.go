package radosbench

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// What `rados bench SECONDS write|seq|rand` (Ceph 16.2) prints on stdout
// (testdata holds real captures):
//
//	hints = 1
//	Maintaining 2 concurrent writes of 4096 bytes to objects of size 4096 for up to 5 seconds or 0 objects
//	Object prefix: benchmark_data_vm_5998
//	  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)
//	    0       0         0         0         0         0           -           0
//	    1       2       193       191  0.746107  0.746094  0.00810325   0.0104081
//	...
//	Total time run:         5.00329
//	Total writes made:      1072
//	Write size:             4096
//	...
//	Average IOPS:           214
//	Average Latency(s):     0.00932101
//	Stddev Latency(s):      0.0116444
//	Max latency(s):         0.147766
//	Min latency(s):         0.00138781
//
// A status thread prints one row a second (row i at about i s after the
// start): the ops started and finished so far, and the average latency of
// all finished so far (6 significant digits). Every 20 rows it prints the
// minimum, maximum and average latency so far on a dated line and the
// header again. The bench stops starting ops at SECONDS (seq also when it
// has read every object of the last write pass, often well before) and
// waits for those in flight; the summary covers the whole run, including
// the part after the last row. Reads say "Total reads made" and "Read
// size". A failure ("Must write data before running a read benchmark!",
// "error opening pool ...") goes to stderr and leaves no summary; a read
// whose data is wrong prints "... is not correct!" on stderr and counts
// as done.

// Row is one per-second status row.
type Row struct {
	Sec      int
	Started  int64
	Finished int64
	// AvgLat is the mean latency of the Finished ops.
	AvgLat time.Duration
}

// Summary is the report at the end of a bench.
type Summary struct {
	// TotalTime is from the first op's start to the last op's end.
	TotalTime time.Duration
	// Ops is "Total writes made" or "Total reads made"; Op says which.
	Ops int64
	Op  string // write | read
	// OpSize and ObjectSize are in bytes.
	OpSize, ObjectSize int64
	BandwidthMBps      float64 // MiB/s, as rados bench computes it
	AvgIOPS            float64
	AvgLat, StddevLat  time.Duration
	MaxLat, MinLat     time.Duration
}

// Report is everything parsed from one bench's output.
type Report struct {
	Rows    []Row
	Summary *Summary
	// WrongReads counts reads whose data did not match what was written
	// ("is not correct!" on stderr).
	WrongReads int64
}

var rowRE = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+\S+\s+(\S+)\s*$`)

// summaryKeys maps the summary's labels, without their "(s)" and colon,
// to the field each fills.
var summaryKeys = map[string]func(s *Summary, v float64){
	"Total time run":     func(s *Summary, v float64) { s.TotalTime = seconds(v) },
	"Total writes made":  func(s *Summary, v float64) { s.Ops, s.Op = int64(v), "write" },
	"Total reads made":   func(s *Summary, v float64) { s.Ops, s.Op = int64(v), "read" },
	"Write size":         func(s *Summary, v float64) { s.OpSize = int64(v) },
	"Read size":          func(s *Summary, v float64) { s.OpSize = int64(v) },
	"Object size":        func(s *Summary, v float64) { s.ObjectSize = int64(v) },
	"Bandwidth (MB/sec)": func(s *Summary, v float64) { s.BandwidthMBps = v },
	"Average IOPS":       func(s *Summary, v float64) { s.AvgIOPS = v },
	"Average Latency":    func(s *Summary, v float64) { s.AvgLat = seconds(v) },
	"Stddev Latency":     func(s *Summary, v float64) { s.StddevLat = seconds(v) },
	"Max latency":        func(s *Summary, v float64) { s.MaxLat = seconds(v) },
	"Min latency":        func(s *Summary, v float64) { s.MinLat = seconds(v) },
}

// parser reads one bench's stdout a line at a time.
type parser struct {
	rep Report
}

// feed takes one line of stdout and returns the status row it is, if it
// is one.
func (p *parser) feed(line string) (Row, bool) {
	line = strings.TrimRight(line, "\r")
	if m := rowRE.FindStringSubmatch(line); m != nil {
		avg, err := strconv.ParseFloat(m[5], 64)
		if err != nil {
			return Row{}, false
		}
		r := Row{Sec: int(atoi(m[1])), Started: atoi(m[3]), Finished: atoi(m[4]), AvgLat: seconds(avg)}
		p.rep.Rows = append(p.rep.Rows, r)
		return r, true
	}
	key, value, ok := strings.Cut(line, ":")
	if !ok || !strings.HasPrefix(key, "Total") && p.rep.Summary == nil {
		return Row{}, false // the summary starts with "Total time run"
	}
	set, known := summaryKeys[strings.TrimSuffix(strings.TrimSpace(key), "(s)")]
	v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if !known || err != nil {
		return Row{}, false
	}
	if p.rep.Summary == nil {
		p.rep.Summary = &Summary{}
	}
	set(p.rep.Summary, v)
	return Row{}, false
}

// feedErr takes one line of stderr.
func (p *parser) feedErr(line string) {
	if strings.HasSuffix(strings.TrimSpace(line), " is not correct!") {
		p.rep.WrongReads++
	}
}

// Parse parses a whole bench's stdout and stderr.
func Parse(stdout, stderr string) Report {
	var p parser
	for _, l := range strings.Split(stdout, "\n") {
		p.feed(l)
	}
	for _, l := range strings.Split(stderr, "\n") {
		p.feedErr(l)
	}
	return p.rep
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// seconds converts rados bench's seconds to a duration, to the nanosecond.
func seconds(v float64) time.Duration { return time.Duration(math.Round(v * 1e9)) }
