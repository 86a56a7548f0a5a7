package stream

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/hist"
)

// The op names the client reports.
const opPut, opGet = "put", "get"

// encoded returns a histogram with n values of v ns, encoded as the Java
// client sends it.
func encoded(t *testing.T, n int, v int64) string {
	t.Helper()
	h := hist.New()
	for range n {
		hist.Record(h, time.Duration(v))
	}
	b, err := hist.Encode(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func final(phase, op string, ops, errs, length int64, h string) string {
	return fmt.Sprintf(`{"type":"final","phase":%q,"op":%q,"ops":%d,"errors":%d,"length_ns":%d,"hist":%q}`, phase, op, ops, errs, length, h)
}

func TestParse(t *testing.T) {
	h3 := encoded(t, 3, 1000)
	h5 := encoded(t, 5, 2000)
	empty := encoded(t, 0, 0)
	putget := []string{opPut, opGet}
	cases := []struct {
		name   string
		ops    []string
		lines  []string
		runErr error
		// want
		intervals   int
		ticks       []int64 // ops per interval, as OnTick saw them
		measured    map[string]int64
		measuredErr int64
		length      time.Duration
		firstErr    string
		err         string // substring; empty: no error
		hung        bool
	}{
		{
			name: "putget run",
			ops:  putget,
			lines: []string{
				`{"type":"ready"}`,
				`[02:21:18] Ignite node started OK`, // not JSON: ignored
				`{"type":"interval","phase":"warmup","index":0,"start_ns":0,"length_ns":500000000,"ops":{"put":1,"get":2},"errors":{"put":0,"get":0},"p50_ns":10,"p99_ns":20,"max_ns":30}`,
				`{"type":"interval","phase":"measured","index":1,"start_ns":500000000,"length_ns":1000000000,"ops":{"put":3,"get":5},"errors":{"put":1,"get":0},"p50_ns":10,"p99_ns":20,"max_ns":30}`,
				`{"type":"error","op":"put","message":"javax.cache.CacheException: \"boom\""}`,
				final("warmup", "put", 0, 0, 500000000, empty),
				final("warmup", "get", 0, 0, 500000000, empty),
				final("measured", "put", 3, 1, 1000000000, h3),
				final("measured", "get", 5, 0, 1000000000, h5),
				`{"type":"done"}`,
			},
			intervals: 2, ticks: []int64{3, 8},
			measured: map[string]int64{opPut: 3, opGet: 5}, measuredErr: 1, length: time.Second,
			firstErr: `put: javax.cache.CacheException: "boom"`,
		},
		{
			name:  "no final figures",
			ops:   []string{opPut},
			lines: []string{`{"type":"ready"}`, `{"type":"done"}`},
			err:   "without reporting its measured figures",
		},
		{
			name:   "client failed",
			ops:    []string{opPut},
			lines:  []string{`{"type":"ready"}`},
			runErr: errors.New("ignite client (run) failed (exit status 1)"),
			err:    "exit status 1",
		},
		{
			name:  "unknown op",
			ops:   []string{opPut},
			lines: []string{final("measured", "get", 5, 0, 1, h5)},
			err:   `op "get" is not one of the workload's ops`,
		},
		{
			name:  "bad histogram",
			ops:   []string{opPut},
			lines: []string{final("measured", "put", 5, 0, 1, "bm90IGEgaGlzdG9ncmFt")},
			err:   "decode histogram",
		},
		{
			name:  "count mismatch",
			ops:   []string{opPut},
			lines: []string{final("measured", "put", 4, 0, 1, h5)},
			err:   "histogram holds 5 operations, the line says 4",
		},
		{
			name:     "malformed JSON",
			ops:      []string{opPut},
			lines:    []string{`{"type":"interval",`, final("measured", "put", 5, 0, 1, h5)},
			err:      "the Ignite client's output",
			measured: map[string]int64{opPut: 5}, length: 1,
		},
		{
			name:  "hung threads",
			ops:   []string{opPut},
			lines: []string{`{"type":"hung","threads":2}`, final("measured", "put", 5, 0, 7, h5)},
			err:   "2 threads of the Ignite client", hung: true,
			measured: map[string]int64{opPut: 5}, length: 7,
		},
		{
			name:     "unknown type",
			ops:      []string{opPut},
			lines:    []string{`{"type":"surprise"}`, final("measured", "put", 5, 0, 1, h5)},
			err:      `unknown type "surprise"`,
			measured: map[string]int64{opPut: 5}, length: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ticks []int64
			p := NewReader("the Ignite client", driver.Config{Ops: c.ops, Duration: time.Second, OnTick: func(iv driver.Interval) { ticks = append(ticks, iv.Ops) }})
			for _, l := range c.lines {
				p.Line([]byte(l))
			}
			res, err := p.Result(c.runErr)
			if c.err == "" && err != nil {
				t.Fatalf("error: %v", err)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want one containing %q", err, c.err)
			}
			if errors.Is(err, driver.ErrHung) != c.hung {
				t.Errorf("hung: %v", err)
			}
			if res == nil {
				t.Fatal("no result")
			}
			if len(res.Intervals) != c.intervals || fmt.Sprint(ticks) != fmt.Sprint(c.ticks) {
				t.Errorf("intervals %d, ticks %v; want %d, %v", len(res.Intervals), ticks, c.intervals, c.ticks)
			}
			var total int64
			for _, o := range res.Measured.ByOp {
				if o.Ops != c.measured[o.Name] || o.Latency.TotalCount() != o.Ops {
					t.Errorf("op %s: %d ops, histogram %d; want %d", o.Name, o.Ops, o.Latency.TotalCount(), c.measured[o.Name])
				}
				total += o.Ops
			}
			if res.Measured.Ops != total || res.Measured.Errors != c.measuredErr || res.Measured.Length != c.length {
				t.Errorf("measured %+v", res.Measured)
			}
			if got := fmt.Sprint(res.FirstError); (c.firstErr == "" && res.FirstError != nil) || (c.firstErr != "" && got != c.firstErr) {
				t.Errorf("first error %q, want %q", got, c.firstErr)
			}
			if res.OpenLoop {
				t.Error("open loop")
			}
		})
	}
}

func TestIntervalFields(t *testing.T) {
	p := NewReader("the Ignite client", driver.Config{Ops: []string{opPut, opGet}})
	p.Line([]byte(`{"type":"interval","phase":"measured","index":4,"start_ns":1500,"length_ns":1000,"ops":{"get":7,"put":2},"errors":{"put":1,"get":2},"p50_ns":11,"p99_ns":22,"max_ns":33}`))
	if p.bad != nil {
		t.Fatal(p.bad)
	}
	iv := p.intervals[0]
	want := driver.Interval{Index: 4, Phase: driver.Measured, Start: 1500, Length: 1000, Ops: 9, Errors: 3, P50: 11, P99: 22, Max: 33, PerOpOK: []int64{2, 7}, PerOpErr: []int64{1, 2}}
	if fmt.Sprint(iv) != fmt.Sprint(want) {
		t.Errorf("interval %+v, want %+v", iv, want)
	}
}

func TestLoaded(t *testing.T) {
	for line, want := range map[string]int64{
		`{"type":"loaded","records":1000,"length_ns":5}`: 1000,
		`{"type":"ready"}`: -1,
		`loaded 1000`:      -1,
	} {
		n, ok := LoadedRecords([]byte(line))
		if (want < 0) == ok || (ok && n != want) {
			t.Errorf("%s: %d, %v", line, n, ok)
		}
	}
}
