package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/hist/hdrlog"
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
		var skipped []string
		for _, r := range ex.runs {
			l, err := runLog(ctx, ex.store, ex.study, r)
			if err != nil {
				return err
			}
			if len(l.Intervals) == 0 {
				skipped = append(skipped, r.ID)
				continue
			}
			logs[r.ID] = l
		}
		if len(logs) == 0 {
			return &exitError{code: exitNothingStored, err: fmt.Errorf("study %s has no run with latency per interval to export: its runs were stored before tierbench kept it, "+
				"or measured by a load generator that reports none (pgbench, sysbench, OSB, Rally, rados bench, on a cluster); nothing was written", ex.study.ID)}
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
		if len(skipped) > 0 {
			fmt.Fprintf(os.Stderr, "no latency per interval stored for %d run(s), not exported: %s\n", len(skipped), strings.Join(skipped, ", "))
		}
		return nil
	}, nil
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

// writeLog writes l to path, replacing a log of the same run.
func writeLog(path string, l hdrlog.Log) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--hdr: %w", err)
	}
	if err := hdrlog.Write(f, l); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
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
