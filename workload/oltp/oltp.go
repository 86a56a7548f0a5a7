// Package oltp implements sysbench 1.0.20's OLTP workloads, oltp_read_write
// and oltp_write_only (oltp_common.lua): the same sbtest tables, the same
// DDL per dialect, the same initial rows, and the same transaction with the
// same options and random choices, so tierbench's driver and sysbench itself
// (tool/sysbench, which runs on the data this package loads) can be set side
// by side on one data set.
//
// Differences from sysbench, all outside the measured transaction: the load
// inserts explicit ids 1..table_size in parallel chunks (sysbench's prepare
// lets SERIAL/AUTO_INCREMENT number them in one session; the PostgreSQL
// sequence is then set as prepare leaves it), and analyzes each table after
// its index is built. A transaction that fails (deadlock, serialization
// failure, lock wait timeout, or on PostgreSQL the duplicate key a
// concurrent delete+insert of the same id can cause) is rolled back and
// returned as the client's error, counted by the driver, where sysbench
// counts it as an "ignored error" and restarts the transaction.
package oltp

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// Workload names and the sysbench scripts they imitate.
const (
	ReadWrite = "oltp-read-write"
	WriteOnly = "oltp-write-only"
)

// OpTransaction is the one operation: a whole sysbench event.
const OpTransaction = "transaction"

// Parameter names: sysbench's option names (oltp_common.lua), so they pass
// through to sysbench unchanged, plus seed.
const (
	pTables          = "tables"
	pTableSize       = "table_size"
	pRangeSize       = "range_size"
	pPointSelects    = "point_selects"
	pSimpleRanges    = "simple_ranges"
	pSumRanges       = "sum_ranges"
	pOrderRanges     = "order_ranges"
	pDistinctRanges  = "distinct_ranges"
	pIndexUpdates    = "index_updates"
	pNonIndexUpdates = "non_index_updates"
	pDeleteInserts   = "delete_inserts"
	pRangeSelects    = "range_selects"
	pSkipTrx         = "skip_trx"
	pRandType        = "rand_type"
	pSeed            = "seed"
)

// Load batching, as tpcb's: stmtRows rows per INSERT (about 200 kB of
// text), chunkRows per transaction.
const (
	stmtRows  = 1000
	chunkRows = 10 * stmtRows
)

// PCG streams of the load's and the clients' random numbers.
const (
	streamLoad   = 0x5DEECE66D
	streamClient = 0x9E3779B97F4A7C15
)

