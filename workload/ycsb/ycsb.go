// Package ycsb implements the YCSB core workloads A to F as upstream YCSB
// (brianfrankcooper/YCSB, CoreWorkload and workloads/workloada..f) defines
// them: the same operation mixes, key choosers, key names and record shape,
// so results can be compared with published YCSB numbers. Defaults follow the
// upstream workload files, not go-ycsb's uniform defaults.
package ycsb

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
)

// Parameter names, as in YCSB's properties.
const (
	pRecords        = "records"
	pOperationCount = "operationcount"
	pFieldCount     = "fieldcount"
	pFieldLength    = "fieldlength"
	pRead           = "readproportion"
	pUpdate         = "updateproportion"
	pInsert         = "insertproportion"
	pScan           = "scanproportion"
	pRMW            = "readmodifywriteproportion"
	pRequestDist    = "requestdistribution"
	pZipfConst      = "zipfianconstant"
	pMaxScan        = "maxscanlength"
	pScanLenDist    = "scanlengthdistribution"
	pInsertOrder    = "insertorder"
	pWriteAll       = "writeallfields"
	pSeed           = "seed"
)

// Distribution and order names.
const (
	distZipfian = "zipfian"
	distUniform = "uniform"
	distLatest  = "latest"
	orderHashed = "hashed"
	orderOrdrd  = "ordered"
)

// loadBatch is how many records one InsertBatch call carries during load.
const loadBatch = 256

// poolSize is the size of each goroutine's pool of random printable bytes.
// Field values are slices of it, so writing a record allocates nothing.
const poolSize = 64 << 10

// ackWindow bounds how far inserts may run ahead of the oldest one not yet
// acknowledged (YCSB's AcknowledgedCounterGenerator uses the same 2^20).
const ackWindow = 1 << 20

// letter holds what upstream's workloads/workloadX file sets.
type letter struct {
	name, doc                       string
	read, update, insert, scan, rmw string
	dist                            string
}

var letters = []letter{
	{"ycsb-a", "YCSB A: update heavy, 50% read / 50% update, zipfian", "0.5", "0.5", "0", "0", "0", distZipfian},
	{"ycsb-b", "YCSB B: read mostly, 95% read / 5% update, zipfian", "0.95", "0.05", "0", "0", "0", distZipfian},
	{"ycsb-c", "YCSB C: read only, 100% read, zipfian", "1", "0", "0", "0", "0", distZipfian},
	{"ycsb-d", "YCSB D: read latest, 95% read / 5% insert, latest", "0.95", "0", "0.05", "0", "0", distLatest},
	{"ycsb-e", "YCSB E: short ranges, 95% scan / 5% insert, zipfian", "0", "0", "0.05", "0.95", "0", distZipfian},
	{"ycsb-f", "YCSB F: read-modify-write, 50% read / 50% rmw, zipfian", "0.5", "0", "0", "0", "0.5", distZipfian},
}

// Specs returns the specs of ycsb-a .. ycsb-f.
func Specs() []workload.Spec {
	out := make([]workload.Spec, len(letters))
	for i, l := range letters {
		params := []setting.Setting{
			{Name: pRecords, Kind: setting.Int, Default: "1000", Min: "1", Doc: "records loaded before the run (recordcount)"},
			{Name: pOperationCount, Kind: setting.Int, Default: "0", Min: "0", Doc: "expected operations, 0 = time bound; sizes the zipfian key space for inserts"},
			{Name: pFieldCount, Kind: setting.Int, Default: "10", Min: "1", Max: strconv.Itoa(math.MaxInt32), Doc: "fields per record"},
			{Name: pFieldLength, Kind: setting.Size, Default: "100", Min: "1", Max: strconv.Itoa(math.MaxInt32), Doc: "bytes per field"},
			{Name: pRead, Kind: setting.Ratio, Default: l.read, Doc: "share of reads"},
			{Name: pUpdate, Kind: setting.Ratio, Default: l.update, Doc: "share of updates"},
			{Name: pInsert, Kind: setting.Ratio, Default: l.insert, Doc: "share of inserts"},
			{Name: pScan, Kind: setting.Ratio, Default: l.scan, Doc: "share of scans"},
			{Name: pRMW, Kind: setting.Ratio, Default: l.rmw, Doc: "share of read-modify-writes"},
			{Name: pRequestDist, Kind: setting.Enum, Default: l.dist, Values: []string{distZipfian, distUniform, distLatest}, Doc: "key distribution"},
			{Name: pZipfConst, Kind: setting.Float, Default: strconv.FormatFloat(DefaultZipfianConstant, 'g', -1, 64), Min: "0", Max: "1",
				Doc: "zipfian skew theta; 0 and 1 themselves are refused"},
			{Name: pMaxScan, Kind: setting.Int, Default: "100", Min: "1", Doc: "longest scan, in records"},
			{Name: pScanLenDist, Kind: setting.Enum, Default: distUniform, Values: []string{distUniform, distZipfian}, Doc: "scan length distribution"},
			{Name: pInsertOrder, Kind: setting.Enum, Default: orderHashed, Values: []string{orderHashed, orderOrdrd}, Doc: "key order"},
			{Name: pWriteAll, Kind: setting.Bool, Default: "false", Doc: "updates write all fields instead of one"},
			{Name: pSeed, Kind: setting.Int, Doc: "random seed, unset: random; set for reproducible runs"},
		}
		out[i] = workload.Spec{
			Name:   l.name,
			Model:  engine.ModelRecords,
			Doc:    l.doc,
			Params: params,
			Lanes:  true, // Client.OnLane: where its engine's records can
			New: func(p setting.Values) (workload.Workload, error) {
				return newWorkload(p)
			},
		}
	}
	return out
}

