// Package analytics is a TPC-H-like workload, not audited: the eight TPC-H
// tables filled by TPC-H's own data generator (dbgen, as DuckDB's tpch
// extension ships it) at a scale factor, and its 22 queries with the
// specification's validation parameters, on PostgreSQL and MariaDB. It
// answers the read-heavy question of the IRIS study: how long a fixed set
// of analytical queries takes over a data set, per query and for the whole
// set, as the cache and the data's tier change. Each operation runs one
// query, so an op's latency is that query's elapsed time, and lower is
// better.
//
// The generator runs once per scale factor: its files are kept in
// tierbench's state folder, with the row counts it wrote and the answers
// DuckDB gives to the same 22 query texts on the same data, which Verify
// holds each engine's answers to. None of TPC-H's rules on refresh
// functions, streams, timing or reporting apply: the results are
// TPC-H-like, not audited.
package analytics

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/workload"
)

// Parameter names.
const (
	pScale   = "scale"
	pQueries = "queries"
)

// allQueries is the queries parameter's value for the whole set.
const allQueries = "all"

// maxScale bounds the scale: up to it, every key but the order keys (which
// are BIGINT) stays below 2^31 (customers: 150,000 x SF).
const maxScale = 10000

// bytesPerScale is a lower bound of the data one scale factor loads: the
// generator's files at scale 1 take 1,114,159,626 bytes, and each engine
// stores more (row headers, indexes).
const bytesPerScale = 1.1e9

// Spec returns the analytics workload's spec.
func Spec() workload.Spec {
	params := []setting.Setting{
		{Name: pScale, Kind: setting.Float, Default: "1", Min: "0", Max: strconv.Itoa(maxScale),
			Doc: "TPC-H scale factor: about 1.1 GB of data each (6,001,215 lineitem rows at 1); fractions such as 0.01 for tests; 0 itself is refused"},
		{Name: pQueries, Kind: setting.String, Default: allQueries, Doc: "the queries each client runs in turn: all (1-22) or a list such as 1,3,6"},
	}
	return workload.Spec{
		Name:  "analytics",
		Model: engine.ModelSQL,
		Doc: "TPC-H-like, not audited: the 22 TPC-H queries (op names q1..q22) with the specification's validation parameters " +
			"over data from TPC-H's dbgen (DuckDB's tpch extension); latency = elapsed time per query, lower is better; " +
			"row counts of the tables and of every answer checked after the run",
		Params: params,
		Metric: &workload.Metric{Name: "query set elapsed s", Elapsed: true},
		New: func(p setting.Values) (workload.Workload, error) {
			return newWorkload(p)
		},
	}
}

// LoadOnce marks the workload as loaded once per study
// (workload.LoadedOnce): its queries only read, so every later run starts
// from a copy of the first run's loaded data set.
func (w *Workload) LoadOnce() {}

// Workload is one configured analytics workload, shared by all clients.
type Workload struct {
	scale     float64
	scaleText string   // the scale as the cache names it: "1", "0.01"
	selected  []int    // query numbers, in the order clients walk them
	ops       []string // their op names
	texts     []string // their texts

	// cacheDir holds the generated data sets (tier.StateDir()/tpch; a
	// test's own folder in tests).
	cacheDir string
	// generated counts the generator's runs by this workload, for tests.
	generated atomic.Int64

	mu   sync.Mutex
	data *dataSet // set by prepare

	stats stats
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Verifier = (*Workload)(nil)
)

func newWorkload(p setting.Values) (*Workload, error) {
	scale := p.Float(pScale)
	if scale == 0 {
		return nil, fmt.Errorf("%s %s: the scale factor must be above 0; write e.g. %s: 0.01 for a quick test or %s: 1 for about 1.1 GB",
			pScale, p.Text(pScale), pScale, pScale)
	}
	selected, err := parseQueries(p.String(pQueries))
	if err != nil {
		return nil, err
	}
	w := &Workload{scale: scale, scaleText: strconv.FormatFloat(scale, 'f', -1, 64), selected: selected,
		cacheDir: filepath.Join(tier.StateDir(), "tpch")}
	for _, n := range selected {
		w.ops = append(w.ops, opName(n))
		w.texts = append(w.texts, queryText(n, scale))
	}
	w.stats.reset(len(selected))
	return w, nil
}

// parseQueries reads the queries parameter: all, or a comma-separated list
// of query numbers 1-22 (q1 also accepted), each at most once, in the
// order clients run them.
func parseQueries(v string) ([]int, error) {
	v = strings.TrimSpace(v)
	if v == allQueries || v == "" {
		out := make([]int, nQueries)
		for i := range out {
			out[i] = i + 1
		}
		return out, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(f)), "q")
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > nQueries {
			return nil, fmt.Errorf("%s %q: %q is not a query: write all, or query numbers from 1 to %d such as 1,3,6", pQueries, v, f, nQueries)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("%s %q: query %d is listed twice", pQueries, v, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// Ops names the selected queries, q1..q22, in the order clients run them.
func (w *Workload) Ops() []string { return slices.Clone(w.ops) }

// EstimatedBytes is a lower bound of the data set the load writes: about
// 1.1 GB per scale factor, what the generator writes.
func (w *Workload) EstimatedBytes() int64 { return int64(w.scale * bytesPerScale) }

// Preflight says whether the data generator can run, naming the command
// that installs it when it cannot, and whether the cache's filesystem has
// room for what it writes. A scale already generated, with its expected
// answers, needs neither.
func (w *Workload) Preflight() error {
	if w.cached() {
		return nil
	}
	if err := checkGenerator(context.Background()); err != nil {
		return err
	}
	free, at, err := tier.FreeBytes(w.cacheDir)
	if err != nil {
		return err
	}
	if need := w.EstimatedBytes(); free < need {
		return fmt.Errorf("the TPC-H data at scale %s takes about %s in %s, whose filesystem (%s) has %s free: free space there or lower the scale",
			w.scaleText, humanize.IBytes(uint64(need)), w.cacheDir, at, humanize.IBytes(uint64(free)))
	}
	return nil
}