// Specs returns the specs of oltp-read-write and oltp-write-only. Each
// declares the options its sysbench script uses; their defaults are
// sysbench 1.0.20's.
func Specs() []workload.Spec {
	ids, perTrx := strconv.Itoa(maxIDs), strconv.Itoa(maxPerTrx)
	common := []setting.Setting{
		{Name: pTables, Kind: setting.Int, Default: "1", Min: "1", Max: strconv.Itoa(maxTables), Doc: "number of tables sbtest1..N (sysbench --tables)"},
		{Name: pTableSize, Kind: setting.Int, Default: "10000", Min: "1", Max: ids, Doc: "rows per table (sysbench --table_size)"},
	}
	reads := []setting.Setting{
		{Name: pRangeSize, Kind: setting.Int, Default: "100", Min: "1", Max: ids, Doc: "rows in each range SELECT"},
		{Name: pPointSelects, Kind: setting.Int, Default: "10", Min: "0", Max: perTrx, Doc: "point SELECTs per transaction"},
		{Name: pSimpleRanges, Kind: setting.Int, Default: "1", Min: "0", Max: perTrx, Doc: "simple range SELECTs per transaction"},
		{Name: pSumRanges, Kind: setting.Int, Default: "1", Min: "0", Max: perTrx, Doc: "SELECT SUM() ranges per transaction"},
		{Name: pOrderRanges, Kind: setting.Int, Default: "1", Min: "0", Max: perTrx, Doc: "SELECT ... ORDER BY c ranges per transaction"},
		{Name: pDistinctRanges, Kind: setting.Int, Default: "1", Min: "0", Max: perTrx, Doc: "SELECT DISTINCT ranges per transaction"},
		{Name: pRangeSelects, Kind: setting.Bool, Default: "on", Doc: "all four kinds of range SELECT (sysbench's on/off)"},
	}
	writes := []setting.Setting{
		{Name: pIndexUpdates, Kind: setting.Int, Default: "1", Min: "0", Max: perTrx, Doc: "UPDATEs of the indexed column k per transaction"},
		{Name: pNonIndexUpdates, Kind: setting.Int, Default: "1", Min: "0", Max: perTrx, Doc: "UPDATEs of the non-indexed column c per transaction"},
		{Name: pDeleteInserts, Kind: setting.Int, Default: "1", Min: "0", Max: perTrx, Doc: "DELETE + INSERT pairs of one id per transaction"},
		{Name: pSkipTrx, Kind: setting.Bool, Default: "off", Doc: "no BEGIN/COMMIT: every statement autocommits (sysbench's on/off)"},
		{Name: pRandType, Kind: setting.Enum, Default: randSpecial, Values: slices.Clone(randTypes),
			Doc: "id distribution: special (sysbench 1.0's default: 75% of draws on 1% of ids), uniform, gaussian, pareto"},
		{Name: pSeed, Kind: setting.Int, Doc: "random seed; unset: random; set for reproducible runs (sysbench --rand-seed)"},
	}
	rw := slices.Concat(common, reads, writes)
	wo := slices.Concat(common, writes)
	return []workload.Spec{
		{
			Name:  ReadWrite,
			Model: engine.ModelSQL,
			Lanes: true, // Client.OnLane
			Doc: "sysbench 1.0.20 oltp_read_write: per transaction 10 point SELECTs, 4 range SELECTs (plain, SUM, ORDER BY, DISTINCT), " +
				"an index and a non-index UPDATE, a DELETE and an INSERT of one id, on sbtest tables",
			Params: rw,
			New: func(p setting.Values) (workload.Workload, error) {
				return newWorkload(ReadWrite, p)
			},
		},
		{
			Name:   WriteOnly,
			Model:  engine.ModelSQL,
			Lanes:  true,
			Doc:    "sysbench 1.0.20 oltp_write_only: per transaction an index and a non-index UPDATE, a DELETE and an INSERT of one id, on sbtest tables",
			Params: wo,
			New: func(p setting.Values) (workload.Workload, error) {
				return newWorkload(WriteOnly, p)
			},
		},
	}
}

// Script returns the sysbench script a workload imitates.
func Script(workloadName string) (string, bool) {
	switch workloadName {
	case ReadWrite:
		return "oltp_read_write", true
	case WriteOnly:
		return "oltp_write_only", true
	}
	return "", false
}

// options are the parsed parameters.
type options struct {
	tables, tableSize, rangeSize                                       int64
	pointSelects, simpleRanges, sumRanges, orderRanges, distinctRanges int64
	indexUpdates, nonIndexUpdates, deleteInserts                       int64
	rangeSelects, skipTrx                                              bool
	randType                                                           string
	seed                                                               int64
	seeded                                                             bool
}

// Workload is one configured oltp workload, shared by all clients.
type Workload struct {
	name      string
	opt       options
	readWrite bool
	dist      distribution
}

var _ workload.Workload = (*Workload)(nil)

// maxIDs bounds table_size: ids and k are INTEGER (and uint32 in sysbench).
const maxIDs = math.MaxInt32

// Bounds of tables and of each statement's count per transaction.
const (
	maxTables = 100000
	maxPerTrx = 1000000
)

