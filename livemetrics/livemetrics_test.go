package livemetrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
)

func TestCheckAddress(t *testing.T) {
	for _, c := range []struct {
		addr   string
		public bool
		want   string // in the refusal; "" accepts
	}{
		{"127.0.0.1:9464", false, ""},
		{"127.3.2.1:0", false, ""},
		{"[::1]:9464", false, ""},
		{"localhost:9464", false, ""},
		{"0.0.0.0:9464", false, `--metrics "0.0.0.0:9464" is not a loopback address: it would serve the study's figures to the network; use 127.0.0.1:9464, or add --metrics-public to mean it`},
		{":9464", false, `--metrics ":9464" listens on every address`},
		{"10.1.2.3:9464", false, "is not a loopback address"},
		{"metrics.example:9464", false, "is not a loopback address"},
		{"0.0.0.0:9464", true, ""},
		{"127.0.0.1", false, "want HOST:PORT"},
		{"127.0.0.1:http", false, "the port must be a number from 0 to 65535"},
		{"127.0.0.1:70000", false, "the port must be a number"},
		{"127.0.0.1:+80", false, "the port must be a number"},
		{"127.0.0.1:-1", false, "the port must be a number"},
	} {
		err := CheckAddress(c.addr, c.public)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (public %v): refused: %v", c.addr, c.public, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s (public %v): %v, want a refusal with %q", c.addr, c.public, err, c.want)
		}
	}
}

