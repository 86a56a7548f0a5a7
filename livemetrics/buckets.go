package livemetrics

import (
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// add counts an interval's HDR histogram (nanoseconds) into Buckets. Each
// of its bars counts in the first bucket at or above its lowest value,
// which is the value itself below 2048 ns and within 0.1% of it above: the
// HDR histogram's own resolution. The sum takes each bar's middle.
func (f *opFigures) add(h *hdr.Histogram) {
	if h.TotalCount() == 0 {
		return
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		s := float64(bar.From) / 1e9
		f.buckets[sort.SearchFloat64s(Buckets, s)] += uint64(bar.Count)
		f.count += uint64(bar.Count)
		f.sum += float64(bar.Count) * float64(bar.From+bar.To) / 2 / 1e9
	}
}

// cumulative is the buckets as Prometheus counts them: each bound's count
// of values at or below it (+Inf is the count).
func (f *opFigures) cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(Buckets))
	var n uint64
	for i, b := range Buckets {
		n += f.buckets[i]
		out[b] = n
	}
	return out
}
