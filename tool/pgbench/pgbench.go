// Package pgbench runs PostgreSQL's pgbench as a tierbench driver, so a
// study can put tierbench's tpcb figures beside those of the tool everyone
// trusts, on the same server and the same data.
//
// pgbench runs its built-in tpcb-like script with prepared statements
// (-M prepared, as tierbench's driver uses) on the pgbench_* tables that
// tierbench's tpcb workload loaded (-n: no vacuum, no truncation). It has no
// warmup of its own, so it runs for warmup + duration with its
// per-transaction log (-l), and the log is split at the warmup boundary by
// each transaction's completion time, as tierbench's driver does. The
// latency histograms are built from that log (microsecond resolution, the
// log's); the per-second timeline too, each second with its own latency
// histogram (the run's HdrHistogram interval log, tierbench export --hdr),
// a second in which nothing completed at 0 ops/s. The log is read whole
// once pgbench ends, 24 bytes a transaction in memory; the histograms are
// bounded whatever the rate. pgbench's -P 1 progress lines only feed the
// live display.
package pgbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload/tpcb"
)

// Name is the driver's name in study files.
const Name = "pgbench"

// Tool describes pgbench as a driver.
func Tool() tool.Tool {
	return tool.Tool{
		Name:  Name,
		Doc:   "PostgreSQL's pgbench: built-in tpcb-like script, -M prepared, -c clients, -j min(clients, CPUs), per-transaction log turned into HDR histograms",
		Check: check,
		New:   newRun,
	}
}

func check(engineName, workloadName string) error {
	if engineName != "postgres" {
		return fmt.Errorf("driver pgbench drives engine postgres only (this study's engine is %s)", engineName)
	}
	if workloadName != "tpcb" {
		return fmt.Errorf("driver pgbench runs workload tpcb only (this study's workload is %s)", workloadName)
	}
	return nil
}

type run struct {
	req   tool.Request
	watch driver.LoadWatch
}

// WatchLoad makes Drive report pgbench's process to w (driver.LoadReporter).
func (r *run) WatchLoad(w driver.LoadWatch) { r.watch = w }

func newRun(req tool.Request) (driver.External, error) {
	if err := check(req.Engine, req.WorkloadName); err != nil {
		return nil, err
	}
	return &run{req: req}, nil
}

// Drive runs pgbench for cfg.Warmup + cfg.Duration and reads its log.
func (r *run) Drive(ctx context.Context, cfg driver.Config, clients int) (*driver.Result, error) {
	if cfg.TargetRate > 0 {
		return nil, errors.New("pgbench: open loop (target_rate) is not supported with driver pgbench; use the builtin driver")
	}
	bin, err := proc.Find("postgresql-client", pgbenchCandidates...)
	if err != nil {
		return nil, err
	}
	ep, err := r.req.Endpoint()
	if err != nil {
		return nil, err
	}
	seconds := int(math.Ceil((cfg.Warmup + cfg.Duration).Seconds()))
	dir, done, err := tool.WorkDir(r.req.Dir, "pgbench")
	if err != nil {
		return nil, err
	}
	defer done()
	prefix := filepath.Join(dir, "pgbench_log")
	args := []string{"-h", ep.Host, "-p", strconv.Itoa(ep.Port), "-U", ep.User,
		"-n", "-b", "tpcb-like", "-M", "prepared",
		"-c", strconv.Itoa(clients), "-j", strconv.Itoa(Jobs(clients)),
		"-T", strconv.Itoa(seconds), "-P", "1", "-l", "--log-prefix", prefix, ep.Database}
	passFile, err := writePassFile(dir, ep)
	if err != nil {
		return nil, err
	}
	defer os.Remove(passFile)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(withoutEnv(os.Environ(), "PGPASSWORD", "PGPASSFILE"),
		"PGPASSFILE="+passFile, "PGCONNECT_TIMEOUT=10", "PGAPPNAME=tierbench-pgbench")
	proc.OwnGroup(cmd)
	out := logtail.Writer{Max: tailBytes}
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pgbench: %w", err)
	}
	waited := driver.WatchCmd(r.watch, "pgbench", cmd)
	errTail := logtail.Writer{Max: tailBytes}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		if iv, ok := ParseProgress(line, cfg.Warmup); ok {
			if cfg.OnTick != nil {
				cfg.OnTick(iv)
			}
			continue
		}
		errTail.Write([]byte(line + "\n"))
	}
	werr := cmd.Wait()
	waited()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	entries, lerr := ReadLogs(prefix)
	if lerr != nil {
		return nil, fmt.Errorf("pgbench: %w; its output:\n%s%s", lerr, out.String(), errTail.String())
	}
	res := Summarize(entries, cfg.Warmup, cfg.Duration)
	if werr != nil {
		// pgbench exits non-zero when a client aborted; its transactions
		// up to then are in the log, and the abort is the run's error.
		return res, fmt.Errorf("pgbench: %w; its output:\n%s%s", werr, out.String(), errTail.String())
	}
	return res, nil
}

