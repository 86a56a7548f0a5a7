package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/hist/hdrlog"
	"github.com/tierbench/tierbench/host/userfile"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/tier"
)

// hdrExporter checks --hdr DIR before anything is read and returns its
// exporter: each run that kept interval histograms written as an
// HdrHistogram interval log, DIR/RUN_ID.hlog, one line per tick of all
// ops' latency, the warmup's tagged "warmup" so that a reader's default
// (untagged lines) is the measured window. It reads every log before
// writing one: a study without any exits 4 and writes nothing.
func (o *exportOptions) hdrExporter() (exporter, error) {
	dir := o.hdrDir
	if strings.TrimSpace(dir) == "" {
		return nil, errors.New("--hdr needs a folder to write the interval logs in")
	}
	if err := tier.CheckCreatable(dir); err != nil {
		return nil, fmt.Errorf("--hdr %s cannot be made: %v; give a folder you can write", dir, err)
	}
	return func(ctx context.Context, ex exported) error {
		logs := map[string]hdrlog.Log{}
		var skipped skippedRuns
		for _, r := range ex.runs {
			l, err := runLog(ctx, ex.store, ex.study, r)
			if err != nil {
				return err
			}
			if len(l.Intervals) == 0 {
				skipped.add(noIntervalsWhy(ex.study, r), r.ID)
				continue
			}
			logs[r.ID] = l
		}
		if len(logs) == 0 {
			return &exitError{code: exitNothingStored, err: fmt.Errorf("study %s has no run with latency per interval to export, nothing was written: %s",
				ex.study.ID, skipped)}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--hdr %s: %w", dir, err)
		}
		for _, r := range ex.runs {
			l, ok := logs[r.ID]
			if !ok {
				continue
			}
			path := filepath.Join(dir, r.ID+".hlog")
			if err := writeLog(path, l); err != nil {
				return err
			}
			fmt.Printf("%s: %s %s c=%d #%d, %d intervals (%s)\n", path, ex.study.SeriesOf(r), r.Durability, r.Clients, r.Repeat,
				len(l.Intervals), measuredFigures(l))
		}
		if skipped.n > 0 {
			fmt.Fprintf(os.Stderr, "no latency per interval stored for %d run(s), not exported: %s\n", skipped.n, skipped)
		}
		return nil
	}, nil
}

// skippedRuns are the runs --hdr found no interval to export of, by why.
type skippedRuns struct {
	whys []string
	runs map[string][]string
	n    int
}

func (s *skippedRuns) add(why, run string) {
	if s.runs == nil {
		s.runs = map[string][]string{}
	}
	if _, ok := s.runs[why]; !ok {
		s.whys = append(s.whys, why)
	}
	s.runs[why] = append(s.runs[why], run)
	s.n++
}

// String says, on one line, each reason and its runs.
func (s skippedRuns) String() string {
	parts := make([]string, len(s.whys))
	for i, why := range s.whys {
		parts[i] = fmt.Sprintf("%s (%s)", why, strings.Join(s.runs[why], ", "))
	}
	return strings.Join(parts, "; ")
}

// noIntervalsWhy says why run r has no latency histogram per interval:
// what its load generator reports, or that it was stored before
// tierbench kept them.
func noIntervalsWhy(st *results.Study, r results.Run) string {
	switch d := r.DriverOf(); {
	case len(r.Timeline) == 0 && r.Status != results.RunOK:
		return "it " + r.Status + " before its timeline began"
	case st.Platform != "":
		return "it ran on a cluster, whose load generator's Job reports no histogram per interval"
	case d == "sysbench":
		return "sysbench reports one latency percentile per interval (--report-interval), no histogram: its p99 per second is in the run's timeline"
	case d == "pgbench":
		return "stored before tierbench built pgbench's histograms per second from its transaction log (runs since have them)"
	case d == results.BuiltinDriver || strings.HasPrefix(d, results.BuiltinDriver+":"):
		return "stored before tierbench kept latency per interval, or driven by the engine's own client (Ignite's), which reports none"
	default:
		return "driver " + d + " reports no latency histogram per interval (only figures per second or per run)"
	}
}

// runLog is run r's interval log; without intervals when none is stored.
func runLog(ctx context.Context, store *results.Store, st *results.Study, r results.Run) (hdrlog.Log, error) {
	stored, err := store.IntervalHistograms(ctx, r.ID, results.OpAll, results.KindLatency)
	if err != nil || len(stored) == 0 {
		return hdrlog.Log{}, err
	}
	latency := "from each operation's start"
	if r.OpenLoop {
		latency = "from each operation's intended start (coordinated omission corrected; open loop)"
	}
	l := hdrlog.Log{Start: stored[0].Interval.Start, Comments: []string{
		fmt.Sprintf("tierbench study %s (%s), engine %s, workload %s", st.ID, st.Name, st.Engine, st.Workload),
		fmt.Sprintf("run %s: placement %s, durability %s, clients %d, round %d, status %s", r.ID, st.SeriesOf(r), r.Durability, r.Clients, r.Repeat, r.Status),
		"latency of all ops in nanoseconds, " + latency + ", one line per interval",
		"untagged lines: the measured window; lines tagged warmup: the warmup",
	}}
	for _, h := range stored {
		dec, err := hist.Decode(h.Encoded)
		if err != nil {
			return hdrlog.Log{}, fmt.Errorf("run %s, interval %d: %w", r.ID, h.Interval.Index, err)
		}
		tag := ""
		if h.Phase == string(driver.Warmup) {
			tag = string(driver.Warmup)
		}
		l.Intervals = append(l.Intervals, hdrlog.Interval{Start: h.Interval.Start, Length: h.Interval.Length, Tag: tag, Hist: dec})
	}
	return l, nil
}

// writeLog writes l to path, replacing a log of the same run (through a
// link there, never over a device: see userfile).
func writeLog(path string, l hdrlog.Log) error {
	if err := userfile.Write(path, 0o644, func(w io.Writer) error { return hdrlog.Write(w, l) }); err != nil {
		return fmt.Errorf("--hdr: %w", err)
	}
	return nil
}

// measuredFigures summarises the log's measured (untagged) intervals, as
// a reader of the log would find them.
func measuredFigures(l hdrlog.Log) string {
	all := hist.New()
	n := 0
	for _, iv := range l.Intervals {
		if iv.Tag == "" {
			all.Merge(iv.Hist)
			n++
		}
	}
	s := hist.Summarize(all)
	return fmt.Sprintf("%d measured: %d ops, p50 %s, p99 %s", n, s.Count, hist.FormatMicros(s.P50), hist.FormatMicros(s.P99))
}
