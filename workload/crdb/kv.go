package crdb

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
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

// kv's parameter names.
const (
	pReadPercent  = "read_percent"
	pBlockBytes   = "block_bytes"
	pBatch        = "batch"
	pDistribution = "distribution"
	pSeed         = "seed"
)

// Key distributions, as cockroach's kv offers them.
const (
	distHash       = "hash"
	distSequential = "sequential"
	distZipfian    = "zipfian"
)

// kv's op names, in Ops order.
const (
	OpRead  = workload.OpRead
	OpWrite = "write"
)

const (
	opRead = iota
	opWrite
)

// KVTable is kv's one table.
const KVTable = "kv"

// Bounds of kv's sizes: a batch's statement has 2 parameters per row, far
// below PostgreSQL's 65,535, and a row's block stays far below MariaDB's
// default max_allowed_packet.
const (
	maxBatch          = 1000
	maxBlockBytes     = 1 << 20
	maxStatementBytes = 8 << 20
)

// Zipfian keys: exponent and offset of P(k) ~ (v+k)^-s over [0, zipfMax].
const (
	zipfS   = 1.1
	zipfV   = 1
	zipfMax = 1 << 40
)

// KVSpec returns the kv workload's spec.
func KVSpec() workload.Spec {
	params := []setting.Setting{
		{Name: pReadPercent, Kind: setting.Percent, Default: "0", Doc: "percent of operations that read; the others upsert"},
		{Name: pBlockBytes, Kind: setting.Size, Default: "1", Min: "1", Max: "1MiB", Doc: "bytes of each value written (random)"},
		{Name: pBatch, Kind: setting.Int, Default: "1", Min: "1", Max: strconv.Itoa(maxBatch), Doc: "keys per operation: one multi-row upsert or one IN list"},
		{Name: pDistribution, Kind: setting.Enum, Default: distHash, Values: []string{distHash, distSequential, distZipfian},
			Doc: "keys: hash (a hashed sequence), sequential or zipfian; reads pick keys already written"},
		seedParam,
	}
	return workload.Spec{
		Name:   "kv",
		Model:  engine.ModelSQL,
		Doc:    "cockroach workload kv on SQL: upserts of random values and point reads of keys already written, on table kv(k BIGINT, v bytes)",
		Params: params,
		New:    newKV,
	}
}

// KV is one configured kv workload, shared by all clients. Its sequence
// counts the writes claimed: hash and sequential keys are functions of it,
// and reads pick a sequence number already claimed, so they ask for keys
// written (or, for the last few, being written), as cockroach's do.
type KV struct {
	readPercent int
	blockBytes  int
	batch       int
	dist        string
	seed        int64
	seeded      bool

	seq       atomic.Int64 // sequence numbers claimed by writes
	committed atomic.Int64 // keys of writes that committed
	failed    atomic.Int64 // keys of writes that failed: present or not
	reads     atomic.Int64
	empty     atomic.Int64 // reads that found no row
	retries   sqlwork.Retries
}

var (
	_ workload.Workload = (*KV)(nil)
	_ workload.Verifier = (*KV)(nil)
)

func newKV(p setting.Values) (workload.Workload, error) {
	w := &KV{readPercent: p.Int(pReadPercent), blockBytes: int(p.Size(pBlockBytes)),
		batch: p.Int(pBatch), dist: p.String(pDistribution)}
	if w.batch*w.blockBytes > maxStatementBytes {
		return nil, fmt.Errorf("%s %d x %s %d: more than %d bytes in one upsert (MariaDB's default max_allowed_packet is 16 MiB)",
			pBatch, w.batch, pBlockBytes, w.blockBytes, maxStatementBytes)
	}
	w.seed, w.seeded = workload.Seed(p, pSeed)
	return w, nil
}

// Ops names kv's operations.
func (w *KV) Ops() []string { return []string{OpRead, OpWrite} }

// kvDDL returns the statements that make a fresh, empty kv table.
func kvDDL(d engine.Dialect) []string {
	blob := "BYTEA"
	if d == engine.MySQL {
		blob = "LONGBLOB"
	}
	return []string{"DROP TABLE IF EXISTS " + KVTable,
		"CREATE TABLE " + KVTable + " (k BIGINT NOT NULL PRIMARY KEY, v " + blob + " NOT NULL)"}
}

