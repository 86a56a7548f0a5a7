// Package workload defines what a workload is to tierbench: named operations,
// a load phase that builds the initial data set, and clients that each issue
// one operation per call. Concrete workloads live in subpackages (ycsb, ...).
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
)

// Op names shared by workloads; results use them as keys.
const (
	OpRead   = "read"
	OpUpdate = "update"
	OpInsert = "insert"
	OpScan   = "scan"
	OpRMW    = "rmw"
)

// Spec describes a workload and builds it from the study's overrides.
type Spec struct {
	Name string
	Doc  string
	// Model is the data model its clients need of an engine.
	Model engine.Model
	// Params are what a study may set under `workload:`, typed and
	// ranged; New reads them checked and defaulted.
	Params []setting.Setting
	// Metric, when set, is the workload's own throughput figure, which
	// statistics and reports use in place of ops/s (tpcc: tpmC).
	Metric *Metric
	// Driver, when set, is the only driver that runs the workload, when
	// tierbench's own cannot (rados: librados needs cgo, which tierbench
	// is built without); study validation refuses any other driver.
	Driver string
	// Lanes marks a workload whose clients can run on tierbench's lanes
	// (driver.LaneClient), which they do on an engine whose sessions can
	// (engine.Spec.Lanes); elsewhere a study's builtin:lanes=N is refused.
	Lanes bool
	// New builds the workload from its checked parameters. It checks only
	// what ties parameters together (or to the machine); kinds and ranges
	// are checked by Build before it is called.
	New func(params setting.Values) (Workload, error)
}

// Metric is a workload's headline throughput: one op's rate, as the
// workload's standard reports it, rather than all ops per second.
type Metric struct {
	// Name is the figure as users know it: "tpmC".
	Name string
	// Op is the op counted: "new_order".
	Op string
	// PerMinute counts per minute rather than per second.
	PerMinute bool
	// PerOpParam, when set, names the parameter that says how many units
	// one op counts for (bulk_size: a bulk op indexes that many docs).
	PerOpParam string
	// Elapsed makes the figure a time: the seconds one pass over the
	// workload's ops takes (a query set's elapsed time); lower is better.
	// Op and PerMinute are then unused.
	Elapsed bool
}

// PerOp returns how many units one op counts for, read from the
// workload's effective parameters: 0 (meaning one) without PerOpParam.
func (m Metric) PerOp(params map[string]string) float64 {
	if m.PerOpParam == "" {
		return 0
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(params[m.PerOpParam]), 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// Param finds a declared parameter by name.
func (s Spec) Param(name string) (setting.Setting, bool) {
	return setting.Find(s.Params, name)
}

// ParamNames lists the declared parameters, sorted.
func (s Spec) ParamNames() []string {
	return setting.Names(s.Params)
}

// Resolve checks a study's overrides (parameter name to value as written)
// against Params and fills in every Default: the one rule for a
// workload's parameters. A study's run resolves them once, records their
// Map as the workload's effective parameters and builds each run's
// workload from them (BuildFrom).
func (s Spec) Resolve(overrides map[string]string) (setting.Values, error) {
	return setting.Resolve("workload "+s.Name, s.Params, overrides)
}

// Build resolves overrides and builds the workload: for a `drive` command
// line, a study's validation or a test, which hold the parameters as
// written.
func (s Spec) Build(overrides map[string]string) (Workload, error) {
	v, err := s.Resolve(overrides)
	if err != nil {
		return nil, err
	}
	return s.BuildFrom(v)
}

// BuildFrom builds the workload from parameters Resolve returned.
func (s Spec) BuildFrom(params setting.Values) (Workload, error) {
	w, err := s.New(params)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", s.Name, err)
	}
	return w, nil
}

// Describe renders a one-workload summary for `tierbench workloads`.
func Describe(s Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", s.Name, s.Doc)
	if s.Model != "" {
		fmt.Fprintf(&b, "    (needs an engine with the %s data model)\n", s.Model)
	}
	if s.Driver != "" {
		fmt.Fprintf(&b, "    (runs only with driver: %s)\n", s.Driver)
	}
	setting.Describe(&b, s.Params)
	return b.String()
}

// Workload is one configured workload, shared by every client of a run.
// It finds the data model it needs on the engine's sessions or DB
// (engine.NeedRecords, NeedSQL, NeedCache); on an engine without it, its
// error wraps engine.ErrNoModel, and the runner, which knows the engine,
// names it.
type Workload interface {
	// Ops names the operations clients may issue; Client.Do returns an index
	// into this slice.
	Ops() []string
	// Load builds the initial data set on a fresh engine with `loaders`
	// parallel sessions.
	Load(ctx context.Context, db engine.DB, loaders int) (LoadStats, error)
	// NewClient returns client number id bound to its own session.
	NewClient(id int, s engine.Session) (Client, error)
}

// Client issues one operation per call to Do. It is used by one goroutine.
type Client interface {
	// Do performs one operation and returns its index in Workload.Ops().
	Do(ctx context.Context) (op int, err error)
}

// LoadStats describes a finished load phase.
type LoadStats struct {
	Records  int64
	Duration time.Duration
}

// NewRand returns the random numbers of one client (or other user, told
// apart by stream): with a seed, id picks the state, so clients never replay
// each other's choices and a seeded run repeats; without one, a random
// state.
func NewRand(seed int64, seeded bool, stream, id uint64) *rand.Rand {
	p := new(paddedPCG)
	if seeded {
		p.PCG.Seed(uint64(seed)+id, stream)
	} else {
		p.PCG.Seed(rand.Uint64(), rand.Uint64())
	}
	return rand.New(&p.PCG)
}

// paddedPCG keeps a client's random state, written on every draw, off
// the cache lines of other clients' states: plain 16-byte PCGs allocated
// one after another shared lines, and cost two clients in one process a
// share of the second core (see driver's worker).
type paddedPCG struct {
	_ cpu.CacheLinePad
	rand.PCG
	_ cpu.CacheLinePad
}

// NewClients opens n sessions on db and a client of w on each, as a run
// drives them; closeAll closes the clients, then the sessions. On error
// everything opened so far is closed.
func NewClients(ctx context.Context, db engine.DB, w Workload, n int) (clients []driver.Client, closeAll func() error, err error) {
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
	for i := range n {
		sess, err := db.NewSession(ctx)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("client %d: %w", i, err)
		}
		sessions = append(sessions, sess)
		c, err := w.NewClient(i, sess)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("client %d: %w", i, err)
		}
		clients = append(clients, c)
	}
	return clients, closeAll, nil
}

// Seed reads the seed parameter name: seeded is false when it is unset.
func Seed(p setting.Values, name string) (seed int64, seeded bool) {
	if !p.Has(name) {
		return 0, false
	}
	return p.Int64(name), true
}
