package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/tierbench/tierbench/tier"
)

// metricsStudy runs one placement in 2 rounds, long enough to be scraped
// several times in each run's measured window.
const metricsStudy = `name: live-metrics
engine: pebble
tiers:
  ram:  {path: %q}
  disk: {path: %q}
placements:
  wal-ram: {data: disk, wal: ram}
durability: [sync]
workload: {name: ycsb-a, records: 2000}
clients: [2]
warmup: 1s
duration: 3s
repeat: 2
options: {cache: 8MiB}
`

// scrapeSeen is what the scrapes of one tierbench run saw.
type scrapeSeen struct {
	scrapes int
	// phases and rounds seen in tierbench_run_info.
	phases, rounds map[string]bool
	// cells are each scrape's run_info labels other than phase.
	cells map[string]bool
	// grew counts scrapes whose measured operations of the same run rose
	// since the scrape before; fell, those where they fell.
	grew, fell int
	// latencyMatches counts series whose histogram holds as many
	// operations as their counter; latencyOff, those that do not.
	latencyMatches, latencyOff int
	planned, doneMax           float64
	tierIOPS, hostCPU          bool
	sample                     string // a few lines of a scrape mid-run, for the log
}

// TestMetricsServedWhileTheStudyRuns runs a pebble study with --metrics on
// a loopback port picked by the kernel and scrapes it over HTTP as it
// runs, parsing each scrape with Prometheus's text parser: the counters
// are there and grow, every series carries the study's cell, the state
// shows the run and its phase, the telemetry is there; when the study
// ends, and when Ctrl-C stops another, the port is closed.
func TestMetricsServedWhileTheStudyRuns(t *testing.T) {
	work := t.TempDir()
	ram, disk := ramDir(t), filepath.Join(work, "disk")
	st := writeStudy(t, work, fmt.Sprintf(metricsStudy, ram, disk))
	env := []string{"TIERBENCH_STATE_DIR=" + filepath.Join(work, "state")}

	code, addr, seen, stderr := runScraped(t, work, env, nil, "run", st, "--results", filepath.Join(work, "results"), "--metrics", "127.0.0.1:0")
	t.Logf("%d scrapes; mid-run:\n%s", seen.scrapes, seen.sample)
	if code != 0 {
		t.Fatalf("run exit %d:\n%s", code, stderr)
	}
	for _, p := range []string{"warmup", "measured"} {
		if !seen.phases[p] {
			t.Errorf("no scrape saw phase %s (saw %v)", p, seen.phases)
		}
	}
	if !seen.rounds["1"] || !seen.rounds["2"] {
		t.Errorf("rounds seen %v, want 1 and 2", seen.rounds)
	}
	for cell := range seen.cells {
		if cell != "study=live-metrics placement=wal-ram durability=sync clients=2 engine=pebble workload=ycsb-a" {
			t.Errorf("run_info cell %q", cell)
		}
	}
	if seen.grew == 0 || seen.fell > 0 {
		t.Errorf("the measured ops counter grew between %d scrapes of a run and fell between %d; want growth and no fall", seen.grew, seen.fell)
	}
	if seen.latencyMatches == 0 || seen.latencyOff > 0 {
		t.Errorf("latency histograms: %d agree with their ops counter, %d do not", seen.latencyMatches, seen.latencyOff)
	}
	if seen.planned != 2 || seen.doneMax < 1 {
		t.Errorf("runs planned %v, done up to %v; want 2 planned and a run done", seen.planned, seen.doneMax)
	}
	if !seen.hostCPU {
		t.Error("no scrape had the host's CPU")
	}
	if dev := deviceOf(t, disk); dev && !seen.tierIOPS {
		t.Error("no scrape had the disk tier's I/O, though it has a device")
	}
	assertClosed(t, addr, "after the study ended")

	// Ctrl-C in a run's measured window: exit 130, the port closed.
	code, addr, _, stderr = runScraped(t, work, env, syscall.SIGINT, "run", st, "--results", filepath.Join(work, "results"), "--metrics", "127.0.0.1:0")
	if code != exitInterrupt {
		t.Errorf("after SIGINT: exit %d, want %d:\n%s", code, exitInterrupt, stderr)
	}
	assertClosed(t, addr, "after Ctrl-C")
	for _, d := range []string{ram, disk} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("run folders left in %s", d)
		}
	}
}

// deviceOf reports whether dir's filesystem has a block device, which
// the tier's I/O is read from.
func deviceOf(t *testing.T, dir string) bool {
	t.Helper()
	info, err := tier.Inspect("disk", filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	return strings.HasPrefix(info.Device, "/dev/")
}

// runScraped runs tierbench with args, reads the live metrics address it
// prints, and scrapes it until tierbench exits; with stop, it sends stop
// once a scrape sees the measured window. It returns the exit code, the
// address, what the scrapes saw and tierbench's stderr.
func runScraped(t *testing.T, dir string, env []string, stop os.Signal, args ...string) (int, string, scrapeSeen, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var errb syncBuffer
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(&errb, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`^live metrics: http://(\S+)/metrics`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
			}
		}
		io.Copy(io.Discard, pr)
		close(addrs)
	}()
	addr, ok := <-addrs
	if !ok {
		<-exited
		t.Fatalf("tierbench printed no live metrics address:\n%s", errb.String())
	}
	seen := scrapeSeen{phases: map[string]bool{}, rounds: map[string]bool{}, cells: map[string]bool{}}
	last := map[string]float64{} // measured ops by round
	signalled := false
	var err error
	for done := false; !done; {
		select {
		case err = <-exited:
			done = true
			continue
		case <-time.After(250 * time.Millisecond):
		}
		fams, ok := scrapeOnce(addr)
		if !ok {
			continue // the study just ended, or is ending
		}
		seen.scrapes++
		seen.observe(fams, last)
		if stop != nil && !signalled && seen.phases["measured"] {
			cmd.Process.Signal(stop)
			signalled = true
		}
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, addr, seen, errb.String()
}

