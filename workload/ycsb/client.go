package ycsb

// This file holds a workload client: the op mix, key choice and the
// window of inserts a read may see.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
)

// chooser draws key numbers; one per client.
type chooser interface{ Next() int64 }

// NewClient returns client id bound to session s.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	rec, err := engine.NeedRecords(s)
	if err != nil {
		return nil, fmt.Errorf("ycsb client %d: %w", id, err)
	}
	w.zetaOnce.Do(w.computeZetas)
	c := &w.cfg
	rng := w.newRand(streamClient, uint64(id))
	cl := &Client{
		w:      w,
		rec:    rec,
		rng:    rng,
		fields: make([][]byte, c.fieldCount),
	}
	cl.key = cl.keyBuf[:0]
	cl.pool = w.newPool(rng)
	if c.writeAll {
		cl.upd = make([]engine.Field, c.fieldCount)
	} else {
		cl.upd = cl.updBuf[:]
	}
	switch c.requestDist {
	case distZipfian:
		cl.keys = NewScrambledZipfianZeta(rng, 0, w.keyItems, c.theta, w.keyZeta)
	case distUniform:
		// YCSB's uniform chooser covers the loaded records only, also
		// after inserts.
		cl.keys = NewUniform(rng, c.records)
	case distLatest:
		cl.keys = NewSkewedLatestZeta(rng, &w.acked, c.theta, w.latestN, w.keyZeta)
	}
	if c.scanLenDist == distZipfian {
		cl.scanZipf = NewZipfianZeta(rng, 1, c.maxScan, c.theta, w.scanZeta)
	}
	return cl, nil
}

// Client issues YCSB operations on one session. It is used by one goroutine
// and reuses all its buffers, so Do does not allocate.
type Client struct {
	w        *Workload
	rec      engine.Records
	rng      *rand.Rand
	keys     chooser
	scanZipf *Zipfian
	key      []byte
	pool     []byte
	fields   [][]byte
	upd      []engine.Field
	// keyBuf and updBuf back key and a one-field upd inside the client,
	// so what every operation writes lies between the client's own
	// cache-line pads and shares no line with another client's
	// (measured: two clients' 32-byte key buffers allocated side by side
	// cost a third of the second core).
	keyBuf [32]byte
	updBuf [1]engine.Field
	// keyNum is the number of the key nextKey chose; pending the writes
	// a crash run's record holds open (acks.go).
	keyNum  int64
	pending []acklog.Pending
	// inserted is an insert's fields as the record takes them, reused.
	inserted []engine.Field
	_        [64]byte
}

// OnLane reports whether the client can run on a lane (driver/lane): when
// its engine's records can (PostgreSQL's, on a connection taken from pgx).
func (c *Client) OnLane() bool {
	l, ok := c.rec.(interface{ OnLane() bool })
	return ok && l.OnLane()
}

// Do performs one operation chosen by proportion and returns its index in
// Workload.Ops().
func (c *Client) Do(ctx context.Context) (int, error) {
	w := c.w
	u := c.rng.Float64() * w.total
	op := len(w.cum) - 1
	for i, t := range w.cum {
		if u < t {
			op = i
			break
		}
	}
	var err error
	switch w.kinds[op] {
	case kindRead:
		err = c.read(ctx)
	case kindUpdate:
		err = c.update(ctx, c.nextKey())
	case kindInsert:
		err = c.insert(ctx)
	case kindScan:
		err = c.scan(ctx)
	case kindRMW:
		err = c.rmw(ctx)
	}
	return op, err
}

// nextKey chooses an existing key number and builds its key in c.key. Like
// YCSB it redraws while the number is at or past the acknowledged inserts,
// which happens when the zipfian key space was sized for future inserts.
func (c *Client) nextKey() []byte {
	for {
		k := c.keys.Next()
		if k < c.w.acked.Load() {
			c.keyNum = k
			c.key = AppendKey(c.key[:0], k, c.w.cfg.hashed)
			return c.key
		}
	}
}

func (c *Client) read(ctx context.Context) error {
	key := c.nextKey()
	// A missing record is not an error: YCSB reports it as NOT_FOUND.
	if _, err := c.rec.Read(ctx, key); err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	return nil
}