// Load makes the table empty, as cockroach's kv starts by default: the
// writes of the run fill it. The counters start again with it.
func (w *KV) Load(ctx context.Context, db engine.DB, _ int) (workload.LoadStats, error) {
	start := time.Now()
	w.seq.Store(0)
	w.committed.Store(0)
	w.failed.Store(0)
	w.reads.Store(0)
	w.empty.Store(0)
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, d engine.Dialect) error {
		return sqlwork.ExecAll(ctx, conn, kvDDL(d)...)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("kv load: %w", err)
	}
	return workload.LoadStats{Duration: time.Since(start)}, nil
}

// Verify checks that the table holds the keys written: with hash or
// sequential keys (all distinct), exactly one row per key of a committed
// write, give or take the keys of writes that failed; with zipfian keys,
// which repeat, at most that many. It records the reads that found no row.
func (w *KV) Verify(ctx context.Context, db engine.DB) (string, error) {
	var rows int64
	q := "SELECT COUNT(*) FROM " + KVTable
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		return conn.QueryRowContext(ctx, q).Scan(&rows)
	})
	if err != nil {
		return "", fmt.Errorf("kv verify: %s: %w", q, err)
	}
	committed, failed := w.committed.Load(), w.failed.Load()
	lo := committed
	if w.dist == distZipfian {
		lo = min(rows, 1)
	}
	if rows < lo || rows > committed+failed {
		return "", fmt.Errorf("kv lost or invented rows: COUNT(*) = %d, want %d..%d (%d keys of committed writes, %d of failed ones, %s keys)",
			rows, lo, committed+failed, committed, failed, w.dist)
	}
	return fmt.Sprintf("%d rows for %d keys written (%s); %d reads, %d found no row; %s",
		rows, committed, w.dist, w.reads.Load(), w.empty.Load(), &w.retries), nil
}

// keyGen draws one client's keys.
type keyGen struct {
	w    *KV
	rng  *rand.Rand
	zipf *rand.Zipf
}

func (w *KV) newKeyGen(rng *rand.Rand) *keyGen {
	g := &keyGen{w: w, rng: rng}
	if w.dist == distZipfian {
		g.zipf = rand.NewZipf(rng, zipfS, zipfV, zipfMax)
	}
	return g
}

// hashKey spreads sequence number i over the non-negative int64s
// (SplitMix64's finaliser, a bijection of uint64, less its top bit), so
// hashed writes land all over the index as cockroach's do.
func hashKey(i int64) int64 {
	z := uint64(i) + 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return int64((z ^ (z >> 31)) >> 1)
}

// writeKey claims the next key to write.
func (g *keyGen) writeKey() int64 {
	if g.zipf != nil {
		g.w.seq.Add(1)
		return int64(g.zipf.Uint64())
	}
	i := g.w.seq.Add(1) - 1
	if g.w.dist == distSequential {
		return i
	}
	return hashKey(i)
}

// readKey picks a key among those written: the key of a sequence number
// already claimed (0 when none is). A zipfian read is a zipfian draw, as
// cockroach's: its hot keys are written, a cold one may not be, and Verify
// records the reads that found no row.
func (g *keyGen) readKey() int64 {
	if g.zipf != nil {
		return int64(g.zipf.Uint64())
	}
	v := g.w.seq.Load()
	if v == 0 {
		return 0
	}
	i := g.rng.Int64N(v)
	if g.w.dist == distSequential {
		return i
	}
	return hashKey(i)
}

// writeKeys fills keys with distinct write keys, sorted so that two
// batches lock their rows in the same order. Zipfian keys repeat, and one
// upsert may not name a key twice on PostgreSQL: repeats are redrawn.
func (g *keyGen) writeKeys(keys []int64) {
	for i := range keys {
		k := g.writeKey()
		for g.zipf != nil && slices.Contains(keys[:i], k) {
			k = g.writeKey()
		}
		keys[i] = k
	}
	slices.Sort(keys)
}

