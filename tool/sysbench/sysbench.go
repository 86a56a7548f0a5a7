// Package sysbench runs the real sysbench (1.0.20, the Debian package) as a
// run's driver: oltp_read_write or oltp_write_only on the sbtest tables
// tierbench's oltp workloads loaded, with the same options, against the
// run's PostgreSQL or MariaDB server. It reads sysbench's per-second
// reports as they come and its final report and latency histogram at the
// end, and returns them as a driver.Result, so its runs sit beside those of
// tierbench's own driver.
//
// Warmup: sysbench 1.0.20 has no --warmup-time (1.1 added it: it rejects it
// as "invalid option"), so the whole warmup + duration is one run with
// --report-checkpoints=<warmup>: at the end of the warmup sysbench prints a
// checkpoint report (the warmup's transactions and errors) and resets all
// its counters, timers and its latency histogram, so the final report and
// the histogram printed with it cover only the measured window (events in
// flight at the boundary count there). The load never pauses between the
// two, as it would with a separate warmup run.
//
// Latency: sysbench's histogram (--histogram=on) has 1024 buckets on a log
// scale from 1 µs to 100 s, each about 1.8% wider than the one before; it is
// converted to tierbench's HDR histogram by recording each bucket's count at
// the bucket's value (Histogram), so its percentiles are sysbench's buckets,
// good to about ±0.9%, and nothing finer. The warmup's histogram is not
// printed by sysbench and stays empty.
//
// Errors: sysbench counts a deadlock, lock wait timeout or serialization
// failure (MySQL 1213, 1205, 1020; PostgreSQL 40P01, 40001, and 23505, the
// duplicate key of two concurrent delete+inserts of one id) as an "ignored
// error" and restarts the transaction; those are the Errors here, and the
// transactions that finished are the Ops.
package sysbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload/oltp"
)

// Name is the tool's name in studies and results.
const Name = "sysbench"

// engines maps the engines sysbench can drive to its --db-driver. It is
// keyed by name, not derived from each engine's wire protocol (its
// Endpoint's scheme, known once its server runs): Check answers study
// validation, which names the engine only (tool.Tool.Check), before any
// server starts. An engine of another name that speaks the PostgreSQL or
// MySQL protocol is added here.
var engines = map[string]string{"postgres": "pgsql", "mariadb": "mysql"}

// Tool returns sysbench as a tool.Tool.
func Tool() tool.Tool {
	return tool.Tool{
		Name: Name,
		Doc: "sysbench 1.0.20 (oltp_read_write, oltp_write_only) on the sbtest tables the oltp workloads load, " +
			"PostgreSQL (pgsql) or MariaDB (mysql); warmup excluded with --report-checkpoints, latency from its histogram (~1.8% buckets)",
		Check: Check,
		New:   New,
	}
}

// Check says whether sysbench can drive engineName with workloadName.
func Check(engineName, workloadName string) error {
	_, engineOK := engines[engineName]
	_, workloadOK := oltp.Script(workloadName)
	return tool.Mismatch(fmt.Sprintf("sysbench drives engines postgres and mariadb with workloads %s and %s", oltp.ReadWrite, oltp.WriteOnly),
		engineOK, engineName, workloadOK, workloadName)
}

// New returns the sysbench driver of one run.
func New(req tool.Request) (driver.External, error) {
	if err := Check(req.Engine, req.WorkloadName); err != nil {
		return nil, err
	}
	if req.Workload == nil {
		return nil, errors.New("sysbench: the request has no workload")
	}
	ep, err := req.Endpoint()
	if err != nil {
		return nil, err
	}
	wargs, err := oltp.SysbenchArgs(req.WorkloadName, req.Params)
	if err != nil {
		return nil, fmt.Errorf("sysbench: %w", err)
	}
	bin, err := proc.Find("sysbench", "sysbench")
	if err != nil {
		return nil, fmt.Errorf("sysbench driver: install sysbench (apt-get install sysbench): %w", err)
	}
	script, _ := oltp.Script(req.WorkloadName)
	return &Driver{Bin: bin, Script: script, DBDriver: engines[req.Engine], Endpoint: ep, WorkloadArgs: wargs, Dir: req.Dir}, nil
}

