package ycsb

// This file holds the record of acknowledged writes a crash run keeps,
// and the check of it after recovery (workload.AckChecker).

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

// ackShards spreads the record over locks, so clients writing different
// keys rarely wait for each other.
const ackShards = 64

// unknownEnd is the end of a write whose outcome the client never learnt
// (an error, or the crash's cut): the engine may apply it at any time
// before it dies, so no later write makes it stale.
const unknownEnd = math.MaxInt64

// ackLog is, for every record field written while it tracks, the writes
// whose value the field may hold after a crash: linearizability's rule for
// one register. A write w is stale once an acknowledged write began after
// w ended: the engine applied w before it, so w's value may not be what
// survives. Every other write may be the last one applied, so its value is
// an acceptable survivor; a field holding none of them lost its latest
// acknowledged write. Values are kept as hashes; two writes of the same
// field with equal values (1 in about 10^5 for YCSB's random slices of a
// pool) would hide a loss, never invent one.
type ackLog struct {
	base   time.Time
	fields int64
	seed   maphash.Seed
	shards [ackShards]ackShard
}

type ackShard struct {
	mu    sync.Mutex
	slots map[int64]*fieldWrites
	_     [40]byte // one shard per cache line
}

// fieldWrites is one field's candidate values.
type fieldWrites struct {
	// latest is the start of the latest-starting acknowledged write, and
	// ackedAt when it was acknowledged; -1 before any.
	latest, ackedAt int64
	// inflight counts writes begun and not ended, whose indexes in writes
	// their clients hold: stale writes are dropped only when it is 0.
	inflight int
	writes   []fieldWrite
}

type fieldWrite struct {
	hash       uint64
	start, end int64 // nanoseconds from base
}

func newAckLog(fields int) *ackLog {
	l := &ackLog{base: time.Now(), fields: int64(fields), seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].slots = map[int64]*fieldWrites{}
	}
	return l
}

// pendingWrite is a write begun and not yet ended.
type pendingWrite struct {
	slot  int64
	index int
}

// now is nanoseconds from base.
func (l *ackLog) now() int64 { return int64(time.Since(l.base)) }

// begin notes that field of key number k is being written with value.
func (l *ackLog) begin(k int64, field int, value []byte) pendingWrite {
	slot := k*l.fields + int64(field)
	h := maphash.Bytes(l.seed, value)
	sh := &l.shards[slot%ackShards]
	sh.mu.Lock()
	fw := sh.slots[slot]
	if fw == nil {
		fw = &fieldWrites{latest: -1, ackedAt: -1}
		sh.slots[slot] = fw
	}
	fw.writes = append(fw.writes, fieldWrite{hash: h, start: l.now(), end: unknownEnd})
	fw.inflight++
	p := pendingWrite{slot: slot, index: len(fw.writes) - 1}
	sh.mu.Unlock()
	return p
}

// end notes the outcome of a write: acknowledged (ok), or unknown, when
// its end stays unknownEnd.
func (l *ackLog) end(p pendingWrite, ok bool) {
	sh := &l.shards[p.slot%ackShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	fw := sh.slots[p.slot]
	fw.inflight--
	if ok {
		now := l.now()
		w := &fw.writes[p.index]
		w.end = now
		if w.start > fw.latest {
			fw.latest, fw.ackedAt = w.start, now
		}
	}
	if fw.inflight > 0 {
		return
	}
	keep := fw.writes[:0]
	for _, w := range fw.writes {
		if w.end >= fw.latest {
			keep = append(keep, w)
		}
	}
	fw.writes = keep
}

// check reads every tracked field back from db and counts the fields whose
// latest acknowledged write is missing.
func (l *ackLog) check(ctx context.Context, db engine.DB, hashed bool) (workload.AckCheck, error) {
	out := workload.AckCheck{Unit: "record fields"}
	byKey := map[int64][]int64{} // key number -> its tracked fields' slots
	for i := range l.shards {
		for slot, fw := range l.shards[i].slots {
			if fw.latest >= 0 {
				byKey[slot/l.fields] = append(byKey[slot/l.fields], slot)
			}
		}
	}
	oldest := int64(-1)
	err := engine.WithSession(ctx, db, func(s engine.Session) error {
		fr, ok := s.(engine.FieldsReader)
		if !ok {
			return errors.New("the engine's records cannot be read back field by field (engine.FieldsReader)")
		}
		// The first read ends the recovery, whatever was written.
		key := AppendKey(nil, 0, hashed)
		if _, err := fr.ReadFields(ctx, key); err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		out.First = time.Now()
		for k, slots := range byKey {
			key = AppendKey(key[:0], k, hashed)
			fields, err := fr.ReadFields(ctx, key)
			if err != nil {
				return fmt.Errorf("read %s back: %w", key, err)
			}
			for _, slot := range slots {
				fw := l.shards[slot%ackShards].slots[slot]
				out.Checked++
				field := int(slot % l.fields)
				if field < len(fields) && fw.holds(maphash.Bytes(l.seed, fields[field])) {
					continue
				}
				out.Lost++
				if oldest < 0 || fw.ackedAt < oldest {
					oldest = fw.ackedAt
				}
			}
		}
		return nil
	})
	if oldest >= 0 {
		out.OldestLost = l.base.Add(time.Duration(oldest))
	}
	return out, err
}

// TrackAcks starts the record of acknowledged writes (workload.AckChecker):
// a crash run's clients keep it. Its locks are held only around map
// updates, never across a wait, so clients on a lane (driver/lane) keep it
// too.
func (w *Workload) TrackAcks() { w.acks = newAckLog(w.cfg.fieldCount) }

// CheckAcks counts the record fields whose latest acknowledged write is
// missing from db (workload.AckChecker).
func (w *Workload) CheckAcks(ctx context.Context, db engine.DB) (workload.AckCheck, error) {
	if w.acks == nil {
		return workload.AckCheck{}, errors.New("ycsb: no acknowledged writes were tracked (TrackAcks)")
	}
	return w.acks.check(ctx, db, w.cfg.hashed)
}

// holds reports whether a field holding value hash h holds a write that
// may be the last one applied.
func (fw *fieldWrites) holds(h uint64) bool {
	for _, w := range fw.writes {
		if w.hash == h && w.end >= fw.latest {
			return true
		}
	}
	return false
}
