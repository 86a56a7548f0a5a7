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
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
)

// Op names shared by workloads; results use them as keys.
const (
	OpRead   = "read"
	OpUpdate = "update"
	OpInsert = "insert"
	OpScan   = "scan"
	OpRMW    = "rmw"
)

// Param is one property a study may override under `workload:`.
type Param struct {
	Name    string
	Default string
	Doc     string
}

// Spec describes a workload and builds it from the study's overrides.
type Spec struct {
	Name string
	Doc  string
	// Model is the data model its clients need of an engine.
	Model  engine.Model
	Params []Param
	// Metric, when set, is the workload's own throughput figure, which
	// statistics and reports use in place of ops/s (tpcc: tpmC).
	Metric *Metric
	// Driver, when set, is the only driver that runs the workload, when
	// tierbench's own cannot (rados: librados needs cgo, which tierbench
	// is built without); study validation refuses any other driver.
	Driver string
	// New builds the workload from string-valued overrides. Only names in
	// Params are passed; New validates their values.
	New func(params map[string]string) (Workload, error)
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

// HasParam reports whether name is a declared parameter.
func (s Spec) HasParam(name string) bool {
	for _, p := range s.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// ParamNames lists the declared parameters, sorted.
func (s Spec) ParamNames() []string {
	out := make([]string, len(s.Params))
	for i, p := range s.Params {
		out[i] = p.Name
	}
	sort.Strings(out)
	return out
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
	for _, p := range s.Params {
		fmt.Fprintf(&b, "    %-26s %-10s %s\n", p.Name, p.Default, p.Doc)
	}
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
	// Params returns every parameter with its effective value, for the record.
	Params() map[string]string
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

// Effective returns every parameter's value: the override when there is
// one, the default otherwise. Workloads parse and record these values, so a
// run's record shows the defaults it ran with too.
func Effective(params []Param, overrides map[string]string) map[string]string {
	eff := make(map[string]string, len(params))
	for _, p := range params {
		eff[p.Name] = p.Default
	}
	for k, v := range overrides {
		eff[k] = v
	}
	return eff
}

// ParseInt reads parameter name's value as a whole number in [lo, hi];
// the error names the parameter, its value and the range, with why.
func ParseInt(name, value string, lo, hi int64, why string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	if err != nil || n < lo || n > hi {
		if why != "" {
			why = " (" + why + ")"
		}
		return 0, fmt.Errorf("%s %q: must be a whole number from %d to %d%s", name, value, lo, hi, why)
	}
	return n, nil
}

// ParseSeed parses the value of seed parameter name: an integer, or empty
// (spaces aside) for a random seed, in which case seeded is false.
func ParseSeed(name, value string) (seed int64, seeded bool, err error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, false, nil
	}
	if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
		return 0, false, fmt.Errorf("%s %q: must be an integer or empty", name, value)
	}
	return seed, true, nil
}

// NewRand returns the random numbers of one client (or other user, told
// apart by stream): with a seed, id picks the state, so clients never replay
// each other's choices and a seeded run repeats; without one, a random
// state.
func NewRand(seed int64, seeded bool, stream, id uint64) *rand.Rand {
	if seeded {
		return rand.New(rand.NewPCG(uint64(seed)+id, stream))
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
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