// passFileName is the password file pgbench reads (PGPASSFILE) in the
// run's tool folder, for the run's length.
const passFileName = "pgpass"

// writePassFile writes the server's password for libpq to read
// (PGPASSFILE, 0600 as libpq demands): not on pgbench's command line,
// which every local user can see, nor in PGPASSWORD, which everything
// pgbench starts would inherit. The file serves this one run's server, so
// its line matches any host, port, database and user. The caller removes
// it; with no password (a target server that needs none) it holds none.
func writePassFile(dir string, ep engine.Endpoint) (string, error) {
	path := filepath.Join(dir, passFileName)
	os.Remove(path) // an earlier Drive's, had it been killed
	line := ""
	if ep.Password != "" {
		line = "*:*:*:*:" + strings.NewReplacer(`\`, `\\`, ":", `\:`).Replace(ep.Password) + "\n"
	}
	if err := secrets.WriteFile(path, []byte(line), ""); err != nil {
		return "", fmt.Errorf("pgbench: password file: %w", err)
	}
	return path, nil
}

// withoutEnv drops the variables names from env: a PGPASSWORD tierbench
// was started with would win over the run's password file.
func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

// Jobs is pgbench's -j: one thread per CPU at most, never more than clients.
func Jobs(clients int) int {
	return max(1, min(clients, runtime.NumCPU()))
}

// Entry is one line of pgbench's per-transaction log.
type Entry struct {
	// End is the completion time in µs since the epoch.
	End int64
	// Latency is the transaction's time in µs (0 when it failed).
	Latency int64
	Failed  bool
}

// ParseLogLine reads "client_id transaction_no time script_no time_epoch
// time_us [schedule_lag] [retries]"; time is "failed" (or a failure type)
// for a transaction that did not commit.
func ParseLogLine(line string) (Entry, error) {
	f := strings.Fields(line)
	if len(f) < 6 {
		return Entry{}, fmt.Errorf("pgbench log line %q: want at least 6 fields", line)
	}
	sec, err1 := strconv.ParseInt(f[4], 10, 64)
	us, err2 := strconv.ParseInt(f[5], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Entry{}, fmt.Errorf("pgbench log line %q: %w", line, err)
	}
	e := Entry{End: sec*1_000_000 + us}
	lat, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		e.Failed = true // "failed", "serialization", "deadlock"
		return e, nil
	}
	e.Latency = lat
	return e, nil
}

// ReadLogs reads every log file pgbench wrote with the prefix (one per
// thread: PREFIX.PID and PREFIX.PID.N).
func ReadLogs(prefix string) ([]Entry, error) {
	files, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("pgbench wrote no transaction log (%s.*)", prefix)
	}
	var out []Entry
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("read pgbench log: %w", err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			e, err := ParseLogLine(sc.Text())
			if err != nil {
				f.Close()
				return nil, err
			}
			out = append(out, e)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read pgbench log %s: %w", name, err)
		}
	}
	return out, nil
}

// Summarize turns a run's log into tierbench's figures. Time starts at the
// earliest transaction start; a transaction belongs to the phase and the
// second in which it completed; transactions completing after warmup +
// duration are left out, so the measured window is exactly as configured.
func Summarize(entries []Entry, warmup, duration time.Duration) *driver.Result {
	res := &driver.Result{}
	if len(entries) == 0 {
		return res
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].End < entries[j].End })
	t0 := entries[0].End - entries[0].Latency
	for _, e := range entries {
		t0 = min(t0, e.End-e.Latency)
	}
	res.Began = time.UnixMicro(t0)
	warmUs, endUs := warmup.Microseconds(), (warmup + duration).Microseconds()
	phases := [2]*phaseAcc{newPhaseAcc(), newPhaseAcc()}
	var iv *intervalAcc
	flush := func() {
		if iv != nil {
			res.Intervals = append(res.Intervals, iv.interval(warmup))
		}
	}
	last := int64(0)
	for _, e := range entries {
		t := e.End - t0
		if t > endUs {
			break
		}
		last = t
		p := phases[1]
		if t <= warmUs {
			p = phases[0]
		}
		sec := int(t / 1_000_000)
		if iv == nil || sec != iv.index {
			flush()
			// A second in which nothing completed (a stall) is a second
			// of the timeline too, at 0 ops/s.
			for gap := nextIndex(iv); gap < sec; gap++ {
				res.Intervals = append(res.Intervals, (&intervalAcc{index: gap, h: hist.New()}).interval(warmup))
			}
			iv = &intervalAcc{index: sec, h: hist.New()}
		}
		if e.Failed {
			p.errors++
			iv.errors++
			continue
		}
		d := time.Duration(e.Latency) * time.Microsecond
		hist.Record(p.h, d)
		p.ops++
		hist.Record(iv.h, d)
		iv.ops++
	}
	flush()
	res.Warmup = phases[0].result(min(warmup, time.Duration(last)*time.Microsecond))
	measured := time.Duration(max(0, min(endUs, last)-warmUs)) * time.Microsecond
	res.Measured = phases[1].result(measured)
	return res
}

type phaseAcc struct {
	h           *hdr.Histogram
	ops, errors int64
}

func newPhaseAcc() *phaseAcc { return &phaseAcc{h: hist.New()} }

func (p *phaseAcc) result(length time.Duration) driver.PhaseResult {
	return driver.PhaseResult{Length: length, Ops: p.ops, Errors: p.errors,
		ByOp: []driver.OpResult{{Name: tpcb.OpTPCB, Ops: p.ops, Errors: p.errors, Latency: p.h}}}
}

type intervalAcc struct {
	index       int
	h           *hdr.Histogram
	ops, errors int64
}

// interval is the second's figures and its latency histogram, encoded
// as the builtin driver keeps it, for the run's interval log (export
// --hdr) and the report's timeline.
func (a *intervalAcc) interval(warmup time.Duration) driver.Interval {
	start := time.Duration(a.index) * time.Second
	phase := driver.Measured
	if start < warmup {
		phase = driver.Warmup
	}
	enc, _ := hist.Encode(a.h) // a histogram of hist.New's bounds always encodes
	return driver.Interval{Index: a.index, Phase: phase, Start: start, Length: time.Second, Ops: a.ops, Errors: a.errors,
		P50: time.Duration(a.h.ValueAtQuantile(50)), P99: time.Duration(a.h.ValueAtQuantile(99)),
		Max: time.Duration(a.h.Max()), PerOpOK: []int64{a.ops}, Latency: enc}
}

// nextIndex is the second after iv's, 0 before the first.
func nextIndex(iv *intervalAcc) int {
	if iv == nil {
		return 0
	}
	return iv.index + 1
}

// ParseProgress reads a -P line, "progress: 5.0 s, 1234.5 tps, lat 3.236 ms
// stddev 1.064, 0 failed", for the live display. Only throughput and mean
// latency are known; the stored timeline comes from the log.
func ParseProgress(line string, warmup time.Duration) (driver.Interval, bool) {
	rest, ok := strings.CutPrefix(line, "progress: ")
	if !ok {
		return driver.Interval{}, false
	}
	f := strings.Fields(strings.NewReplacer(",", " ").Replace(rest))
	if len(f) < 5 || f[1] != "s" || f[3] != "tps" {
		return driver.Interval{}, false
	}
	t, err1 := strconv.ParseFloat(f[0], 64)
	tps, err2 := strconv.ParseFloat(f[2], 64)
	if err1 != nil || err2 != nil {
		return driver.Interval{}, false
	}
	iv := driver.Interval{Index: int(t) - 1, Start: time.Duration((t - 1) * float64(time.Second)), Length: time.Second,
		Ops: int64(math.Round(tps)), Phase: driver.Measured}
	if iv.Start < warmup {
		iv.Phase = driver.Warmup
	}
	if len(f) >= 7 && f[4] == "lat" && f[6] == "ms" {
		if ms, err := strconv.ParseFloat(f[5], 64); err == nil {
			iv.P50 = time.Duration(ms * float64(time.Millisecond)) // the mean: pgbench prints no percentile
		}
	}
	return iv, true
}

// tailBytes is how much of pgbench's output an error quotes.
const tailBytes = 4096
