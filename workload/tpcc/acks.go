package tpcc

// This file holds the record of acknowledged New-Order transactions a
// crash run keeps (workload.AckChecker, over package acklog): one slot per
// order (warehouse, district, order id), written once. A New-Order is
// acknowledged when its commit returns; after recovery every acknowledged
// order must be in the orders table. Consistency conditions 1-4 are then
// checked as after every run (Verify).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
)

var _ workload.AckChecker = (*Workload)(nil)

// present is the value an order's slot holds when the order is there.
var present = []byte{1}

// orderSlot packs an order's key: a warehouse below 2^27, a district below
// 16, an order id below 2^32.
func orderSlot(w, d, o int64) int64 { return w<<36 | d<<32 | o }

// TrackAcks starts the record of acknowledged New-Orders.
func (w *Workload) TrackAcks() { w.acks = acklog.New() }

// CheckAcks counts the acknowledged New-Orders missing from db. Its first
// read ends the recovery.
func (w *Workload) CheckAcks(ctx context.Context, db engine.DB) (workload.AckCheck, error) {
	out := workload.AckCheck{Unit: "new orders"}
	if w.acks == nil {
		return out, errors.New("tpcc: no acknowledged new orders were tracked (TrackAcks)")
	}
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, d engine.Dialect) error {
		read, err := conn.PrepareContext(ctx, rebind(d, "SELECT 1 FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"))
		if err != nil {
			return fmt.Errorf("prepare the order read: %w", err)
		}
		defer read.Close()
		var one int
		if err := read.QueryRowContext(ctx, 1, 1, 1).Scan(&one); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read order 1: %w", err)
		}
		out.First = time.Now()
		res, err := w.acks.Check(func(slot int64) ([]byte, error) {
			wid, did, oid := slot>>36, slot>>32&15, slot&(1<<32-1)
			err := read.QueryRowContext(ctx, wid, did, oid).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("read order %d of district %d of warehouse %d back: %w", oid, did, wid, err)
			}
			return present, nil
		})
		out.Checked, out.Lost, out.OldestLost = res.Checked, res.Lost, res.OldestLost
		return err
	})
	return out, err
}

// noteOrder begins the write of an order, in a crash run; endOrder ends it
// with its transaction.
func (c *Client) noteOrder(w, d, o int64) {
	if c.w.acks != nil {
		c.order, c.ordered = c.w.acks.Begin(orderSlot(w, d, o), present), true
	}
}

func (c *Client) endOrder(committed bool) {
	if c.ordered {
		c.w.acks.End(c.order, committed)
		c.ordered = false
	}
}
