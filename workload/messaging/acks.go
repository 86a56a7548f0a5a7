package messaging

// This file holds the record of acknowledged inbound messages a crash run
// keeps (workload.AckChecker, over package acklog): one slot per inbound
// message (service, sequence number), whose value is its status. Storing
// it writes "received" and marking it done writes "done", each
// acknowledged when its commit returns; after recovery an inbound message
// must hold the status of its latest acknowledged step, or of a step whose
// outcome its client never learnt. Outbound rows are not recorded: a done
// inbound already needs every route sent (Verify).

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

// Inbound statuses, as the record keeps them.
var (
	statusReceived = []byte("received")
	statusDone     = []byte("done")
)

// TrackAcks starts the record of acknowledged inbound messages.
func (w *Workload) TrackAcks() { w.acks = acklog.New() }

// inboundSlot is the record's slot of an inbound message.
func inboundSlot(service int, seq int64) int64 { return int64(service)<<40 | seq }

// qStatus reads one inbound message's status.
func qStatus(d engine.Dialect) string {
	return "SELECT status FROM " + InboundTable + " WHERE service = " + d.Placeholder(1) + " AND seq = " + d.Placeholder(2)
}

// CheckAcks counts the inbound messages whose latest acknowledged status
// is missing from db. Its first read ends the recovery.
func (w *Workload) CheckAcks(ctx context.Context, db engine.DB) (workload.AckCheck, error) {
	out := workload.AckCheck{Unit: "inbound messages"}
	if w.acks == nil {
		return out, errors.New("messaging: no acknowledged messages were tracked (TrackAcks)")
	}
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, d engine.Dialect) error {
		read, err := conn.PrepareContext(ctx, qStatus(d))
		if err != nil {
			return fmt.Errorf("prepare the status read: %w", err)
		}
		defer read.Close()
		var status []byte
		if err := read.QueryRowContext(ctx, 0, 0).Scan(&status); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read an inbound message: %w", err)
		}
		out.First = time.Now()
		res, err := w.acks.Check(func(slot int64) ([]byte, error) {
			err := read.QueryRowContext(ctx, slot>>40, slot&(1<<40-1)).Scan(&status)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("read inbound message %d/%d back: %w", slot>>40, slot&(1<<40-1), err)
			}
			return status, nil
		})
		out.Checked, out.Lost, out.OldestLost = res.Checked, res.Lost, res.OldestLost
		return err
	})
	return out, err
}

// tracked runs step, which writes the inbound message's status, keeping
// the record in a crash run.
func (c *Client) tracked(status []byte, step func() error) error {
	if c.w.acks == nil {
		return step()
	}
	p := c.w.acks.Begin(inboundSlot(c.svc.id, c.seq), status)
	err := step()
	c.w.acks.End(p, err == nil)
	return err
}
