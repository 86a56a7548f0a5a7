// Package cachekv holds the key-value cache workloads of Apache Ignite's own
// benchmarks (IgnitePutBenchmark, IgniteGetBenchmark,
// IgnitePutGetBenchmark): puts, gets, or a 50/50 mix of both on keys drawn
// uniformly from [0, keys), each value value_size bytes.
//
// The operations run in the engine's own client (engine ignite's thick Java
// client), not in tierbench's Go driver: the workloads are
// workload.Delegated, expressed against the engine's cache data model
// (engine.Cache), whose client measures the same way the Go driver does.
package cachekv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
)

// Op names the engine's client reports.
const (
	OpPut = "put"
	OpGet = "get"
)

// Parameter names.
const (
	pKeys      = "keys"
	pValueSize = "value_size"
	pPreload   = "preload"
)

// Preload values besides a number of keys.
const (
	PreloadAll  = "all"
	PreloadNone = "none"
)

// kind is one of the three workloads.
type kind struct {
	name, doc, preload string
	mix                engine.CacheMix
	ops                []string
}

var kinds = []kind{
	{name: "puts", mix: engine.CachePuts, ops: []string{OpPut}, preload: PreloadNone,
		doc: "cache puts on uniformly random keys (Ignite's IgnitePutBenchmark); runs on engine ignite only"},
	{name: "gets", mix: engine.CacheGets, ops: []string{OpGet}, preload: PreloadAll,
		doc: "cache gets on uniformly random keys, all loaded first (IgniteGetBenchmark); runs on engine ignite only"},
	{name: "putget", mix: engine.CachePutGet, ops: []string{OpPut, OpGet}, preload: PreloadAll,
		doc: "50% puts, 50% gets on uniformly random keys (IgnitePutGetBenchmark); runs on engine ignite only"},
}

// Specs returns the puts, gets and putget workloads.
func Specs() []workload.Spec {
	out := make([]workload.Spec, len(kinds))
	for i, k := range kinds {
		// value_size is at most 16MiB: a value is one cache entry, and a
		// few threads' worth of them must fit the client's heap.
		params := []setting.Setting{
			{Name: pKeys, Kind: setting.Int, Default: "1000000", Min: "1", Doc: "key range: keys are drawn uniformly from [0, keys) (the range of Ignite's benchmarks)"},
			{Name: pValueSize, Kind: setting.Size, Default: "1024", Min: "1", Max: "16MiB", Doc: "bytes per value"},
			{Name: pPreload, Kind: setting.Int, Default: k.preload, Min: "0", Values: []string{PreloadAll, PreloadNone},
				Doc: "keys written before the run (0..n-1, with Ignite's data streamer), at most keys"},
		}
		out[i] = workload.Spec{
			Name:   k.name,
			Model:  engine.ModelCache,
			Doc:    k.doc,
			Params: params,
			New: func(p setting.Values) (workload.Workload, error) {
				return newWorkload(k, p)
			},
		}
	}
	return out
}

// Workload is one configured cache workload.
type Workload struct {
	kind    kind
	work    engine.CacheWork
	preload int64
	// acks is a crash run's record of puts (TrackAcks); nil otherwise.
	acks *acklog.Log
}

var (
	_ workload.Workload    = (*Workload)(nil)
	_ workload.Delegated   = (*Workload)(nil)
	_ engine.CacheWorkload = (*Workload)(nil)
	_ workload.AckChecker  = (*Workload)(nil)
)

func newWorkload(k kind, p setting.Values) (*Workload, error) {
	w := &Workload{kind: k, work: engine.CacheWork{Mix: k.mix, Keys: p.Int64(pKeys), ValueSize: int(p.Size(pValueSize))}}
	switch p.Text(pPreload) {
	case PreloadAll:
		w.preload = w.work.Keys
	case PreloadNone:
		w.preload = 0
	default:
		w.preload = p.Int64(pPreload)
		if w.preload > w.work.Keys {
			return nil, fmt.Errorf("%s %d is more than %s (%d): write %s, %s or a number of keys from 0 to %d",
				pPreload, w.preload, pKeys, w.work.Keys, PreloadAll, PreloadNone, w.work.Keys)
		}
	}
	return w, nil
}