// Driver runs sysbench for one run. Use New.
type Driver struct {
	Bin          string
	Script       string // oltp_read_write | oltp_write_only
	DBDriver     string // pgsql | mysql
	Endpoint     engine.Endpoint
	WorkloadArgs []string // the oltp options (oltp.SysbenchArgs)
	// Dir receives sysbench.log (its whole output) and, for the run's
	// length, the option file holding the password. Empty: a temporary
	// folder, removed after the run.
	Dir string

	watch driver.LoadWatch
}

// WatchLoad makes Drive report sysbench's process to w
// (driver.LoadReporter).
func (d *Driver) WatchLoad(w driver.LoadWatch) { d.watch = w }

var _ driver.External = (*Driver)(nil)

// tailMax is how many of sysbench's last output lines an error quotes.
const tailMax = 25

// wholeSeconds rounds d to whole seconds, sysbench's unit.
func wholeSeconds(d time.Duration) int64 { return int64(math.Round(d.Seconds())) }

// Args returns sysbench's command line for a run of warmup + duration
// (whole seconds) with clients threads, without the password, which
// sysbench reads from optionsFile (--config-file) when there is one.
func (d *Driver) Args(warmupS, durationS int64, clients int, optionsFile string) []string {
	ep, x := d.Endpoint, d.DBDriver
	args := []string{d.Script, "--db-driver=" + x}
	if optionsFile != "" {
		args = append(args, "--config-file="+optionsFile)
	}
	args = append(args,
		"--"+x+"-host="+ep.Host,
		"--"+x+"-port="+strconv.Itoa(ep.Port),
		"--"+x+"-user="+ep.User,
		"--"+x+"-db="+ep.Database)
	args = append(args, d.WorkloadArgs...)
	args = append(args,
		"--threads="+strconv.Itoa(clients),
		"--time="+strconv.FormatInt(warmupS+durationS, 10))
	if warmupS > 0 {
		args = append(args, "--report-checkpoints="+strconv.FormatInt(warmupS, 10))
	}
	return append(args, "--report-interval=1", "--histogram=on", "--percentile=99", "run")
}