// opKind is what a Do call does.
type opKind int

const (
	kindRead opKind = iota
	kindUpdate
	kindInsert
	kindScan
	kindRMW
)

var kindNames = [...]string{workload.OpRead, workload.OpUpdate, workload.OpInsert, workload.OpScan, workload.OpRMW}

// config is the parsed, validated parameter set.
type config struct {
	records, operationCount int64
	fieldCount, fieldLength int
	props                   [5]float64 // indexed by opKind
	requestDist             string
	theta                   float64
	maxScan                 int64
	scanLenDist             string
	hashed                  bool
	writeAll                bool
	seed                    int64
	seeded                  bool
}

// Workload is one configured YCSB workload, shared by all clients.
type Workload struct {
	cfg   config
	ops   []string
	kinds []opKind
	cum   []float64 // cumulative proportions, parallel to kinds
	total float64

	// keyItems is the key space of the zipfian request chooser: records
	// plus YCSB's expected new keys, plus one because YCSB's max is
	// inclusive.
	keyItems int64

	// Insert key sequence (YCSB's AcknowledgedCounterGenerator): next is
	// the next key number to hand out; acked is the count of key numbers
	// below which every insert has finished, so readers never choose a key
	// still being written. window[k%ackWindow] == k once key k finished.
	next   atomic.Int64
	acked  atomic.Int64
	window []atomic.Int64

	// acks, in a crash run, records the acknowledged writes (acks.go).
	acks *acklog.Log

	// Zeta values are O(n) to compute, so they are computed once, lazily,
	// on the first NewClient, and then only read.
	zetaOnce sync.Once
	keyZeta  float64
	latestN  int64
	scanZeta float64
}

func newWorkload(p setting.Values) (*Workload, error) {
	cfg, err := parse(p)
	if err != nil {
		return nil, err
	}
	w := &Workload{cfg: cfg}
	for k := kindRead; k <= kindRMW; k++ {
		if p := cfg.props[k]; p > 0 {
			w.total += p
			w.ops = append(w.ops, kindNames[k])
			w.kinds = append(w.kinds, k)
			w.cum = append(w.cum, w.total)
		}
	}
	// YCSB: expectednewkeys = (int)(operationcount * insertproportion * 2),
	// with the raw, unnormalised proportion; 2 is YCSB's fudge factor.
	expected := int64(float64(cfg.operationCount) * cfg.props[kindInsert] * 2)
	w.keyItems = cfg.records + expected + 1
	if cfg.props[kindInsert] > 0 {
		w.window = make([]atomic.Int64, ackWindow)
	}
	w.resetInserts()
	return w, nil
}

// resetInserts puts the insert key sequence back at the loaded record count.
func (w *Workload) resetInserts() {
	w.next.Store(w.cfg.records)
	w.acked.Store(w.cfg.records)
	for i := range w.window {
		w.window[i].Store(-1)
	}
}