// update writes one random field (YCSB's fieldchooser) or, with
// writeallfields, every field, with fresh values.
func (c *Client) update(ctx context.Context, key []byte) error {
	if c.w.cfg.writeAll {
		for i := range c.upd {
			c.upd[i] = engine.Field{Index: i, Value: c.w.value(c.rng, c.pool)}
		}
	} else {
		c.upd[0] = engine.Field{Index: c.rng.IntN(c.w.cfg.fieldCount), Value: c.w.value(c.rng, c.pool)}
	}
	var err error
	if c.w.acks != nil {
		err = c.tracked(c.keyNum, c.upd, func() error { return c.rec.Update(ctx, key, c.upd) })
	} else {
		err = c.rec.Update(ctx, key, c.upd)
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", key, err)
	}
	return nil
}

// tracked does write, a write of fields of key number k, keeping the
// record of acknowledged writes.
func (c *Client) tracked(k int64, fields []engine.Field, write func() error) error {
	p := c.pending[:0]
	for _, f := range fields {
		p = append(p, c.w.acks.Begin(c.w.slot(k, f.Index), f.Value))
	}
	err := write()
	for _, pw := range p {
		c.w.acks.End(pw, err == nil)
	}
	c.pending = p
	return err
}

// insert writes the next key of the shared insert sequence and then
// acknowledges it, so readers see it only once it is written. As in YCSB,
// the key is acknowledged even if the insert failed, so one failure does not
// hide every later insert from readers.
func (c *Client) insert(ctx context.Context) error {
	w := c.w
	k := w.next.Add(1) - 1
	if err := w.waitWindow(ctx, k); err != nil {
		return fmt.Errorf("insert key number %d: %w", k, err)
	}
	c.key = AppendKey(c.key[:0], k, w.cfg.hashed)
	for i := range c.fields {
		c.fields[i] = w.value(c.rng, c.pool)
	}
	var err error
	if w.acks != nil {
		c.inserted = c.inserted[:0]
		for i, v := range c.fields {
			c.inserted = append(c.inserted, engine.Field{Index: i, Value: v})
		}
		err = c.tracked(k, c.inserted, func() error { return c.rec.Insert(ctx, c.key, c.fields) })
	} else {
		err = c.rec.Insert(ctx, c.key, c.fields)
	}
	w.acknowledge(k)
	if err != nil {
		return fmt.Errorf("insert %s: %w", c.key, err)
	}
	return nil
}

func (c *Client) scan(ctx context.Context) error {
	key := c.nextKey()
	var n int64
	if c.scanZipf != nil {
		n = c.scanZipf.Next()
	} else {
		n = 1 + c.rng.Int64N(c.w.cfg.maxScan)
	}
	if _, err := c.rec.Scan(ctx, key, int(n)); err != nil {
		return fmt.Errorf("scan %s (%d records): %w", key, n, err)
	}
	return nil
}

// rmw is YCSB F's read-modify-write: read a record, then update one field
// (all with writeallfields). As in YCSB, the write is skipped when the read
// did not find the record.
func (c *Client) rmw(ctx context.Context) error {
	key := c.nextKey()
	found, err := c.rec.Read(ctx, key)
	if err != nil {
		return fmt.Errorf("read-modify-write %s: read: %w", key, err)
	}
	if !found {
		return nil
	}
	if err := c.update(ctx, key); err != nil {
		return fmt.Errorf("read-modify-write: %w", err)
	}
	return nil
}

// waitWindow blocks while key number k is a full window ahead of the oldest
// unacknowledged insert, because its slot would still be in use. YCSB fails
// the run there; waiting is safe because every allocated key is acknowledged
// eventually, and with a window of 2^20 it practically never happens.
func (w *Workload) waitWindow(ctx context.Context, k int64) error {
	for k-w.acked.Load() >= ackWindow {
		if err := ctx.Err(); err != nil {
			return err
		}
		runtime.Gosched()
		time.Sleep(10 * time.Microsecond)
	}
	return nil
}

// acknowledge marks key number k as written and advances acked past every
// contiguous written key. It is lock free: the slot holds the key number
// itself, so a stale slot never matches, and acked only moves by CAS from
// the value whose slot was checked.
func (w *Workload) acknowledge(k int64) {
	w.window[k%ackWindow].Store(k)
	for {
		a := w.acked.Load()
		if w.window[a%ackWindow].Load() != a {
			return
		}
		w.acked.CompareAndSwap(a, a+1)
	}
}
