package searchbench

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
)

// What both tools write with --report-format=csv (Rally) or
// --results-format=csv (OSB), their summary of the measured samples (the
// warmup's are left out); testdata holds real ones:
//
//	Metric,Task,Value,Unit
//	Cumulative indexing time of primary shards,,0.21,min
//	...
//	Min Throughput,bulk,8243.61,docs/s
//	Mean Throughput,bulk,9570.85,docs/s
//	Median Throughput,bulk,9687.02,docs/s
//	Max Throughput,bulk,10314.33,docs/s
//	50th percentile latency,bulk,196.5,ms
//	...
//	100th percentile service time,bulk,412.9,ms
//	error rate,bulk,0.00,%
//
// Rows without a task are the node's totals (indexing, merge, GC times),
// which tierbench measures itself and skips. A task's throughput is in
// docs/s for a bulk task and ops/s for a search task; its percentiles are
// of its requests, as many as its sample count supports (50, 90, 99, 99.9,
// 99.99, 100). The summary counts no requests: tierbench gets a task's
// count from its mean throughput over the measured period.

// Percentile is one percentile of a task's requests.
type Percentile struct {
	Q  float64 // 50, 99.9, 100
	Ms float64
}

// TaskFigures is one task's lines of the summary.
type TaskFigures struct {
	Task string
	// MeanThroughput is in ThroughputUnit: docs/s (bulk) or ops/s.
	MeanThroughput float64
	ThroughputUnit string
	HasThroughput  bool
	// Latency and ServiceTime are in ascending percentile order. With no
	// target throughput (tierbench runs the tools closed loop) the two
	// are the same.
	Latency, ServiceTime []Percentile
	// ErrorRate is the share of the task's requests that failed, 0-1.
	ErrorRate float64
}

var percentileRE = regexp.MustCompile(`^([0-9.]+)th percentile (latency|service time)$`)

// ParseCSV reads a tool's CSV summary: each task's figures, in the order
// the tasks first appear.
func ParseCSV(r io.Reader) ([]TaskFigures, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var (
		out   []TaskFigures
		index = map[string]int{}
	)
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("CSV summary: %w", err)
		}
		if len(rec) < 3 || rec[1] == "" || (line == 1 && rec[0] == "Metric") {
			continue
		}
		metric, taskName, value := rec[0], rec[1], strings.TrimSpace(rec[2])
		unit := ""
		if len(rec) > 3 {
			unit = rec[3]
		}
		i, ok := index[taskName]
		if !ok {
			i = len(out)
			index[taskName] = i
			out = append(out, TaskFigures{Task: taskName})
		}
		t := &out[i]
		if value == "" {
			continue // a figure the tool had no sample for
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("CSV summary line %d: %s of task %s: %q is not a number", line, metric, taskName, value)
		}
		switch m := percentileRE.FindStringSubmatch(metric); {
		case metric == "Mean Throughput":
			t.MeanThroughput, t.ThroughputUnit, t.HasThroughput = v, unit, true
		case metric == "error rate":
			t.ErrorRate = v / 100
		case m != nil:
			q, err := strconv.ParseFloat(m[1], 64)
			if err != nil || q <= 0 || q > 100 {
				return nil, fmt.Errorf("CSV summary line %d: percentile %q", line, m[1])
			}
			if unit != "ms" {
				return nil, fmt.Errorf("CSV summary line %d: %s of task %s in %q, want ms", line, metric, taskName, unit)
			}
			if m[2] == "latency" {
				t.Latency = append(t.Latency, Percentile{q, v})
			} else {
				t.ServiceTime = append(t.ServiceTime, Percentile{q, v})
			}
		}
	}
	for i := range out {
		for _, ps := range [][]Percentile{out[i].Latency, out[i].ServiceTime} {
			sort.Slice(ps, func(a, b int) bool { return ps[a].Q < ps[b].Q })
		}
	}
	return out, nil
}