// observe adds one scrape to what was seen; last holds each round's
// measured operations at the scrape before.
func (s *scrapeSeen) observe(fams map[string]*dto.MetricFamily, last map[string]float64) {
	info := fams["tierbench_run_info"]
	if info == nil || len(info.Metric) != 1 {
		return
	}
	l := labelMap(info.Metric[0])
	s.phases[l["phase"]] = true
	s.rounds[l["round"]] = true
	s.cells[fmt.Sprintf("study=%s placement=%s durability=%s clients=%s engine=%s workload=%s",
		l["study"], l["placement"], l["durability"], l["clients"], l["engine"], l["workload"])] = true
	if f := fams["tierbench_study_runs_planned"]; f != nil {
		s.planned = f.Metric[0].GetGauge().GetValue()
	}
	if f := fams["tierbench_study_runs_done"]; f != nil {
		s.doneMax = max(s.doneMax, f.Metric[0].GetGauge().GetValue())
	}
	counts := map[string]float64{}
	if f := fams["tierbench_ops_total"]; f != nil {
		for _, m := range f.Metric {
			ml := labelMap(m)
			if ml["round"] != l["round"] || ml["placement"] != l["placement"] {
				s.fell++ // another run's series: they must be gone
			}
			if ml["phase"] == "measured" {
				counts[ml["op"]] = m.GetCounter().GetValue()
			}
		}
	}
	if f := fams["tierbench_latency_seconds"]; f != nil {
		for _, m := range f.Metric {
			ml := labelMap(m)
			ops := find(fams["tierbench_ops_total"], ml)
			if ops != nil && uint64(ops.GetCounter().GetValue()) == m.GetHistogram().GetSampleCount() {
				s.latencyMatches++
			} else {
				s.latencyOff++
			}
		}
	}
	var measured float64
	for _, v := range counts {
		measured += v
	}
	if prev, ok := last[l["round"]]; ok {
		switch {
		case measured > prev:
			s.grew++
		case measured < prev:
			s.fell++
		}
	}
	last[l["round"]] = measured
	s.tierIOPS = s.tierIOPS || fams["tierbench_tier_iops"] != nil
	s.hostCPU = s.hostCPU || fams["tierbench_host_cpu_percent"] != nil
	if s.sample == "" && measured > 0 && fams["tierbench_host_cpu_percent"] != nil {
		var b bytes.Buffer
		for _, name := range []string{"tierbench_run_info", "tierbench_study_runs_done", "tierbench_ops_total", "tierbench_errors_total",
			"tierbench_latency_seconds", "tierbench_host_cpu_percent", "tierbench_tier_iops"} {
			if f := fams[name]; f != nil {
				expfmt.MetricFamilyToText(&b, f)
			}
		}
		s.sample = b.String()
	}
}

// find is the series of f whose labels are those of l.
func find(f *dto.MetricFamily, l map[string]string) *dto.Metric {
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		ml := labelMap(m)
		same := len(ml) == len(l)
		for k, v := range l {
			if k != "le" && ml[k] != v {
				same = false
			}
		}
		if same {
			return m
		}
	}
	return nil
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// scrapeOnce gets addr's /metrics and parses it; false when it cannot.
func scrapeOnce(addr string) (map[string]*dto.MetricFamily, bool) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	return fams, err == nil
}

// assertClosed checks nothing listens at addr any more.
func assertClosed(t *testing.T, addr, when string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		c.Close()
		t.Errorf("%s, %s still accepts connections", when, addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("%s, dialling %s: %v; want connection refused", when, addr, err)
	}
}

// TestMetricsRefusesBadAddresses: a --metrics address that is not
// loopback (without --metrics-public), not HOST:PORT, empty or busy is
// refused with exit 2 and one line naming the fix, before anything is
// made: no results folder, no state, no tier folder.
func TestMetricsRefusesBadAddresses(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"every address", []string{"--metrics", "0.0.0.0:9464"}, `--metrics "0.0.0.0:9464" is not a loopback address: it would serve the study's figures to the network; use 127.0.0.1:9464, or add --metrics-public to mean it`},
		{"no host", []string{"--metrics", ":9464"}, "listens on every address"},
		{"a name", []string{"--metrics", "metrics.example:9464"}, "add --metrics-public"},
		{"no port", []string{"--metrics", "127.0.0.1"}, "want HOST:PORT, such as 127.0.0.1:9464"},
		{"a port past 65535", []string{"--metrics", "127.0.0.1:99999"}, "the port must be a number from 0 to 65535"},
		{"empty", []string{"--metrics="}, "--metrics needs an address"},
		{"public alone", []string{"--metrics-public"}, "--metrics-public needs --metrics ADDR"},
		{"a busy port", []string{"--metrics", busy.Addr().String()}, "address already in use; give a free port, or 0 to have one picked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			disk := filepath.Join(dir, "disk")
			st := writeStudy(t, dir, fmt.Sprintf(metricsStudy, filepath.Join(dir, "ram"), disk))
			r := tierbenchEnv(t, dir, []string{"TIERBENCH_STATE_DIR=" + filepath.Join(dir, "state")},
				append([]string{"run", st, "--results", filepath.Join(dir, "results")}, c.flags...)...)
			if r.code != exitBadInput || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("exit %d, want %d and one line with %q:\n%s", r.code, exitBadInput, c.want, r.stderr)
			}
			for _, p := range []string{"results", "state", "disk", "ram", "tierbench-results"} {
				if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
					t.Errorf("a refused --metrics made %s", p)
				}
			}
		})
	}
}
