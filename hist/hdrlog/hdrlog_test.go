package hdrlog

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
)

// TestWriteReadsBack writes a log and reads it back with hdrhistogram-go's
// own HistogramLogReader: the header lines the format names, each
// interval's time, tag and values.
func TestWriteReadsBack(t *testing.T) {
	start := time.Date(2026, 11, 22, 13, 0, 7, 250_000_000, time.UTC)
	var ivs []Interval
	for i, tc := range []struct {
		tag    string
		values []time.Duration
	}{
		{"warmup", []time.Duration{3 * time.Millisecond}},
		{"", []time.Duration{100 * time.Microsecond, 200 * time.Microsecond, 5 * time.Millisecond}},
		{"", []time.Duration{2 * time.Second}},
	} {
		h := hist.New()
		for _, v := range tc.values {
			hist.Record(h, v)
		}
		ivs = append(ivs, Interval{Start: start.Add(time.Duration(i) * time.Second), Length: time.Second, Tag: tc.tag, Hist: h})
	}
	var buf bytes.Buffer
	if err := Write(&buf, Log{Start: start, Comments: []string{"run r1: wal-ram sync c=4 #1"}, Intervals: ivs}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"#[Histogram log format version 1.3]\n", "# run r1: wal-ram sync c=4 #1\n",
		"#[StartTime: 1795352407 (seconds since epoch), 2026-11-22T13:00:07Z]\n", "#[BaseTime: 1795352407 (seconds since epoch)]\n",
		"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
		"Tag=warmup,0.250000,1.000000,3.",
		"\n1.250000,1.000000,5.",
		"\n2.250000,1.000000,2000."} {
		if !strings.Contains(text, want) {
			t.Errorf("the log lacks %q:\n%s", want, text)
		}
	}
	rd := hdr.NewHistogramLogReader(&buf)
	for i, want := range ivs {
		got, err := rd.NextIntervalHistogram()
		if err != nil || got == nil {
			t.Fatalf("interval %d: %v, %v", i, got, err)
		}
		if got.Tag() != want.Tag || got.TotalCount() != want.Hist.TotalCount() || got.Max() != want.Hist.Max() ||
			got.ValueAtQuantile(50) != want.Hist.ValueAtQuantile(50) {
			t.Errorf("interval %d read back: tag %q, %d values, max %d, p50 %d; want %q, %d, %d, %d", i, got.Tag(), got.TotalCount(),
				got.Max(), got.ValueAtQuantile(50), want.Tag, want.Hist.TotalCount(), want.Hist.Max(), want.Hist.ValueAtQuantile(50))
		}
		if s := float64(got.StartTimeMs()-start.Truncate(time.Second).UnixMilli()) / 1e3; math.Abs(s-(0.25+float64(i))) > 1e-3 {
			t.Errorf("interval %d starts %.3fs after the base time, want %.3f", i, s, 0.25+float64(i))
		}
	}
	if got, err := rd.NextIntervalHistogram(); got != nil || (err != nil && !errors.Is(err, io.EOF)) {
		t.Errorf("after the last interval: %v, %v", got, err)
	}
}

func TestWriteRefuses(t *testing.T) {
	for name, l := range map[string]Log{
		"no histogram":   {Intervals: []Interval{{Length: time.Second}}},
		"tag with comma": {Intervals: []Interval{{Length: time.Second, Tag: "a,b", Hist: hist.New()}}},
	} {
		if err := Write(io.Discard, l); err == nil {
			t.Errorf("%s: written", name)
		}
	}
}
