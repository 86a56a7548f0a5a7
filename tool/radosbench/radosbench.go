// Package radosbench runs Ceph's `rados bench` (the rados CLI of
// ceph-common 16.2) as the driver rados-bench: the `rados` workload
// (workload/radosload) on the run's Ceph cluster, whose pool, client
// config and keyring the engine hands out (engine.Objects.Rados). It is
// the only driver of that workload: RADOS is reached through librados, a C
// library, and tierbench is built without cgo.
//
// Each bench is one `rados -c CONF --id ID --keyring K -p POOL bench
// SECONDS write|seq|rand -t CLIENTS -b SIZE --no-cleanup --run-name RUN`:
// CLIENTS is the number of ops in flight, from one process and one
// connection to the cluster (rados bench has no separate clients). In mode
// seq and rand a write pass of the workload's `objects` objects comes
// first (rados bench reads only the objects of its last write pass); it is
// the run's load, not measured, and the telemetry window starts after it
// (driver.LoadWatch.Begin).
//
// Warmup: rados bench has none, so a run is two benches, the warmup's
// (same mode, its figures kept apart and excluded) then the measured
// window's, each of whole seconds; the measured figures are exactly the
// second bench's, its own totals, and its window its own "Total time
// run" (the seconds asked, plus the ops in flight at the end). Between the
// two the load pauses for up to a second: rados bench's status thread ends
// a bench only at its next one-second tick, and the next process takes
// 0.1 s to connect; the telemetry window, timed by the runner from the
// warmup's start, is off by that pause. Two benches rather than one split
// at its warmup's row, because a split would leave the measured window's
// minimum and maximum latency unknown and its ops counted from rows
// printed a few ms late. seq ends when it has read every object once, reads
// being faster than writes often long before its time: a seq bench that
// ran out before 90% of its time fails the run with the objects it needs
// (another pass would add that idle second each time).
//
// Latency: rados bench prints no histogram, only per-second rows (ops
// finished and the running mean latency) and, at the end, the mean,
// minimum and maximum. The histogram is each second's ops recorded at that
// second's mean latency, with the minimum and maximum once each
// (latencyHistogram): counts and means are rados bench's, the maximum is
// exact, other percentiles are of per-second means and understate the tail.
// As with the other tools' summaries (searchbench), they are approximate.
//
// Errors: rados bench stops at the first op that fails, exiting non-zero,
// which fails the run with its output's tail; a read whose data is wrong
// ("is not correct!") is counted as an error of its op.
package radosbench

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
	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload/radosload"
)

// Name is the driver's name in studies and results.
const Name = radosload.Driver

// Engine is the engine it drives.
const Engine = "ceph"

// Tool returns rados bench as a tool.Tool.
func Tool() tool.Tool {
	return tool.Tool{
		Name: Name,
		Doc: "Ceph's rados bench (ceph-common 16.2) on the run's pool: workload rados, write, seq or rand, -t clients ops in flight; " +
			"warmup as a bench of its own; latency from its per-second means (approximate percentiles, exact maximum)",
		Check: Check,
		New:   New,
	}
}

// Check says whether rados bench can drive engineName with workloadName.
func Check(engineName, workloadName string) error {
	return tool.Mismatch(fmt.Sprintf("%s drives engine %s with workload %s", Name, Engine, radosload.Name),
		engineName == Engine, engineName, workloadName == radosload.Name, workloadName)
}

// Preflight reports whether the rados CLI is installed, so a study with
// driver rados-bench is refused before it creates anything.
func Preflight() error {
	if _, err := proc.Find("ceph-common", "rados"); err != nil {
		return fmt.Errorf("%w (or run `make setup`)", err)
	}
	return nil
}

// New returns the rados bench driver of one run.
func New(req tool.Request) (driver.External, error) {
	if err := Check(req.Engine, req.WorkloadName); err != nil {
		return nil, err
	}
	w, ok := req.Workload.(*radosload.Workload)
	if !ok {
		return nil, fmt.Errorf("%s: the request's workload is %T, not workload %s", Name, req.Workload, radosload.Name)
	}
	objects, err := engine.NeedObjects(req.DB)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	bin, err := proc.Find("ceph-common", "rados")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	run := "tierbench"
	if req.Dir != "" {
		run = "tierbench-" + filepath.Base(req.Dir)
	}
	return &Driver{Bin: bin, Cluster: objects.Rados(), Settings: w.Settings(), RunName: run, Dir: req.Dir}, nil
}

