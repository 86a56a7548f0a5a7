package ignite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/tierbench/tierbench/driver/stream"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/tcpport"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"

	"github.com/tierbench/tierbench/host/logtail"
)

// clientLog is the file in the home folder that collects every client
// JVM's standard error (Ignite's console lines and stack traces).
const clientLog = "client.log"

// runSlack is how long a measured run's client may take beyond warmup and
// duration: joining the cluster, the 30 s stop grace, leaving.
const runSlack = 5 * time.Minute

var _ engine.Cache = (*DB)(nil)

// Preload streams keys 0..keys-1 with values of valueSize bytes into the
// cache through a client JVM (IgniteDataStreamer) and returns how many it
// wrote.
func (d *DB) Preload(ctx context.Context, keys int64, valueSize int) (int64, error) {
	loaded := int64(-1)
	err := d.runClient(ctx, "load", []string{
		"--keys=" + strconv.FormatInt(keys, 10),
		"--value-size=" + strconv.Itoa(valueSize),
	}, nil, func(line []byte) {
		if n, ok := stream.LoadedRecords(line); ok {
			loaded = n
		}
	})
	if err != nil {
		return 0, err
	}
	if loaded < 0 {
		return 0, fmt.Errorf("ignite client ended without reporting the load; last lines of its output:\n%s",
			logtail.File(filepath.Join(d.home, clientLog), 15))
	}
	return loaded, nil
}

// DriveCache runs one measured run in a client JVM with `clients`
// producer threads and reads what it measured from its standard output
// (driver/stream's protocol).
//
// With cfg.Cut the client ends the measured window at cfg.CutAt and says
// so; Cut (the crash) runs then, and the puts the client reports after it
// reach work.OnWrite.
func (d *DB) DriveCache(ctx context.Context, work engine.CacheWork, cfg driver.Config, clients int) (res *driver.Result, err error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Warmup+cfg.Duration+runSlack)
	defer cancel()
	p := stream.NewReader("the Ignite client", cfg)
	args := runArgs(work, cfg.Warmup, cfg.Duration, clients)
	onLine := p.Line
	if cfg.Cut != nil {
		c := &cutRun{cfg: cfg, work: work, next: p.Line}
		args = append(args, "--cut-ms="+strconv.FormatInt(cfg.CutAt.Milliseconds(), 10))
		onLine = c.line
		defer func() {
			if c.bad != nil && err == nil {
				err = c.bad
			}
		}()
	}
	res, err = p.Result(d.runClient(ctx, "run", args, nil, onLine))
	return res, err
}

// runArgs are the client's arguments for a measured run of work with
// `clients` threads.
func runArgs(work engine.CacheWork, warmup, duration time.Duration, clients int) []string {
	return []string{
		"--op=" + string(work.Mix),
		"--threads=" + strconv.Itoa(clients),
		"--warmup-ms=" + strconv.FormatInt(warmup.Milliseconds(), 10),
		"--duration-ms=" + strconv.FormatInt(duration.Milliseconds(), 10),
		"--keys=" + strconv.FormatInt(work.Keys, 10),
		"--value-size=" + strconv.Itoa(work.ValueSize),
	}
}

// WatchLoad makes the measured runs' client JVMs report to w
// (driver.LoadReporter): they are a cachekv run's load generator.
func (d *DB) WatchLoad(w driver.LoadWatch) {
	d.mu.Lock()
	d.loadWatch = w
	d.mu.Unlock()
}

// runClient runs the launcher's client command in mode with extra
// arguments. The JVM runs in its own process group with a parent-death
// signal, is tracked like the servers, and is killed when ctx ends. Its
// standard error goes to client.log in the home folder and, on failure,
// into the error.
func (d *DB) runClient(ctx context.Context, mode string, extra []string, stdin io.Reader, onLine func([]byte)) error {
	port, err := tcpport.Free()
	if err != nil {
		return fmt.Errorf("ignite client: %w", err)
	}
	work := filepath.Join(d.home, "work", "client")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return fmt.Errorf("ignite client: %w", err)
	}
	args := append([]string{"client",
		"--mode=" + mode,
		"--discovery=" + strings.Join(d.discovery, ","),
		"--local-host=" + loopback,
		"--comm-port=" + strconv.Itoa(port),
		"--work-dir=" + work,
		"--activate-servers=" + strconv.Itoa(len(d.nodes)),
	}, extra...)
	logPath := filepath.Join(d.home, clientLog)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("ignite client: log file: %w", err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "==== %s client %s\n", time.Now().Format(time.RFC3339), mode)

	tail := &logtail.Writer{Max: 64 << 10}
	cmd := exec.Command(d.java.java, d.java.args(d.set.heap, args...)...)
	cmd.Dir = d.home
	// The log is kept as far as its tier lets: a crash run's power cut
	// fails every write to it while the client reports.
	cmd.Stderr = io.MultiWriter(keepGoing{logf}, tail)
	cmd.Stdin = stdin
	proc.OwnGroup(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("ignite client: %w", err)
	}
	// Start under the lock, so Close either sees the client or refuses it.
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return errors.New("ignite client: the engine is closed")
	}
	if err := cmd.Start(); err != nil {
		d.mu.Unlock()
		return fmt.Errorf("ignite client: %w", err)
	}
	pid := cmd.Process.Pid
	if d.clients == nil {
		d.clients = map[int]bool{}
	}
	d.clients[pid] = true
	watch := d.loadWatch
	d.mu.Unlock()
	waited := driver.WatchCmd(watch, "ignite-client", cmd)
	untrack := engine.Config{Track: d.track}.Tracked(pid)
	defer untrack()
	exited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = proc.KillGroup(pid)
		case <-exited:
		}
	}()

	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		onLine(sc.Bytes())
	}
	scanErr := sc.Err()
	_, _ = io.Copy(io.Discard, stdout) // after a too-long line: let the JVM finish writing
	waitErr := cmd.Wait()
	waited()
	close(exited)
	d.mu.Lock()
	delete(d.clients, pid)
	d.mu.Unlock()

	var errs []error
	switch {
	case ctx.Err() != nil:
		errs = append(errs, fmt.Errorf("ignite client (%s) stopped: %w; last lines of its output:\n%s", mode, ctx.Err(), tail.Last(15)))
	case waitErr != nil:
		errs = append(errs, fmt.Errorf("ignite client (%s) failed (%v); last lines of its output (all in %s):\n%s", mode, waitErr, logPath, tail.Last(15)))
	case scanErr != nil:
		errs = append(errs, fmt.Errorf("ignite client (%s): reading its output: %w", mode, scanErr))
	}
	if len(errs) > 0 {
		if cerr := d.Check(); cerr != nil {
			errs = append(errs, cerr)
		}
	}
	return errors.Join(errs...)
}

// keepGoing writes what it can and never fails, so that a log on a tier
// whose power was cut does not fail the process it logs.
type keepGoing struct{ w io.Writer }

func (k keepGoing) Write(p []byte) (int, error) {
	_, _ = k.w.Write(p)
	return len(p), nil
}