// kvStatements returns the read (batch keys) and the upsert (batch rows)
// in dialect d.
func kvStatements(d engine.Dialect, batch int) (read, write string) {
	read = "SELECT k, v FROM " + KVTable + " WHERE k IN (" + d.Placeholders(batch) + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO " + KVTable + " (k, v) VALUES ")
	for i := range batch {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%s, %s)", d.Placeholder(2*i+1), d.Placeholder(2*i+2))
	}
	if d == engine.MySQL {
		b.WriteString(" ON DUPLICATE KEY UPDATE v = VALUES(v)")
	} else {
		b.WriteString(" ON CONFLICT (k) DO UPDATE SET v = excluded.v")
	}
	return read, b.String()
}

// NewClient returns client id bound to session s; its statements are
// prepared at the first Do.
func (w *KV) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
	if err != nil {
		return nil, fmt.Errorf("kv client %d: %w", id, err)
	}
	rng := workload.NewRand(w.seed, w.seeded, streamKV, uint64(id))
	c := &kvClient{w: w, conn: q.Conn(), d: q.Dialect(), rng: rng, keys: w.newKeyGen(rng),
		keyBuf: make([]int64, w.batch), args: make([]any, 2*w.batch), block: make([]byte, (w.batch*w.blockBytes+7)/8*8)}
	return c, nil
}

const streamKV = 0x6B76

// kvClient runs kv operations on its own connection, used by one
// goroutine.
type kvClient struct {
	w      *KV
	conn   *sql.Conn
	d      engine.Dialect
	rng    *rand.Rand
	keys   *keyGen
	stmts  [2]*sql.Stmt // opRead, opWrite
	keyBuf []int64
	args   []any
	block  []byte // the batch's values, end to end, rounded up to 8 bytes
}

func (c *kvClient) prepare(ctx context.Context) error {
	if c.stmts[opRead] != nil {
		return nil
	}
	read, write := kvStatements(c.d, c.w.batch)
	qs := []string{read, write}
	if i, err := sqlwork.PrepareAll(ctx, c.conn, c.stmts[:], qs); err != nil {
		return fmt.Errorf("kv: prepare %s: %w", qs[i], err)
	}
	return nil
}

// Close releases the prepared statements; the connection is the session's.
func (c *kvClient) Close() error {
	sqlwork.CloseAll(c.stmts[:])
	return nil
}

// Do reads with probability read_percent, else upserts.
func (c *kvClient) Do(ctx context.Context) (int, error) {
	op := opWrite
	if c.rng.IntN(100) < c.w.readPercent {
		op = opRead
	}
	if err := c.prepare(ctx); err != nil {
		return op, err
	}
	if op == opRead {
		return op, c.read(ctx)
	}
	return op, c.write(ctx)
}

func (c *kvClient) read(ctx context.Context) error {
	args := c.args[:c.w.batch]
	for i := range args {
		args[i] = c.keys.readKey()
	}
	var found int64
	err := c.w.retries.Do(ctx, func() error {
		var err error
		found, err = sqlwork.Drain(c.stmts[opRead].QueryContext(ctx, args...))
		return err
	})
	if err != nil {
		return fmt.Errorf("kv read of %v: %w", args, err)
	}
	c.w.reads.Add(1)
	if found == 0 {
		c.w.empty.Add(1)
	}
	return nil
}

func (c *kvClient) write(ctx context.Context) error {
	c.keys.writeKeys(c.keyBuf)
	for i := 0; i < len(c.block); i += 8 {
		binary.LittleEndian.PutUint64(c.block[i:], c.rng.Uint64())
	}
	for i, k := range c.keyBuf {
		c.args[2*i], c.args[2*i+1] = k, c.block[i*c.w.blockBytes:(i+1)*c.w.blockBytes]
	}
	n := int64(len(c.keyBuf))
	err := c.w.retries.Do(ctx, func() error {
		_, err := c.stmts[opWrite].ExecContext(ctx, c.args...)
		return err
	})
	if err != nil {
		c.w.failed.Add(n)
		return fmt.Errorf("kv upsert of keys %v: %w", c.keyBuf, err)
	}
	c.w.committed.Add(n)
	return nil
}
