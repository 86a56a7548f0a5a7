// Package hdrlog writes latency histograms over time as an HdrHistogram
// interval log: the text format of HdrHistogram's HistogramLogWriter (a
// "#[StartTime: ...]" and "#[BaseTime: ...]" header, a legend, then one
// line per interval with its start, length, maximum and its histogram in
// the base64 compressed encoding), so that HdrHistogram's own tools
// (HistogramLogProcessor, HistogramLogAnalyzer) and any reader of the
// format take tierbench's runs as they are. hdrhistogram-go's
// HistogramLogWriter writes the lines; this package fixes what tierbench
// puts in them.
package hdrlog

import (
	"errors"
	"fmt"
	"io"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Interval is one line of a log: a histogram of the values recorded from
// Start for Length. Tag, when set, marks the line (the format's
// "Tag=NAME,"): readers take untagged lines unless asked for a tag.
type Interval struct {
	Start  time.Time
	Length time.Duration
	Tag    string
	Hist   *hdr.Histogram
}

// Log is a whole interval log.
type Log struct {
	// Start is when recording began: the log's StartTime, and, in whole
	// seconds, its BaseTime, from which each line's timestamp counts.
	Start time.Time
	// Comments are written as "#" lines after the format version, one each.
	Comments  []string
	Intervals []Interval
}

// Write writes l to w. Values are nanoseconds, so each line's maximum is
// in milliseconds (the writer's default unit ratio of 10^6), as
// HistogramLogProcessor expects. It sets each interval histogram's start,
// end and tag.
func Write(w io.Writer, l Log) error {
	lw := hdr.NewHistogramLogWriter(w)
	base := l.Start.Truncate(time.Second).UnixMilli()
	lw.SetBaseTime(base)
	steps := []func() error{lw.OutputLogFormatVersion}
	for _, c := range l.Comments {
		steps = append(steps, func() error { return lw.OutputComment(" " + c) })
	}
	steps = append(steps,
		func() error { return lw.OutputStartTime(l.Start.UnixMilli()) },
		func() error { return lw.OutputBaseTime(base) },
		lw.OutputLegend)
	for _, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("write interval log header: %w", err)
		}
	}
	for i, iv := range l.Intervals {
		if iv.Hist == nil {
			return errors.New("write interval log: an interval without a histogram")
		}
		iv.Hist.SetStartTimeMs(iv.Start.UnixMilli())
		iv.Hist.SetEndTimeMs(iv.Start.Add(iv.Length).UnixMilli())
		iv.Hist.SetTag(iv.Tag)
		if err := lw.OutputIntervalHistogram(iv.Hist); err != nil {
			return fmt.Errorf("write interval %d of the log: %w", i, err)
		}
	}
	return nil
}