// parse reads the checked parameters and checks what the declarations
// cannot: the operation shares together, and theta's open bounds.
func parse(p setting.Values) (config, error) {
	c := config{
		records:        p.Int64(pRecords),
		operationCount: p.Int64(pOperationCount),
		fieldCount:     p.Int(pFieldCount),
		fieldLength:    int(p.Size(pFieldLength)),
		requestDist:    p.String(pRequestDist),
		theta:          p.Float(pZipfConst),
		maxScan:        p.Int64(pMaxScan),
		scanLenDist:    p.String(pScanLenDist),
		hashed:         p.String(pInsertOrder) == orderHashed,
		writeAll:       p.Bool(pWriteAll),
	}
	c.seed, c.seeded = workload.Seed(p, pSeed)
	if err := proportions(p, &c.props); err != nil {
		return c, err
	}
	// The declaration bounds theta to [0, 1], which a setting's range
	// includes; Gray's zipfian needs it strictly inside (at 1 its exponent
	// 1/(1-theta) is infinite).
	if c.theta <= 0 || c.theta >= 1 {
		return c, fmt.Errorf("%s %s is out of range: it must be above 0 and below 1; write e.g. %s: %s",
			pZipfConst, p.Text(pZipfConst), pZipfConst, strconv.FormatFloat(DefaultZipfianConstant, 'g', -1, 64))
	}
	return c, nil
}

// proportionNames are the operation shares, indexed by opKind.
var proportionNames = [...]string{pRead, pUpdate, pInsert, pScan, pRMW}

// proportionTolerance is how far from 1 the shares may sum: decimal shares
// such as 0.95 + 0.05 are not exact in binary.
const proportionTolerance = 1e-9

// proportions reads the operation shares (each already checked to be in
// [0, 1]), which must add up to 1. Upstream YCSB would silently normalise a
// mix that does not add up (readproportion: 1.5 with updateproportion: 0.5
// ran 75% reads while the record said 1.5), so a mix that does not add up
// is refused instead, with the sum and the shares that make it.
func proportions(p setting.Values, props *[5]float64) error {
	var sum float64
	var terms []string
	for k, name := range proportionNames {
		v := p.Float(name)
		props[k] = v
		sum += v
		if v > 0 {
			terms = append(terms, fmt.Sprintf("%s %s", name, strconv.FormatFloat(v, 'g', -1, 64)))
		}
	}
	if sum <= 0 {
		return fmt.Errorf("proportions sum to 0: at least one of %s must be > 0", strings.Join(proportionNames[:], ", "))
	}
	if math.Abs(sum-1) > proportionTolerance {
		return fmt.Errorf("proportions sum to %s (%s), not 1: set them so they add up to 1, e.g. lower one when you raise another",
			strconv.FormatFloat(sum, 'g', 10, 64), strings.Join(terms, " + "))
	}
	return nil
}

// keyBytes is the length of a YCSB key ("user" and up to 19 digits): the
// estimate counts the shortest likely key, 4 bytes plus a few digits.
const keyBytes = 8

// EstimatedBytes is a lower bound of the data set the load phase writes:
// records x (fieldcount x fieldlength + a short key), before any engine's
// own overhead (indexes, pages, WAL). Study validation refuses a tier that
// cannot hold even this much of the data placed on it.
func (w *Workload) EstimatedBytes() int64 {
	per := int64(w.cfg.fieldCount)*int64(w.cfg.fieldLength) + keyBytes
	if w.cfg.records > math.MaxInt64/per {
		return math.MaxInt64
	}
	return w.cfg.records * per
}

// Ops lists the operations with a non-zero proportion, in the order read,
// update, insert, scan, rmw.
func (w *Workload) Ops() []string { return w.ops }

// Acked returns how many keys exist for readers: the loaded records plus
// every insert acknowledged so far.
func (w *Workload) Acked() int64 { return w.acked.Load() }

// newRand returns the random source for goroutine id of a stream (clients
// and loaders use different streams so they never replay each other).
func (w *Workload) newRand(stream, id uint64) *rand.Rand {
	return workload.NewRand(w.cfg.seed, w.cfg.seeded, stream, id)
}

const (
	streamClient = 0x9E3779B97F4A7C15
	streamLoader = 0xBF58476D1CE4E5B9
)

