// Package radosload is the `rados` workload: objects written to, then read
// from, a RADOS pool, as Ceph's own `rados bench` does it. Only driver
// rados-bench (tool/radosbench, the real `rados` CLI) runs it: RADOS is
// reached through librados, a C library, and tierbench is built without
// cgo, so its own driver has no way to issue the operations.
//
// The workload holds what a study sets (object size, mode, the objects
// written before reading) and checks it; the tool carries it out. In mode
// write every op writes a new object; in seq and rand the tool first
// writes `objects` objects (rados bench reads only the objects of its last
// write pass), then reads them in order or at random.
package radosload

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
)

// Name is the workload's name in studies.
const Name = "rados"

// Driver is the only driver that runs it (tool/radosbench's Name).
const Driver = "rados-bench"

// Mode is what the measured window does, as `rados bench` names it.
type Mode string

// The modes of `rados bench`.
const (
	Write Mode = "write" // each op writes a new object
	Seq   Mode = "seq"   // reads the objects written, in order
	Rand  Mode = "rand"  // reads objects written, at random
)

// defaultObjects is how many objects seq and rand write before reading
// when objects is unset (it has no Default, so New can tell it was set).
const defaultObjects = 2000

// params are the workload's parameters. object_size is at most 64MiB: a
// RADOS write larger than the OSD's osd_max_write_size (90 MB by default)
// is refused by the OSD.
var params = []setting.Setting{
	{Name: "object_size", Kind: setting.Size, Default: "4096", Max: "64MiB", Doc: "bytes per object, one op each (rados bench -b); at most what an OSD takes in one write (osd_max_write_size)"},
	{Name: "mode", Kind: setting.Enum, Default: string(Write), Values: []string{string(Write), string(Seq), string(Rand)}, Doc: "write: each op writes a new object; seq: reads the objects written, in order; rand: reads them at random"},
	{Name: "objects", Kind: setting.Int, Min: "1", Max: strconv.Itoa(1 << 30), Doc: "seq and rand: objects written before the reads (rados bench write --max-objects); unset: " + strconv.Itoa(defaultObjects) + "; a set smaller than the OSD's cache measures the cache"},
}

// Spec returns the workload's spec.
func Spec() workload.Spec {
	return workload.Spec{
		Name: Name,
		Doc: "objects written or read through RADOS as `rados bench` does (ops write or read), " +
			"on an object store (ceph); tierbench's own driver has no librados",
		Model:  engine.ModelObjects,
		Params: params,
		Driver: Driver,
		New: func(p setting.Values) (workload.Workload, error) {
			return New(p)
		},
	}
}

// Settings are a configured workload's values, what the tool runs.
type Settings struct {
	// ObjectSize is each op's bytes; objects are written whole.
	ObjectSize int64
	Mode       Mode
	// Objects is how many objects the write pass of seq and rand writes.
	Objects int64
}

// Op is the name of the ops the mode issues: write or read.
func (s Settings) Op() string {
	if s.Mode == Write {
		return "write"
	}
	return workload.OpRead
}

// Workload is one configured rados workload. It has no clients of its own:
// the tool issues every op.
type Workload struct {
	set Settings
}

// New returns the workload of checked parameters (see Spec().Build).
func New(p setting.Values) (*Workload, error) {
	set := Settings{ObjectSize: p.Size("object_size"), Mode: Mode(p.String("mode")), Objects: defaultObjects}
	if p.Has("objects") {
		if set.Mode == Write {
			return nil, fmt.Errorf("objects sizes the write pass before seq and rand read; mode write writes new objects for the whole run: remove objects or set mode: seq or rand")
		}
		set.Objects = p.Int64("objects")
	}
	return &Workload{set: set}, nil
}

// Settings returns the workload's values.
func (w *Workload) Settings() Settings { return w.set }

// Ops implements workload.Workload: one op, write or read.
func (w *Workload) Ops() []string { return []string{w.set.Op()} }

// Load implements workload.Workload. It only checks that the engine is an
// object store: the objects seq and rand read are written by the tool,
// since rados bench reads only what its own last write pass wrote.
func (w *Workload) Load(_ context.Context, db engine.DB, _ int) (workload.LoadStats, error) {
	if _, err := engine.NeedObjects(db); err != nil {
		return workload.LoadStats{}, err
	}
	return workload.LoadStats{}, nil
}

// NewClient implements workload.Workload: there are no clients of
// tierbench's own (study validation refuses other drivers first).
func (w *Workload) NewClient(int, engine.Session) (workload.Client, error) {
	return nil, fmt.Errorf("workload %s runs only with driver %s (tierbench's own driver has no librados); add driver: %s", Name, Driver, Driver)
}