// Drive runs sysbench with clients threads for cfg.Warmup + cfg.Duration,
// both rounded to whole seconds, calling cfg.OnTick for each per-second
// report as sysbench prints it. Closed loop only: sysbench's --rate does
// not measure from the intended start, so a TargetRate is refused. When ctx
// is cancelled, sysbench is killed and Drive returns what it printed so
// far, with ctx's error. sysbench that outlives its time by more than
// cfg.StopGrace (plus its 30 s thread start limit) is killed as hung.
func (d *Driver) Drive(ctx context.Context, cfg driver.Config, clients int) (*driver.Result, error) {
	if clients < 1 {
		return nil, errors.New("sysbench: need at least one client")
	}
	if cfg.TargetRate > 0 {
		return nil, errors.New("sysbench: drives closed loop only; a target_rate (open loop) is not supported with the sysbench driver")
	}
	warmupS, durationS := wholeSeconds(cfg.Warmup), max(wholeSeconds(cfg.Duration), 1)
	warmup := time.Duration(warmupS) * time.Second
	op := "transaction"
	if len(cfg.Ops) == 1 {
		op = cfg.Ops[0]
	}

	dir, done, err := tool.WorkDir(d.Dir, "sysbench")
	if err != nil {
		return nil, err
	}
	defer done()
	optionsFile := ""
	if d.Endpoint.Password != "" {
		// The password goes in a file only we can read, not on the
		// command line every local user can see.
		optionsFile = filepath.Join(dir, "sysbench-options")
		os.Remove(optionsFile) // an earlier Drive's, had it been killed
		line := d.DBDriver + "-password=" + d.Endpoint.Password + "\n"
		if err := secrets.WriteFile(optionsFile, []byte(line), ""); err != nil {
			return nil, fmt.Errorf("sysbench: options file: %w", err)
		}
		defer os.Remove(optionsFile)
	}
	logf, err := os.Create(filepath.Join(dir, "sysbench.log"))
	if err != nil {
		return nil, fmt.Errorf("sysbench: log: %w", err)
	}
	defer logf.Close()

	grace := cfg.StopGrace
	if grace <= 0 {
		grace = driver.DefaultStopGrace
	}
	limit := time.Duration(warmupS+durationS)*time.Second + grace + 30*time.Second
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	args := d.Args(warmupS, durationS, clients, optionsFile)
	cmd := exec.CommandContext(runCtx, d.Bin, args...)
	cmd.Dir = dir
	proc.OwnGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	tail := &tailLines{max: tailMax}
	cmd.Stderr = io.MultiWriter(logf, tail)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("sysbench: %w", err)
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("sysbench driver: %s: install sysbench (apt-get install sysbench): %w", d.Bin, err)
		}
		return nil, fmt.Errorf("sysbench: start: %w", err)
	}
	waited := driver.WatchCmd(d.watch, Name, cmd)

	var p parser
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		s := sc.Text()
		fmt.Fprintln(logf, s)
		tail.add(s)
		if l, ok := p.feed(s); ok && cfg.OnTick != nil {
			cfg.OnTick(interval(l, len(p.rep.Lines)-1, warmup))
		}
	}
	waitErr := cmd.Wait()
	waited()
	cmdline := Name + " " + strings.Join(args, " ")

	res, resErr := result(p.rep, warmup, op)
	switch {
	case ctx.Err() != nil:
		return partial(p.rep, res, warmup, op), ctx.Err()
	case runCtx.Err() != nil:
		return partial(p.rep, res, warmup, op), fmt.Errorf("%w: sysbench was still running %v after its %d s (killed); last lines of its output:\n%s",
			driver.ErrHung, grace, warmupS+durationS, tail.String())
	case waitErr != nil:
		return partial(p.rep, res, warmup, op), fmt.Errorf("sysbench failed (%v): %s\nlast lines of its output:\n%s", waitErr, cmdline, tail.String())
	case resErr != nil:
		return nil, fmt.Errorf("sysbench: %w: %s\nlast lines of its output:\n%s", resErr, cmdline, tail.String())
	}
	return res, nil
}

// partial is what an interrupted run measured: the full result if sysbench
// got to its final report, else the intervals it printed.
func partial(rep Report, res *driver.Result, warmup time.Duration, op string) *driver.Result {
	if res != nil {
		return res
	}
	res = &driver.Result{
		Warmup:   driver.PhaseResult{ByOp: []driver.OpResult{{Name: op, Latency: Histogram(nil)}}},
		Measured: driver.PhaseResult{ByOp: []driver.OpResult{{Name: op, Latency: Histogram(nil)}}},
	}
	for i, l := range rep.Lines {
		res.Intervals = append(res.Intervals, interval(l, i, warmup))
	}
	return res
}

// tailLines keeps the last max lines written to it or added, for errors.
type tailLines struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  []byte // an unfinished line written
}

func (t *tailLines) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(s)
}

func (t *tailLines) addLocked(s string) {
	t.lines = append(t.lines, s)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

// Write takes stderr's bytes.
func (t *tailLines) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, b...)
	for {
		i := strings.IndexByte(string(t.part), '\n')
		if i < 0 {
			break
		}
		t.addLocked(string(t.part[:i]))
		t.part = t.part[i+1:]
	}
	return len(b), nil
}

func (t *tailLines) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.part) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(t.part))
	}
	return "  " + strings.Join(lines, "\n  ")
}