// Driver runs rados bench for one run. Use New.
type Driver struct {
	Bin      string
	Cluster  engine.RadosCluster
	Settings radosload.Settings
	// RunName names the bench's metadata object, which tells seq and rand
	// which objects the write pass wrote.
	RunName string
	// Dir receives rados-bench.log, every bench's command and output.
	// Empty: a temporary folder, removed after the run.
	Dir string

	watch driver.LoadWatch
}

// WatchLoad makes Drive report each rados process to w
// (driver.LoadReporter).
func (d *Driver) WatchLoad(w driver.LoadWatch) { d.watch = w }

var _ driver.External = (*Driver)(nil)

const (
	// connectGrace is how long a bench may take beyond its seconds to
	// connect and finish its ops in flight before it is killed as hung.
	connectGrace = 30 * time.Second
	// writePassSeconds bounds the write pass of seq and rand, which ends
	// when it has written `objects` objects (rados bench's seconds of 0
	// would end it at once).
	writePassSeconds = 600
	// tailLines is how many of rados's last output lines an error quotes.
	tailLines = 25
)

// bench is one invocation of rados bench.
type bench struct {
	mode    radosload.Mode
	seconds int64
	objects int64 // --max-objects: stop after this many; 0: no limit
}

// Args returns the command line of b with clients ops in flight. It holds
// no secret: the key is in the keyring file.
func (d *Driver) Args(b bench, clients int) []string {
	c := d.Cluster
	args := []string{"-c", c.Conf, "--id", c.ID, "--keyring", c.Keyring, "-p", c.Pool,
		"bench", strconv.FormatInt(b.seconds, 10), string(b.mode), "-t", strconv.Itoa(clients)}
	if b.mode == radosload.Write {
		args = append(args, "-b", strconv.FormatInt(d.Settings.ObjectSize, 10), "--no-cleanup")
	}
	if b.objects > 0 {
		args = append(args, "--max-objects", strconv.FormatInt(b.objects, 10))
	}
	// A cluster that is gone fails the connection in seconds, not the
	// default 5 minutes.
	return append(args, "--run-name", d.RunName, "--client_mount_timeout", "20")
}

// wholeSeconds rounds d to whole seconds, rados bench's unit.
func wholeSeconds(d time.Duration) int64 { return int64(math.Round(d.Seconds())) }

