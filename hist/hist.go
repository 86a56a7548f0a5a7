// Package hist fixes tierbench's latency histogram geometry and the few
// operations every other package needs on it: create, summarise, encode,
// print.
//
// All histograms hold nanoseconds, 1 ns to 60 s, 3 significant figures, so any
// two can be merged and a stored one can answer any percentile later.
package hist

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Geometry of every tierbench histogram.
const (
	LowestNs  = 1
	HighestNs = int64(60 * time.Second)
	SigFigs   = 3
)

// New returns an empty histogram with tierbench's geometry.
func New() *hdr.Histogram { return hdr.New(LowestNs, HighestNs, SigFigs) }

// Record adds one latency, clamped into the trackable range so that an
// outlier beyond 60 s is counted at 60 s rather than silently dropped.
func Record(h *hdr.Histogram, d time.Duration) {
	v := int64(d)
	if v < LowestNs {
		v = LowestNs
	} else if v > HighestNs {
		v = HighestNs
	}
	_ = h.RecordValue(v) // cannot fail: v is in range
}

// Encode returns the standard compressed HDR encoding (V2, zlib).
func Encode(h *hdr.Histogram) ([]byte, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encode histogram: %w", err)
	}
	return b, nil
}

// Decode reverses Encode.
func Decode(b []byte) (*hdr.Histogram, error) {
	h, err := hdr.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// Summary is the usual percentile set, in microseconds.
type Summary struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	// P95 is absent from runs stored before latency objectives could
	// bound it.
	P95  float64 `json:"p95,omitempty"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Summarize computes a Summary in microseconds. An empty histogram gives zeros.
func Summarize(h *hdr.Histogram) Summary {
	if h == nil || h.TotalCount() == 0 {
		return Summary{}
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return Summary{
		Count: h.TotalCount(),
		P50:   us(h.ValueAtQuantile(50)),
		P90:   us(h.ValueAtQuantile(90)),
		P95:   us(h.ValueAtQuantile(95)),
		P99:   us(h.ValueAtQuantile(99)),
		P999:  us(h.ValueAtQuantile(99.9)),
		Max:   us(h.Max()),
		Mean:  h.Mean() / 1e3,
	}
}

// FormatMicros prints microseconds (a Summary's unit) with a unit that
// keeps 3 significant figures: 250ns, 4.4µs, 1.50ms, 2.50s.
func FormatMicros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2fs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2fms", us/1e3)
	case us >= 1:
		return fmt.Sprintf("%.1fµs", us)
	default:
		return fmt.Sprintf("%.0fns", us*1e3)
	}
}