// Ops names the operations: put, get, or both.
func (w *Workload) Ops() []string { return append([]string(nil), w.kind.ops...) }

// cache returns db's cache data model or an engine.ErrNoModel that says
// where the workload runs.
func (w *Workload) cache(db engine.DB) (engine.Cache, error) {
	c, err := engine.NeedCache(db)
	if err != nil {
		return nil, fmt.Errorf("workload %s runs on engine ignite only: %w", w.kind.name, err)
	}
	return c, nil
}

// Load preloads keys 0..preload-1 through the engine's client; loaders is
// not used (Ignite's data streamer batches per node on its own).
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	c, err := w.cache(db)
	if err != nil {
		return workload.LoadStats{}, err
	}
	if w.preload == 0 {
		return workload.LoadStats{}, nil
	}
	start := time.Now()
	n, err := c.Preload(ctx, w.preload, w.work.ValueSize)
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("preload %d keys: %w", w.preload, err)
	}
	return workload.LoadStats{Records: n, Duration: time.Since(start)}, nil
}

// NewClient fails: the operations run in the engine's own client.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	return nil, fmt.Errorf("workload %s runs in engine ignite's own Java client (workload.Delegated), not in tierbench's Go driver", w.kind.name)
}

// External returns the load generator that drives db through its client.
func (w *Workload) External(db engine.DB) (driver.External, error) {
	c, err := w.cache(db)
	if err != nil {
		return nil, err
	}
	return &external{cache: c, w: w}, nil
}

// external drives one run through the engine's client.
type external struct {
	cache engine.Cache
	w     *Workload
}

// Drive runs the client with `clients` threads for cfg.Warmup then
// cfg.Duration and returns what it measured. Intervals reach cfg.OnTick as
// the client reports them.
func (e *external) Drive(ctx context.Context, cfg driver.Config, clients int) (*driver.Result, error) {
	if cfg.TargetRate > 0 {
		return nil, fmt.Errorf("open loop is not supported by the Ignite client (workload %s): remove target_rate", e.w.kind.name)
	}
	if len(cfg.Ops) == 0 {
		cfg.Ops = e.w.Ops()
	}
	if err := cfg.Validate(clients); err != nil {
		return nil, err
	}
	work := e.w.work
	if e.w.acks != nil {
		work.OnWrite = e.w.record
	}
	return e.cache.DriveCache(ctx, work, cfg, clients)
}

// CacheWork says what the engine's client does in a run on a cluster,
// where it loads and drives in one pod.
func (w *Workload) CacheWork() (engine.CacheWork, int64) { return w.work, w.preload }

// TrackAcks starts the record of puts a crash run checks
// (workload.AckChecker): the engine's client reports them after the cut
// (engine.CacheWork.OnWrite), one slot per key.
func (w *Workload) TrackAcks() { w.acks = acklog.New() }

// CheckAcks reads back every key with an acknowledged put through the
// engine's client (engine.CacheReader) and counts those whose latest
// acknowledged put is missing (workload.AckChecker).
func (w *Workload) CheckAcks(ctx context.Context, db engine.DB) (workload.AckCheck, error) {
	out := workload.AckCheck{Unit: "keys"}
	if w.acks == nil {
		return out, errors.New("cachekv: no puts were tracked (TrackAcks)")
	}
	r, ok := db.(engine.CacheReader)
	if !ok {
		return out, fmt.Errorf("engine %T cannot read its cache back (engine.CacheReader)", db)
	}
	keys := w.acks.Slots()
	ids, first, err := r.ReadIDs(ctx, keys, w.work.ValueSize)
	if err != nil {
		return out, err
	}
	res, err := w.acks.Check(func(key int64) ([]byte, error) {
		id, ok := ids[key]
		if !ok {
			return nil, nil
		}
		return idValue(id), nil
	})
	out.First, out.Checked, out.Lost, out.OldestLost = first, res.Checked, res.Lost, res.OldestLost
	return out, err
}

// record hands a put the client reported to the record.
func (w *Workload) record(cw engine.CacheWrite) {
	w.acks.Add(cw.Key, idValue(cw.ID), cw.Start, cw.End, cw.Acked)
}

// idValue is the value the record keeps for a put: its id's 8 bytes.
func idValue(id int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(id)) }