// newPool returns a pool of random printable bytes (YCSB's values are
// printable ASCII), large enough to slice any field from.
func (w *Workload) newPool(rng *rand.Rand) []byte {
	n := max(poolSize, 2*w.cfg.fieldLength)
	pool := make([]byte, n)
	for i := range pool {
		pool[i] = byte(' ' + rng.IntN(95))
	}
	return pool
}

// value returns a random field value: a fieldLength slice of pool.
func (w *Workload) value(rng *rand.Rand, pool []byte) []byte {
	off := rng.IntN(len(pool) - w.cfg.fieldLength + 1)
	return pool[off : off+w.cfg.fieldLength : off+w.cfg.fieldLength]
}

// Load inserts records 0..records-1 with loaders parallel sessions, in
// batches of loadBatch. loaders below 1 means 1.
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	loaders = max(loaders, 1)
	w.resetInserts()
	if err := setupRecords(ctx, db, w.cfg.fieldCount); err != nil {
		return workload.LoadStats{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		nextBatch atomic.Int64 // first key number of the next unclaimed batch
		inserted  atomic.Int64
		errOnce   sync.Once
		firstErr  error
		wg        sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	for i := range loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.loader(ctx, db, uint64(i), &nextBatch, &inserted); err != nil {
				fail(fmt.Errorf("ycsb load, loader %d: %w", i, err))
			}
		}()
	}
	wg.Wait()
	stats := workload.LoadStats{Records: inserted.Load(), Duration: time.Since(start)}
	if firstErr != nil {
		return stats, firstErr
	}
	return stats, nil
}

// setupRecords lets an engine with a schema create its records table.
func setupRecords(ctx context.Context, db engine.DB, fields int) error {
	s, err := db.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("ycsb setup: new session: %w", err)
	}
	defer s.Close()
	if rs, ok := s.(engine.RecordsSetup); ok {
		if err := rs.SetupRecords(ctx, fields); err != nil {
			return fmt.Errorf("ycsb setup: %w", err)
		}
	}
	return nil
}

// loader claims batches of key numbers and inserts them until all records
// are claimed.
func (w *Workload) loader(ctx context.Context, db engine.DB, id uint64, nextBatch, inserted *atomic.Int64) error {
	return engine.WithSession(ctx, db, func(s engine.Session) error {
		rec, err := engine.NeedRecords(s)
		if err != nil {
			return err
		}
		return w.loadBatches(ctx, rec, id, nextBatch, inserted)
	})
}

// loadBatches is one loader's loop on its session's records.
func (w *Workload) loadBatches(ctx context.Context, rec engine.Records, id uint64, nextBatch, inserted *atomic.Int64) error {
	rng := w.newRand(streamLoader, id)
	pool := w.newPool(rng)
	fc := w.cfg.fieldCount
	keyBuf := make([]byte, loadBatch*24)
	keys := make([][]byte, loadBatch)
	fieldBuf := make([][]byte, loadBatch*fc)
	fields := make([][][]byte, loadBatch)
	for i := range fields {
		fields[i] = fieldBuf[i*fc : (i+1)*fc : (i+1)*fc]
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		first := nextBatch.Add(loadBatch) - loadBatch
		if first >= w.cfg.records {
			return nil
		}
		n := int(min(loadBatch, w.cfg.records-first))
		for i := range n {
			kb := keyBuf[i*24 : i*24 : (i+1)*24]
			keys[i] = AppendKey(kb, first+int64(i), w.cfg.hashed)
			for f := range fields[i] {
				fields[i][f] = w.value(rng, pool)
			}
		}
		if err := rec.InsertBatch(ctx, keys[:n], fields[:n]); err != nil {
			return fmt.Errorf("insert batch of %d records from key number %d: %w", n, first, err)
		}
		inserted.Add(int64(n))
	}
}

// computeZetas fills in the zeta values the clients' choosers need.
func (w *Workload) computeZetas() {
	c := &w.cfg
	switch c.requestDist {
	case distZipfian:
		w.keyZeta = ScrambledZeta(w.keyItems, c.theta)
	case distLatest:
		// YCSB builds the latest chooser's zipfian over lastValue() =
		// records-1 items when the run starts.
		w.latestN = w.acked.Load() - 1
		w.keyZeta = Zeta(w.latestN, c.theta)
	}
	if c.scanLenDist == distZipfian {
		w.scanZeta = Zeta(c.maxScan, c.theta)
	}
}
