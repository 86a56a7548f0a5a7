// Package objects holds object-70-30, the object storage workload of the
// Ceph study (issue 16): CosBench's mixed stage, 70% reads and 30% writes
// of small objects in a few buckets, against an S3 gateway (Ceph's RADOS
// Gateway) through minio-go. It is CosBench-like, not CosBench: CosBench
// cannot be installed here, so the driver is tierbench's own, written from
// CosBench's workload description (containers, objects, sizes, a weighted
// read/write mix over the prefilled names); no code is CosBench's.
//
// Object contents come from a seeded pattern: object variant v is v as 8
// bytes followed by the pattern from offset v, so every read checks the
// whole body against what some write or the load put there, and a write
// sends a slice of the shared pattern without copying or allocating it.
package objects

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
)

// Name is the workload's name.
const Name = "object-70-30"

// Parameter names, as CosBench's workload files call them where it has one.
const (
	pContainers  = "containers"
	pObjects     = "objects"
	pObjectSize  = "object_size"
	pReadPercent = "read_percent"
	pSeed        = "seed"
)

// Op names, in Ops order.
const (
	OpRead  = workload.OpRead
	OpWrite = "write"
)

const (
	opRead = iota
	opWrite
)

// Bounds of the parameters. An object's first 8 bytes name its variant,
// so none is shorter; the pattern, object_size plus a variant span, is
// held once in memory, and each PUT is a single request (RGW's own limit
// for one is 5 GiB).
const (
	minObjectSize = headerBytes
	maxObjectSize = 1 << 30
	maxContainers = 1000
	maxObjects    = 10_000_000 // per container: the names are held in memory
)

// Spec returns object-70-30's spec.
func Spec() workload.Spec {
	params := []setting.Setting{
		{Name: pContainers, Kind: setting.Int, Default: "1", Min: "1", Max: strconv.Itoa(maxContainers), Doc: "buckets (tierbench-0, tierbench-1, ...), made by the load"},
		{Name: pObjects, Kind: setting.Int, Default: "1000", Min: "1", Max: strconv.Itoa(maxObjects), Doc: "objects the load writes into each bucket; reads and writes pick among them"},
		{Name: pObjectSize, Kind: setting.Size, Default: "4096", Min: strconv.Itoa(minObjectSize), Max: "1GiB", Doc: "bytes of every object (an object's first 8 bytes name its content)"},
		{Name: pReadPercent, Kind: setting.Percent, Default: "70", Doc: "percent of ops that read; the others overwrite an object"},
		{Name: pSeed, Kind: setting.Int, Doc: "seed of the object contents and the clients' choices; unset: random"},
	}
	return workload.Spec{
		Name:  Name,
		Model: engine.ModelObjects,
		Doc: "CosBench-like, not CosBench: the Ceph study's mixed stage over S3. The load makes containers buckets and fills each with objects objects of object_size bytes; " +
			"then each op is a read (GET of a random object, whole body checked) or a write (PUT over a random object of the same names, as CosBench's mixed stage writes), read_percent of every 100 ops of a client reads, in random order; " +
			"after the run every object must still be listed with its size",
		Params: params,
		New: func(p setting.Values) (workload.Workload, error) {
			return newWorkload(p), nil
		},
	}
}

// Workload is one configured object-70-30, shared by every client of a
// run. Its counters tell Verify what the run did.
type Workload struct {
	containers  int
	objects     int
	objectSize  int
	readPercent int
	seed        int64
	seeded      bool
	contentSeed uint64

	setup    sync.Once
	pattern  []byte   // shared, read-only: see content.go
	buckets  []string // bucket names, by number
	keys     []string // object names, by number, the same in every bucket
	gateways gateways

	readsOK      atomic.Int64 // whole bodies that matched a variant
	readsCorrupt atomic.Int64 // bodies of the wrong length or content
	readsFailed  atomic.Int64 // no whole answer (refused, cut off)
	writesAcked  atomic.Int64
	writesFailed atomic.Int64 // refused or no answer: old or new content
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Verifier = (*Workload)(nil)
)

func newWorkload(p setting.Values) *Workload {
	w := &Workload{containers: p.Int(pContainers), objects: p.Int(pObjects),
		objectSize: int(p.Size(pObjectSize)), readPercent: p.Int(pReadPercent),
	}
	w.seed, w.seeded = workload.Seed(p, pSeed)
	w.contentSeed = uint64(w.seed)
	if !w.seeded {
		w.contentSeed = rand.Uint64()
	}
	return w
}

// Ops names the workload's operations.
func (w *Workload) Ops() []string { return []string{OpRead, OpWrite} }

// EstimatedBytes is the data the load writes: every object's body.
func (w *Workload) EstimatedBytes() int64 {
	return int64(w.containers) * int64(w.objects) * int64(w.objectSize)
}

// prepare makes the pattern and the names once, on first use rather than
// in New, which validation calls too.
func (w *Workload) prepare() {
	w.setup.Do(func() {
		w.pattern = newPattern(w.contentSeed, w.objectSize)
		w.buckets = make([]string, w.containers)
		for i := range w.buckets {
			w.buckets[i] = bucketName(i)
		}
		w.keys = make([]string, w.objects)
		for i := range w.keys {
			w.keys[i] = objectName(i)
		}
	})
}

// resetCounters starts a run's counts again: a load begins each run.
func (w *Workload) resetCounters() {
	for _, c := range []*atomic.Int64{&w.readsOK, &w.readsCorrupt, &w.readsFailed, &w.writesAcked, &w.writesFailed} {
		c.Store(0)
	}
}
