package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

// drive runs the driven part, warmup then measured window: tierbench's
// driver with one session and workload client per client, or an external
// load generator. Telemetry samples the measured window. The driver's
// result becomes the run's figures and histograms; a server that died
// explains the errors better than they do.
func (r *run) drive(ctx context.Context) (err error) {
	ext, dropToolDir, err := r.externalDriver()
	if err != nil {
		return err
	}
	defer dropToolDir()
	var clients []driver.Client
	if ext == nil {
		var closeClients func() error
		if clients, closeClients, err = r.newClients(ctx); err != nil {
			return err
		}
		defer func() {
			if cerr := closeClients(); err == nil {
				err = cerr
			}
		}()
	}
	watch := newWatcher(ctx, r.telemetryConfig(), r.st.Warmup)
	dcfg := driver.Config{
		Ops: r.w.Ops(), Warmup: r.st.Warmup, Duration: r.st.Duration,
		TargetRate: r.st.TargetRate, Arrival: driver.Arrival(r.st.Arrival),
		OnTick: func(iv driver.Interval) {
			r.opt.Progress.Live(fmt.Sprintf("%s %5.1fs %-8s %9.0f ops/s  p50 %-8s p99 %-8s errors %d", r.label,
				(iv.Start + iv.Length).Seconds(), iv.Phase, iv.OpsPerSec(), fmtDur(iv.P50), fmtDur(iv.P99), iv.Errors))
		},
	}
	if ext != nil {
		r.res, err = ext.Drive(ctx, dcfg, r.cell.Clients)
	} else {
		r.res, err = driver.Run(ctx, dcfg, clients)
	}
	if rep := watch.stop(); rep != nil {
		r.rec.Telemetry, r.rec.TelemetryTimeline = &rep.Summary, rep
	}
	if r.res != nil {
		var ferr error
		if r.hists, ferr = results.FromDriver(r.rec, r.res); ferr != nil {
			err = ferr
		}
	}
	if c, ok := r.db.(engine.Checker); ok {
		if cerr := c.Check(); cerr != nil {
			err = cerr
		}
	}
	return err
}

func fmtDur(d time.Duration) string { return hist.FormatMicros(float64(d) / 1e3) }

// externalDriver returns the run's load generator when it is not
// tierbench's Go driver: a standard tool (driver: pgbench), or the engine's
// own client for a delegated workload (Ignite's). nil means the Go driver.
// A tool gets a folder for its logs in the study's scratch folder; drop
// removes it.
func (r *run) externalDriver() (ext driver.External, drop func(), err error) {
	drop = func() {}
	if d := r.cell.Driver; d != "" && d != tool.Builtin {
		t, ok := r.opt.Catalog.Tool(d)
		if !ok {
			return nil, drop, fmt.Errorf("unknown driver %q", d)
		}
		dir := filepath.Join(r.ws.Scratch(), r.rec.ID+"-"+t.Name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, drop, fmt.Errorf("driver %s: log folder: %w", t.Name, err)
		}
		drop = func() { os.RemoveAll(dir) }
		ext, err = t.New(tool.Request{Engine: r.st.Engine, WorkloadName: r.st.Workload.Name, Workload: r.w, DB: r.db, Dir: dir})
		if err != nil {
			return nil, drop, fmt.Errorf("driver %s: %w", t.Name, err)
		}
		return ext, drop, nil
	}
	if dw, ok := r.w.(workload.Delegated); ok {
		if ext, err = dw.External(r.db); err != nil {
			return nil, drop, err
		}
	}
	return ext, drop, nil
}

// newClients opens one session per client and binds a workload client to
// each. closeAll closes them all, also after a failure here: first each
// client that holds something of its own (prepared statements on its
// session's connection: an io.Closer), then the sessions, whose errors
// are not the run's.
func (r *run) newClients(ctx context.Context) (clients []driver.Client, closeAll func() error, err error) {
	var sessions []engine.Session
	closeAll = func() error {
		var errs []error
		for _, c := range clients {
			if c, ok := c.(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
		for _, s := range sessions {
			s.Close()
		}
		clients, sessions = nil, nil
		return errors.Join(errs...)
	}
	for i := range r.cell.Clients {
		sess, err := r.db.NewSession(ctx)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("client %d: %w", i, err)
		}
		sessions = append(sessions, sess)
		c, err := r.w.NewClient(i, sess)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("client %d: %w", i, err)
		}
		clients = append(clients, c)
	}
	return clients, closeAll, nil
}

// telemetryConfig is what the run's sampler watches: the devices of the
// tiers the placement uses, each component's folder, and the engine's
// process (tierbench itself for in-process engines).
func (r *run) telemetryConfig() telemetry.Config {
	devices := map[string]string{}
	tiers := r.ws.Tiers()
	for _, t := range r.cell.Placement.Components {
		devices[t] = tiers[t].Device
	}
	pid := os.Getpid()
	if p, ok := r.db.(engine.PIDer); ok {
		pid = p.PID()
	}
	return telemetry.Config{Tiers: devices, Components: r.rec.Dirs, PID: pid}
}

// watcher starts a telemetry sampler after a delay (the warmup) and stops
// it on demand.
type watcher struct {
	mu      sync.Mutex
	timer   *time.Timer
	sampler *telemetry.Sampler
	stopped bool
}

func newWatcher(ctx context.Context, cfg telemetry.Config, after time.Duration) *watcher {
	w := &watcher{}
	w.timer = time.AfterFunc(after, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.stopped {
			return
		}
		w.sampler, _ = telemetry.Start(ctx, cfg) // errors of sources are inside its report
	})
	return w
}

// stop returns the sampler's report, or nil when it never started.
func (w *watcher) stop() *telemetry.Report {
	w.timer.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.sampler == nil {
		return nil
	}
	return w.sampler.Stop()
}