// Drive runs the write pass (seq, rand), the warmup's bench and the
// measured window's with clients ops in flight, cfg.Warmup and
// cfg.Duration rounded to whole seconds, calling cfg.OnTick for each
// status row as rados bench prints it. Closed loop only. When ctx is
// cancelled the running bench is killed and Drive returns ctx's error.
func (d *Driver) Drive(ctx context.Context, cfg driver.Config, clients int) (*driver.Result, error) {
	if clients < 1 {
		return nil, errors.New("rados bench: need at least one client")
	}
	if cfg.TargetRate > 0 {
		return nil, errors.New("rados bench: drives closed loop only; a target_rate (open loop) is not supported with driver rados-bench")
	}
	dir, done, err := tool.WorkDir(d.Dir, "rados-bench")
	if err != nil {
		return nil, err
	}
	defer done()
	logf, err := os.OpenFile(filepath.Join(dir, "rados-bench.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("rados bench: log: %w", err)
	}
	defer logf.Close()

	mode := d.Settings.Mode
	if mode != radosload.Write {
		n := d.Settings.Objects
		rep, err := d.run(ctx, logf, bench{mode: radosload.Write, seconds: writePassSeconds, objects: n}, clients, nil)
		if err != nil {
			return nil, fmt.Errorf("write pass of %d objects before %s: %w", n, mode, err)
		}
		if rep.Summary.Ops < n {
			return nil, fmt.Errorf("the write pass before %s wrote %d of its %d objects in %d s; lower the workload's objects", mode, rep.Summary.Ops, n, writePassSeconds)
		}
		if d.watch != nil {
			d.watch.Begin()
		}
	}
	tick := &ticker{on: cfg.OnTick}
	warmup, err := d.phase(ctx, logf, wholeSeconds(cfg.Warmup), clients, driver.Warmup, tick)
	if err != nil {
		return nil, fmt.Errorf("warmup: %w", err)
	}
	measured, err := d.phase(ctx, logf, max(wholeSeconds(cfg.Duration), 1), clients, driver.Measured, tick)
	if err != nil {
		return nil, err
	}
	return result(d.Settings.Op(), warmup, *measured)
}

// phase runs the bench of one phase, seconds long, and returns nil when
// seconds is 0. A seq bench that read every object before its time is an
// error naming the objects needed: its window would be shorter than the
// one telemetry samples (another pass would cost a second of idle time,
// rados bench's status thread's, for each).
func (d *Driver) phase(ctx context.Context, logf io.Writer, seconds int64, clients int, ph driver.Phase, tick *ticker) (*Report, error) {
	if seconds <= 0 {
		return nil, nil
	}
	tick.phase, tick.prev = ph, Row{}
	rep, err := d.run(ctx, logf, bench{mode: d.Settings.Mode, seconds: seconds}, clients, tick.row)
	if err != nil {
		return nil, err
	}
	took, want := rep.Summary.TotalTime, time.Duration(seconds)*time.Second
	tick.tl.offset += took
	if d.Settings.Mode == radosload.Seq && took < want*9/10 {
		return nil, fmt.Errorf("seq read all %d objects of the write pass in %v, short of its %v: set the workload's objects to at least %d",
			rep.Summary.Ops, took.Round(time.Millisecond), want, objectsFor(rep.Summary, want))
	}
	return &rep, nil
}

// objectsFor is how many objects a seq bench that read as fast as s needs
// to last want, with a fifth more to spare, rounded up to a thousand.
func objectsFor(s *Summary, want time.Duration) int64 {
	rate := float64(s.Ops) / max(s.TotalTime.Seconds(), 1e-3)
	return int64(math.Ceil(rate*want.Seconds()*1.2/1000)) * 1000
}

// run runs one bench to its end and returns its report, calling onRow
// for each status row.
func (d *Driver) run(ctx context.Context, logf io.Writer, b bench, clients int, onRow func(Row)) (Report, error) {
	limit := time.Duration(b.seconds)*time.Second + connectGrace
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	args := d.Args(b, clients)
	cmdline := "rados " + strings.Join(args, " ")
	cmd := exec.CommandContext(runCtx, d.Bin, args...)
	proc.OwnGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Report{}, fmt.Errorf("rados bench: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return Report{}, fmt.Errorf("rados bench: %w", err)
	}
	var (
		mu   sync.Mutex // the log, tail and parser, written from both pipes
		tail = logtail.Writer{Max: 8 << 10}
		p    parser
	)
	fmt.Fprintf(logf, "$ %s\n", cmdline)
	out := func(line string) {
		fmt.Fprintln(logf, line)
		fmt.Fprintln(&tail, line)
	}
	if err := cmd.Start(); err != nil {
		return Report{}, fmt.Errorf("rados bench: start %s: %w", d.Bin, err)
	}
	waited := driver.WatchCmd(d.watch, Name, cmd)
	errDone := make(chan struct{})
	go func() {
		defer close(errDone)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			out(sc.Text())
			p.feedErr(sc.Text())
			mu.Unlock()
		}
	}()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		mu.Lock()
		out(sc.Text())
		r, isRow := p.feed(sc.Text())
		mu.Unlock()
		if isRow && onRow != nil {
			onRow(r)
		}
	}
	<-errDone
	waitErr := cmd.Wait()
	waited()
	switch {
	case ctx.Err() != nil:
		return Report{}, ctx.Err()
	case runCtx.Err() != nil:
		return Report{}, fmt.Errorf("%w: rados bench was still running %v after it started (killed): %s\nlast lines of its output:\n%s",
			driver.ErrHung, limit, cmdline, tail.Last(tailLines))
	case waitErr != nil:
		return Report{}, fmt.Errorf("rados bench failed (%v): %s\nlast lines of its output:\n%s", waitErr, cmdline, tail.Last(tailLines))
	case p.rep.Summary == nil:
		return Report{}, fmt.Errorf("rados bench printed no summary: %s\nlast lines of its output:\n%s", cmdline, tail.Last(tailLines))
	}
	return p.rep, nil
}