// percentileHistogram returns an HDR histogram (nanoseconds) of n values
// with the given percentiles: the share of values between two reported
// percentiles is recorded at the upper one's value, and at least one at
// the highest (the maximum, when it is the 100th). Its percentiles at the
// reported ones are the tool's; between them it knows no more than they do.
func percentileHistogram(n int64, ps []Percentile) *hdr.Histogram {
	h := hist.New()
	if n <= 0 || len(ps) == 0 {
		return h
	}
	var done int64
	for i, p := range ps {
		upTo := int64(math.Round(float64(n) * p.Q / 100))
		if i == len(ps)-1 {
			upTo = n
		}
		count := min(upTo, n-int64(len(ps)-1-i)) - done // leave one for each higher percentile
		if count <= 0 {
			continue
		}
		v := int64(math.Round(p.Ms * 1e6))
		_ = h.RecordValues(max(hist.LowestNs, min(v, hist.HighestNs)), count) // in range: cannot fail
		done += count
	}
	return h
}

// result turns the summary of p's tasks into the run's figures of ops
// (the workload's, in its order).
// Each op's requests in the measured window are its mean throughput over
// the period (a bulk's docs/s divided by the bulk size), less the error
// rate's share, which are its errors; its latency is the service time's
// percentiles over those requests. The tools report nothing of the warmup
// but its length, and no per-second figures: the timeline is one interval,
// the measured window.
func result(tool string, figs []TaskFigures, p plan, ops []string, warmup, period time.Duration) (*driver.Result, error) {
	byTask := map[string]TaskFigures{}
	for _, f := range figs {
		byTask[f.Task] = f
	}
	res := &driver.Result{
		Warmup:   driver.PhaseResult{Length: warmup},
		Measured: driver.PhaseResult{Length: period},
	}
	iv := driver.Interval{Phase: driver.Measured, Start: warmup, Length: period}
	all := hist.New()
	var failing []string
	for _, op := range ops {
		res.Warmup.ByOp = append(res.Warmup.ByOp, driver.OpResult{Name: op, Latency: hist.New()})
		if p.clientsOf(op) == 0 { // a query type of ingest-search at search_percent 0
			res.Measured.ByOp = append(res.Measured.ByOp, driver.OpResult{Name: op, Latency: hist.New()})
			iv.PerOpOK = append(iv.PerOpOK, 0)
			continue
		}
		f, ok := byTask[op]
		if !ok || !f.HasThroughput {
			return nil, fmt.Errorf("%s reported no throughput for task %s: it ended inside the warmup (as when its corpus runs out) or every request failed", tool, op)
		}
		perSec := f.MeanThroughput
		switch f.ThroughputUnit {
		case "docs/s":
			perSec /= float64(p.bulkSize)
		case "ops/s":
		default:
			return nil, fmt.Errorf("%s: task %s's throughput is in %q, want docs/s or ops/s", tool, op, f.ThroughputUnit)
		}
		requests := int64(math.Round(perSec * period.Seconds()))
		errs := int64(math.Round(float64(requests) * min(max(f.ErrorRate, 0), 1)))
		ok64 := requests - errs
		lat := f.ServiceTime
		if len(lat) == 0 {
			lat = f.Latency
		}
		h := percentileHistogram(ok64, lat)
		all.Merge(h)
		res.Measured.ByOp = append(res.Measured.ByOp, driver.OpResult{Name: op, Ops: ok64, Errors: errs, Latency: h})
		res.Measured.Ops += ok64
		res.Measured.Errors += errs
		iv.PerOpOK = append(iv.PerOpOK, ok64)
		if f.ErrorRate > 0 {
			failing = append(failing, fmt.Sprintf("%s %.2f%%", op, f.ErrorRate*100))
		}
	}
	iv.Ops, iv.Errors = res.Measured.Ops, res.Measured.Errors
	if all.TotalCount() > 0 {
		iv.P50, iv.P99, iv.Max = time.Duration(all.ValueAtQuantile(50)), time.Duration(all.ValueAtQuantile(99)), time.Duration(all.Max())
	}
	res.Intervals = []driver.Interval{iv}
	if len(failing) > 0 {
		slices.Sort(failing)
		res.FirstError = fmt.Errorf("%s: requests failed (its error rate per task: %s); the tool's log says which", tool, strings.Join(failing, ", "))
	}
	return res, nil
}
