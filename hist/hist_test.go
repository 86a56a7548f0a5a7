package hist

import (
	"math"
	"testing"
	"time"
)

// TestMergeKeepsPercentiles records two disjoint halves in two histograms and
// checks that their merge answers percentiles like one histogram of all.
func TestMergeKeepsPercentiles(t *testing.T) {
	a, b, all := New(), New(), New()
	for i := 1; i <= 10000; i++ {
		d := time.Duration(i) * time.Microsecond
		if i%2 == 0 {
			Record(a, d)
		} else {
			Record(b, d)
		}
		Record(all, d)
	}
	merged := New()
	merged.Merge(a)
	merged.Merge(b)
	if merged.TotalCount() != 10000 {
		t.Fatalf("merged count %d", merged.TotalCount())
	}
	for _, q := range []float64{50, 90, 99, 99.9, 100} {
		if got, want := merged.ValueAtQuantile(q), all.ValueAtQuantile(q); got != want {
			t.Errorf("p%v: merged %d, single %d", q, got, want)
		}
	}
	// 3 significant figures: p50 of 1..10000 µs is 5000 µs within 0.1%.
	if p50 := float64(merged.ValueAtQuantile(50)); math.Abs(p50-5e6)/5e6 > 0.001 {
		t.Errorf("p50 %v ns, want 5ms within 0.1%%", p50)
	}
}

func TestRecordClampsOutOfRange(t *testing.T) {
	h := New()
	Record(h, 0)
	Record(h, 2*time.Minute)
	if h.TotalCount() != 2 {
		t.Fatalf("count %d: out-of-range values were dropped", h.TotalCount())
	}
	if max := time.Duration(h.Max()); max < 59*time.Second {
		t.Errorf("max %s, want the 60 s ceiling", max)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	h := New()
	for i := 1; i <= 1000; i++ {
		Record(h, time.Duration(i*i)*time.Nanosecond)
	}
	b, err := Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if Summarize(back) != Summarize(h) {
		t.Errorf("round trip changed the summary: %+v vs %+v", Summarize(back), Summarize(h))
	}
	if _, err := Decode([]byte("not a histogram")); err == nil {
		t.Error("garbage decoded")
	}
}

func TestSummarizeEmpty(t *testing.T) {
	if s := Summarize(New()); s != (Summary{}) {
		t.Errorf("empty summary %+v", s)
	}
	if s := Summarize(nil); s != (Summary{}) {
		t.Errorf("nil summary %+v", s)
	}
}

func TestFormatMicros(t *testing.T) {
	cases := map[float64]string{0.25: "250ns", 4.36: "4.4µs", 1500: "1.50ms", 2.5e6: "2.50s"}
	for in, want := range cases {
		if got := FormatMicros(in); got != want {
			t.Errorf("%v: %q, want %q", in, got, want)
		}
	}
}