// TestServeWhatTheDriverMeasured drives two ops with the real driver,
// hands its ticks and a telemetry reading to Metrics served on a loopback
// port, scrapes it over HTTP and parses the text with Prometheus's parser:
// the counters and histograms add up to what the driver measured, every
// series carries the run's cell, the state is the run's; once closed, the
// port refuses connections.
func TestServeWhatTheDriverMeasured(t *testing.T) {
	m := New()
	srv, err := Serve("127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st := &results.Study{ID: "20261128-140000-abcdef", Name: "live", Engine: "pebble", Workload: "ycsb-a"}
	m.RunStarted(st, &results.Run{Durability: "sync", Clients: 2, Repeat: 3}, "wal-ram")
	m.Runs(4, 10)
	if info := scrape(t, srv.Addr())["tierbench_run_info"]; info == nil || label(info.Metric[0], "phase") != PhasePreparing {
		t.Errorf("before the first tick: %v, want phase %s", info, PhasePreparing)
	}

	ops := []string{"read", "update"}
	clients := make([]driver.Client, 2)
	for i := range clients {
		n := 0
		clients[i] = driver.ClientFunc(func(context.Context) (int, error) {
			n++
			time.Sleep(50 * time.Microsecond)
			if n%50 == 0 {
				return 1, errors.New("refused")
			}
			return n % 2, nil
		})
	}
	res, err := driver.Run(context.Background(), driver.Config{Ops: ops, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
		Tick: 50 * time.Millisecond, OnTick: func(iv driver.Interval) { m.Tick(ops, iv) }}, clients)
	if err != nil {
		t.Fatal(err)
	}
	m.Sampled(telemetry.Reading{
		Tiers: map[string]telemetry.TierSample{"disk": {Device: "vda", DiskSample: telemetry.DiskSample{T: 1, DiskRates: telemetry.DiskRates{
			WriteIOPS: 250, WriteMBps: 2, WriteAwaitMs: 0.5, FlushesPerS: 100, FlushAwaitMs: 0.25, UtilPct: 40}}}},
		Host:   &telemetry.HostSample{T: 1, CPUUserPct: 30, CPUSysPct: 10},
		Engine: &telemetry.EngineSample{T: 1, RSSBytes: 1 << 20, CPUPct: 80},
	})

	fams := scrape(t, srv.Addr())
	cell := map[string]string{"study": "live", "placement": "wal-ram", "durability": "sync", "clients": "2", "round": "3"}
	for name, f := range fams {
		for _, mt := range f.Metric {
			for k, v := range cell {
				if name != "tierbench_study_runs_done" && name != "tierbench_study_runs_planned" && label(mt, k) != v {
					t.Errorf("%s %v: label %s is %q, want %q", name, mt.Label, k, label(mt, k), v)
				}
			}
		}
	}
	if info := fams["tierbench_run_info"]; info == nil || label(info.Metric[0], "phase") != "measured" || label(info.Metric[0], "study_id") != st.ID {
		t.Errorf("run info %v, want phase measured and the study's id", info)
	}
	if v := gauge(fams, "tierbench_study_runs_done", nil); v != 4 {
		t.Errorf("runs done %v, want 4", v)
	}
	if v := gauge(fams, "tierbench_study_runs_planned", nil); v != 10 {
		t.Errorf("runs planned %v, want 10", v)
	}
	for _, ph := range []struct {
		phase string
		res   driver.PhaseResult
	}{{"warmup", res.Warmup}, {"measured", res.Measured}} {
		for i, op := range ops {
			want := ph.res.ByOp[i]
			sel := map[string]string{"phase": ph.phase, "op": op}
			if got := counter(fams, "tierbench_ops_total", sel); got != float64(want.Ops) || got == 0 {
				t.Errorf("%s %s: ops_total %v, the driver measured %d", ph.phase, op, got, want.Ops)
			}
			if got := counter(fams, "tierbench_errors_total", sel); got != float64(want.Errors) {
				t.Errorf("%s %s: errors_total %v, the driver counted %d", ph.phase, op, got, want.Errors)
			}
			h := find(fams, "tierbench_latency_seconds", sel).GetHistogram()
			if h.GetSampleCount() != uint64(want.Latency.TotalCount()) || len(h.Bucket) != len(Buckets)+1 {
				t.Errorf("%s %s: latency histogram of %d in %d buckets (+Inf too), the driver's holds %d", ph.phase, op, h.GetSampleCount(), len(h.Bucket), want.Latency.TotalCount())
			}
			// 50 µs of sleep: nothing at or below 25 µs, the median
			// below the driver's p99 bucket.
			var last uint64
			for _, b := range h.Bucket {
				if b.GetCumulativeCount() < last {
					t.Errorf("%s %s: buckets not cumulative: %v", ph.phase, op, h.Bucket)
				}
				last = b.GetCumulativeCount()
				if b.GetUpperBound() <= 25e-6 && b.GetCumulativeCount() > 0 {
					t.Errorf("%s %s: %d operations of 50 µs of sleep at or below %v s", ph.phase, op, b.GetCumulativeCount(), b.GetUpperBound())
				}
			}
			if mean := h.GetSampleSum() / float64(h.GetSampleCount()); mean < 50e-6 || mean > 1 {
				t.Errorf("%s %s: mean latency %v s from sum %v", ph.phase, op, mean, h.GetSampleSum())
			}
		}
	}
	for _, c := range []struct {
		name string
		sel  map[string]string
		want float64
	}{
		{"tierbench_host_cpu_percent", map[string]string{"mode": "user"}, 30},
		{"tierbench_host_cpu_percent", map[string]string{"mode": "system"}, 10},
		{"tierbench_engine_cpu_percent", nil, 80},
		{"tierbench_engine_resident_bytes", nil, 1 << 20},
		{"tierbench_tier_iops", map[string]string{"tier": "disk", "device": "vda", "direction": "write"}, 250},
		{"tierbench_tier_bytes_per_second", map[string]string{"tier": "disk", "direction": "write"}, 2 << 20},
		{"tierbench_tier_await_seconds", map[string]string{"tier": "disk", "direction": "flush"}, 0.25e-3},
		{"tierbench_tier_flushes_per_second", map[string]string{"tier": "disk"}, 100},
		{"tierbench_tier_utilization_ratio", map[string]string{"tier": "disk"}, 0.4},
	} {
		if got := gauge(fams, c.name, c.sel); got != c.want {
			t.Errorf("%s %v = %v, want %v", c.name, c.sel, got, c.want)
		}
	}

	// OpenMetrics, when the scraper asks for it as Prometheus does.
	req, _ := http.NewRequest("GET", "http://"+srv.Addr()+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(string(body), "# EOF\n") ||
		!strings.Contains(string(body), "# TYPE tierbench_ops counter\n") {
		t.Errorf("OpenMetrics asked, %s served:\n%.400s", ct, body)
	}

	// The next run drops this run's series.
	m.RunStarted(st, &results.Run{Durability: "sync", Clients: 4, Repeat: 3}, "all-disk")
	if f := scrape(t, srv.Addr())["tierbench_ops_total"]; f != nil {
		t.Errorf("the previous run's counters are still served: %v", f)
	}

	addr := srv.Addr()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", addr); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Errorf("after Close, dialling %s: %v; want connection refused", addr, err)
	}
}

// scrape gets addr's /metrics in the text format and parses it.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// find is the one series of family name whose labels include sel.
func find(fams map[string]*dto.MetricFamily, name string, sel map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		for k, v := range sel {
			if label(m, k) != v {
				continue next
			}
		}
		return m
	}
	return nil
}

func counter(fams map[string]*dto.MetricFamily, name string, sel map[string]string) float64 {
	return find(fams, name, sel).GetCounter().GetValue()
}

func gauge(fams map[string]*dto.MetricFamily, name string, sel map[string]string) float64 {
	return find(fams, name, sel).GetGauge().GetValue()
}
