package runner

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/workload"
)

// Catalog finds what a study names: its engine, its workload and the
// standard tools it may drive with (see package catalog).
type Catalog interface {
	Engine(name string) (engine.Engine, bool)
	Workload(name string) (workload.Spec, bool)
	Tool(name string) (tool.Tool, bool)
}

// Options configure Run.
type Options struct {
	Catalog Catalog
	Store   *results.Store
	// Keep leaves run folders in place after each run.
	Keep bool
	// Ledger records what tierbench creates (mounts, loop devices, run
	// folders) so `tierbench cleanup` can undo it after a kill; nil records
	// nothing and allows no provisioned tiers.
	Ledger *tier.Ledger
	// Progress receives human progress; nil discards it.
	Progress Observer
	// MaxErrorRatio is the share of failed operations above which a run is
	// failed; 0 means DefaultMaxErrorRatio.
	MaxErrorRatio float64
	// Resume is an interrupted study to take up again (`run --resume`):
	// the study st must be its stored text; only the cells without an ok
	// run are run, into the same study.
	Resume *results.Study
	// Explain, when set, gives the sentence printed after each ok run
	// (its likely bottleneck). Nothing it says is stored: bottlenecks are
	// computed from the stored telemetry when results are shown, so the
	// runner needs no attribution of its own (cmd/tierbench passes
	// stats.Attribute's text).
	Explain func(*results.Run, *results.Study) string
	// Live, when set, is told what the study is doing as it happens
	// (`run --metrics`); nil tells no one.
	Live Live
}

// withDefaults fills the zero values Options documents.
func (o Options) withDefaults() Options {
	if o.Progress == nil {
		o.Progress = discard{}
	}
	if o.Live != nil {
		o.Progress = liveRuns{o.Progress, o.Live}
	}
	if o.MaxErrorRatio == 0 {
		o.MaxErrorRatio = DefaultMaxErrorRatio
	}
	return o
}

// DefaultMaxErrorRatio fails a run when more than 1% of its operations fail.
const DefaultMaxErrorRatio = 0.01

// Observer is told of a study's progress (see package progress).
type Observer interface {
	// Line is a line to keep: notes, each run's outcome.
	Line(s string)
	// Live is the current run's per-second line.
	Live(s string)
	// Runs says how many of the study's runs are done.
	Runs(done, total int)
}

// Live is told what a study is doing as it happens, for a live view
// (package livemetrics). Its methods are called from the study's, the
// driver's and the telemetry sampler's goroutines, and must return
// quickly.
type Live interface {
	// RunStarted: a run of study st begins (its record holds the cell);
	// series names it as show does.
	RunStarted(st *results.Study, r *results.Run, series string)
	// Tick: a tick of the run's driver, whose per-op histograms
	// (iv.ByOp) are lent until Tick returns.
	Tick(ops []string, iv driver.Interval)
	// Sampled: a telemetry reading of the run's measured window.
	Sampled(telemetry.Reading)
	// Runs: how many of the study's runs are done, of how many planned.
	Runs(done, planned int)
}

// liveRuns tells Live what it tells the progress Observer of the runs done.
type liveRuns struct {
	Observer
	live Live
}

func (l liveRuns) Runs(done, total int) {
	l.Observer.Runs(done, total)
	l.live.Runs(done, total)
}

type discard struct{}

func (discard) Line(string)   {}
func (discard) Live(string)   {}
func (discard) Runs(int, int) {}

// Summary counts a study's runs by outcome.
type Summary struct {
	Study       *results.Study
	OK, Failed  int
	Interrupted bool
}

// LeftoversError refuses a run while a killed tierbench's mounts, loop
// devices or folders are still in place.
type LeftoversError struct{ Resources []tier.Resource }

func (e *LeftoversError) Error() string {
	names := make([]string, len(e.Resources))
	for i, r := range e.Resources {
		names[i] = r.String()
	}
	return fmt.Sprintf("a previous tierbench left %d thing(s) behind: %s; run `tierbench cleanup` first",
		len(names), strings.Join(names, ", "))
}