func newWorkload(name string, p setting.Values) (*Workload, error) {
	w := &Workload{name: name, readWrite: name == ReadWrite}
	o := &w.opt
	ints := []struct {
		name string
		dst  *int64
	}{
		{pTables, &o.tables}, {pTableSize, &o.tableSize}, {pRangeSize, &o.rangeSize},
		{pPointSelects, &o.pointSelects}, {pSimpleRanges, &o.simpleRanges}, {pSumRanges, &o.sumRanges},
		{pOrderRanges, &o.orderRanges}, {pDistinctRanges, &o.distinctRanges},
		{pIndexUpdates, &o.indexUpdates}, {pNonIndexUpdates, &o.nonIndexUpdates}, {pDeleteInserts, &o.deleteInserts},
	}
	for _, i := range ints {
		if p.Has(i.name) { // else not an option of this workload
			*i.dst = p.Int64(i.name)
		}
	}
	bools := []struct {
		name string
		dst  *bool
	}{{pRangeSelects, &o.rangeSelects}, {pSkipTrx, &o.skipTrx}}
	for _, b := range bools {
		if p.Has(b.name) {
			*b.dst = p.Bool(b.name)
		}
	}
	o.randType = p.String(pRandType)
	var err error
	if w.dist, err = distributionOf(o.randType); err != nil {
		return nil, err
	}
	o.seed, o.seeded = workload.Seed(p, pSeed)
	return w, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// SysbenchArgs returns the sysbench options that make sysbench run the
// workload of params (its resolved parameters, Spec.Resolve): one
// --name=value per option of the script, with booleans as on/off, and the
// distribution and seed as --rand-type and --rand-seed. A seed must fit
// sysbench's int and not be 0, which sysbench reads as "seed from the time".
func SysbenchArgs(workloadName string, params setting.Values) ([]string, error) {
	spec, ok := specNamed(workloadName)
	if !ok {
		return nil, fmt.Errorf("%s is not an oltp workload (%s, %s)", workloadName, ReadWrite, WriteOnly)
	}
	var args []string
	for _, p := range spec.Params {
		switch p.Name {
		case pRangeSelects, pSkipTrx:
			args = append(args, "--"+p.Name+"="+onOff(params.Bool(p.Name)))
		case pRandType:
			args = append(args, "--rand-type="+params.String(pRandType))
		case pSeed:
			if seed, seeded := workload.Seed(params, pSeed); seeded {
				if seed <= 0 || seed > math.MaxInt32 {
					return nil, fmt.Errorf("%s %d: sysbench takes a seed from 1 to %d", pSeed, seed, math.MaxInt32)
				}
				args = append(args, "--rand-seed="+strconv.FormatInt(seed, 10))
			}
		default:
			args = append(args, "--"+p.Name+"="+params.Text(p.Name))
		}
	}
	return args, nil
}

func specNamed(name string) (workload.Spec, bool) {
	for _, s := range Specs() {
		if s.Name == name {
			return s, true
		}
	}
	return workload.Spec{}, false
}

// Ops names the single operation: one whole transaction.
func (w *Workload) Ops() []string { return []string{OpTransaction} }

// Rows is the number of rows the load puts in all tables together.
func (w *Workload) Rows() int64 { return w.opt.tables * w.opt.tableSize }

// table returns table i's name (sysbench's sbtest1..N).
func table(i int64) string { return "sbtest" + strconv.FormatInt(i, 10) }

// createTable returns sysbench's CREATE TABLE for table i in dialect d
// (oltp_common.lua create_table with auto_inc on, the default): SERIAL on
// PostgreSQL, INTEGER AUTO_INCREMENT and InnoDB on MySQL/MariaDB. The k
// index is created after the rows, as sysbench does (createIndex).
func createTable(d engine.Dialect, i int64) string {
	idDef, engineDef := "SERIAL", ""
	if d == engine.MySQL {
		idDef, engineDef = "INTEGER NOT NULL AUTO_INCREMENT", "/*! ENGINE = innodb */"
	}
	return strings.TrimRight(fmt.Sprintf(`CREATE TABLE %s(
  id %s,
  k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL,
  PRIMARY KEY (id)
) %s`, table(i), idDef, engineDef), " ")
}

// createIndex is sysbench's secondary index on k (create_secondary, on by
// default).
func createIndex(i int64) string {
	n := strconv.FormatInt(i, 10)
	return "CREATE INDEX k_" + n + " ON sbtest" + n + "(k)"
}

// finishTable returns what follows table i's rows: the k index; on
// PostgreSQL the SERIAL sequence set past the loaded ids, where sysbench's
// prepare leaves it; then the statistics (sqlwork.Analyze).
func finishTable(d engine.Dialect, i, rows int64) []string {
	qs := []string{createIndex(i)}
	if d == engine.Postgres && rows > 0 {
		qs = append(qs, fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', 'id'), %d)", table(i), rows))
	}
	return qs
}

// appendRow appends row id's values, parenthesised: k from the configured
// distribution over [1, table_size] (sysbench's sb_rand, i.e.
// sysbench.rand.default), c and pad from sysbench's templates.
func (w *Workload) appendRow(b []byte, r *rand.Rand, id int64) []byte {
	b = append(b, '(')
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, uint64(w.dist(r, 1, uint32(w.opt.tableSize))), 10)
	b = append(b, ", '"...)
	b = appendRandString(b, r, cTemplate)
	b = append(b, "', '"...)
	b = appendRandString(b, r, padTemplate)
	return append(b, "')"...)
}

// chunk returns load chunk number n: its table and rows first..first+count-1;
// ok is false past the last.
func (w *Workload) chunk(n int64) (tbl, first, count int64, ok bool) {
	perTable := (w.opt.tableSize + chunkRows - 1) / chunkRows
	if n < 0 || n >= perTable*w.opt.tables {
		return 0, 0, 0, false
	}
	tbl = n/perTable + 1
	first = (n%perTable)*chunkRows + 1
	return tbl, first, min(chunkRows, w.opt.tableSize-first+1), true
}

// Load drops and creates sbtest1..N, fills them with loaders parallel
// sessions, one transaction per chunk of chunkRows rows, then builds each
// table's k index and analyzes it, tables in parallel. With a seed, each
// chunk's rows depend only on the seed and the chunk, not on which loader
// took it. Records counts rows over all tables.
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	var d engine.Dialect
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, dialect engine.Dialect) error {
		d = dialect
		var qs []string
		for i := int64(1); i <= w.opt.tables; i++ {
			qs = append(qs, "DROP TABLE IF EXISTS "+table(i), createTable(d, i))
		}
		return sqlwork.ExecAll(ctx, conn, qs...)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: create tables: %w", w.name, err)
	}

	var next, rows atomic.Int64
	err = sqlwork.LoadChunks(ctx, w.name, db, loaders, func(ctx context.Context, conn *sql.Conn, buf []byte) ([]byte, bool, error) {
		n := next.Add(1) - 1
		tbl, first, count, ok := w.chunk(n)
		if !ok {
			return buf, true, nil
		}
		r := workload.NewRand(w.opt.seed, w.opt.seeded, streamLoad, uint64(n))
		name := table(tbl)
		buf, err := sqlwork.InsertChunk(ctx, conn, buf, name+" rows", first, count, stmtRows, func(b []byte, first, n int64) []byte {
			return sqlwork.AppendInsert(b, name, "id, k, c, pad", first, n, func(b []byte, id int64) []byte {
				return w.appendRow(b, r, id)
			})
		})
		if err == nil {
			rows.Add(count)
		}
		return buf, false, err
	})
	stats := workload.LoadStats{Records: rows.Load()}
	if err != nil {
		stats.Duration = time.Since(start)
		return stats, err
	}

	var nextTable atomic.Int64
	err = sqlwork.LoadChunks(ctx, w.name, db, loaders, func(ctx context.Context, conn *sql.Conn, buf []byte) ([]byte, bool, error) {
		i := nextTable.Add(1)
		if i > w.opt.tables {
			return buf, true, nil
		}
		if err := sqlwork.ExecAll(ctx, conn, finishTable(d, i, w.opt.tableSize)...); err != nil {
			return buf, false, err
		}
		return buf, false, sqlwork.Analyze(ctx, conn, d, table(i))
	})
	stats.Duration = time.Since(start)
	return stats, err
}
