package ycsb

// This file holds the record of acknowledged writes a crash run keeps
// (workload.AckChecker, over package acklog): one slot per record field,
// key number times the field count plus the field's index.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
)

// TrackAcks starts the record of acknowledged writes (workload.AckChecker):
// a crash run's clients keep it, on lanes too.
func (w *Workload) TrackAcks() { w.acks = acklog.New() }

// slot is field f of key number k.
func (w *Workload) slot(k int64, f int) int64 { return k*int64(w.cfg.fieldCount) + int64(f) }

// CheckAcks counts the record fields whose latest acknowledged write is
// missing from db (workload.AckChecker). Its first read, of the first
// record, ends the recovery whatever was written.
func (w *Workload) CheckAcks(ctx context.Context, db engine.DB) (workload.AckCheck, error) {
	out := workload.AckCheck{Unit: "record fields"}
	if w.acks == nil {
		return out, errors.New("ycsb: no acknowledged writes were tracked (TrackAcks)")
	}
	err := engine.WithSession(ctx, db, func(s engine.Session) error {
		fr, ok := s.(engine.FieldsReader)
		if !ok {
			return errors.New("the engine's records cannot be read back field by field (engine.FieldsReader)")
		}
		key := AppendKey(nil, 0, w.cfg.hashed)
		if _, err := fr.ReadFields(ctx, key); err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		out.First = time.Now()
		// Slots come in order, so a key's fields are read once.
		n := int64(w.cfg.fieldCount)
		lastKey := int64(-1)
		var fields [][]byte
		res, err := w.acks.Check(func(slot int64) ([]byte, error) {
			if k := slot / n; k != lastKey {
				key = AppendKey(key[:0], k, w.cfg.hashed)
				var err error
				if fields, err = fr.ReadFields(ctx, key); err != nil {
					return nil, fmt.Errorf("read %s back: %w", key, err)
				}
				lastKey = k
			}
			if f := int(slot % n); f < len(fields) {
				return fields[f], nil
			}
			return nil, nil
		})
		out.Checked, out.Lost, out.OldestLost = res.Checked, res.Lost, res.OldestLost
		return err
	})
	return out, err
}
