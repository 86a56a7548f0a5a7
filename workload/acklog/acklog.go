// Package acklog is the record of acknowledged writes a crash run keeps
// (workload.AckChecker), shared by the workloads that check them: for
// every slot written (a record field, an account), the writes whose value
// the slot may hold after a crash.
//
// The rule is linearizability's for one register. A write w is stale once
// an acknowledged write began after w ended: the engine applied w before
// it, so w's value may not be what survives. Every other write may be the
// last one applied, so its value is an acceptable survivor; a write whose
// outcome the client never learnt (an error, or the crash's cut) stays
// acceptable for ever, since the engine may apply it at any time before it
// dies. A slot holding none of its acceptable values lost its latest
// acknowledged write. Values are kept as hashes: two writes of a slot with
// equal values would hide a loss, never invent one.
package acklog

import (
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"time"
)

// shards spreads the record over locks, so clients writing different
// slots rarely wait for each other; a lock is held only around a map
// update, never across a wait, so clients on a lane keep it too.
const shards = 64

// unknownEnd is the end of a write whose outcome the client never learnt.
const unknownEnd = math.MaxInt64

// Log is the record. Its methods are safe for concurrent use.
type Log struct {
	base   time.Time
	seed   maphash.Seed
	shards [shards]shard
}

type shard struct {
	mu    sync.Mutex
	slots map[int64]*writes
	_     [40]byte // one shard per cache line
}

// writes is one slot's candidate values.
type writes struct {
	// latest is the start of the latest-starting acknowledged write, and
	// ackedAt when it was acknowledged; -1 before any.
	latest, ackedAt int64
	// inflight counts writes begun and not ended, whose indexes in ws
	// their clients hold: stale writes are dropped only when it is 0.
	inflight int
	ws       []write
}

type write struct {
	hash       uint64
	start, end int64 // nanoseconds from base
}

// New starts an empty record.
func New() *Log {
	l := &Log{base: time.Now(), seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].slots = map[int64]*writes{}
	}
	return l
}

// Pending is a write begun and not yet ended.
type Pending struct {
	slot  int64
	index int
}

func (l *Log) now() int64 { return int64(time.Since(l.base)) }

// Begin notes that slot is being written with value.
func (l *Log) Begin(slot int64, value []byte) Pending {
	h := maphash.Bytes(l.seed, value)
	sh := &l.shards[uint64(slot)%shards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	w := sh.slots[slot]
	if w == nil {
		w = &writes{latest: -1, ackedAt: -1}
		sh.slots[slot] = w
	}
	w.ws = append(w.ws, write{hash: h, start: l.now(), end: unknownEnd})
	w.inflight++
	return Pending{slot: slot, index: len(w.ws) - 1}
}

// End notes the outcome of a write: acknowledged (ok), or unknown.
func (l *Log) End(p Pending, ok bool) { l.end(p, ok, l.now()) }

// end is End at now, nanoseconds from base.
func (l *Log) end(p Pending, ok bool, now int64) {
	sh := &l.shards[uint64(p.slot)%shards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	w := sh.slots[p.slot]
	w.inflight--
	if ok {
		x := &w.ws[p.index]
		x.end = now
		if x.start > w.latest {
			w.latest, w.ackedAt = x.start, now
		}
	}
	if w.inflight > 0 {
		return
	}
	keep := w.ws[:0]
	for _, x := range w.ws {
		if x.end >= w.latest {
			keep = append(keep, x)
		}
	}
	w.ws = keep
}

// Add records a write another process made and reported once its
// writers were done (a cache engine's own client): begun at start, and
// acknowledged at end (ok) or of unknown outcome. Writes of a slot may
// come in any order; start must not be before New.
func (l *Log) Add(slot int64, value []byte, start, end time.Time, ok bool) {
	p := l.Begin(slot, value)
	sh := &l.shards[uint64(slot)%shards]
	sh.mu.Lock()
	sh.slots[slot].ws[p.index].start = int64(start.Sub(l.base))
	sh.mu.Unlock()
	l.end(p, ok, int64(end.Sub(l.base)))
}

// holds reports whether a slot holding a value of hash h holds a write
// that may be the last one applied.
func (w *writes) holds(h uint64) bool {
	for _, x := range w.ws {
		if x.hash == h && x.end >= w.latest {
			return true
		}
	}
	return false
}

// Holds reports whether slot may hold value after a crash (for tests and
// callers that check one slot).
func (l *Log) Holds(slot int64, value []byte) bool {
	w := l.shards[uint64(slot)%shards].slots[slot]
	return w != nil && w.holds(maphash.Bytes(l.seed, value))
}

// Slots are the slots with an acknowledged write, in order: those Check
// reads. Call it once the writers are done.
func (l *Log) Slots() []int64 {
	var slots []int64
	for i := range l.shards {
		for s, w := range l.shards[i].slots {
			if w.latest >= 0 {
				slots = append(slots, s)
			}
		}
	}
	slices.Sort(slots)
	return slots
}

// Result is what Check found.
type Result struct {
	// First is when the first read returned; zero with nothing to read.
	First time.Time
	// Checked and Lost count slots with an acknowledged write, and those
	// that lost their latest.
	Checked, Lost int64
	// OldestLost is when the oldest lost write was acknowledged; zero when
	// nothing was lost.
	OldestLost time.Time
}

// Check reads back, in slot order, every slot with an acknowledged write
// (read returns nil, nil for one that is gone) and counts those that lost
// their latest. Call it once the writers are done.
func (l *Log) Check(read func(slot int64) ([]byte, error)) (Result, error) {
	slots := l.Slots()
	var out Result
	oldest := int64(-1)
	for _, s := range slots {
		v, err := read(s)
		if err != nil {
			return out, err
		}
		if out.First.IsZero() {
			out.First = time.Now()
		}
		out.Checked++
		w := l.shards[uint64(s)%shards].slots[s]
		if v != nil && w.holds(maphash.Bytes(l.seed, v)) {
			continue
		}
		out.Lost++
		if oldest < 0 || w.ackedAt < oldest {
			oldest = w.ackedAt
		}
	}
	if oldest >= 0 {
		out.OldestLost = l.base.Add(time.Duration(oldest))
	}
	return out, nil
}
