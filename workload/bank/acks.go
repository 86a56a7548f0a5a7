package bank

// This file holds the record of acknowledged transfers a crash run keeps
// (workload.AckChecker, over package acklog): one slot per account, whose
// value is the balance a transfer wrote. A transfer is acknowledged when
// its commit returns; after recovery every account must hold the balance
// of its latest acknowledged transfer, or of one whose outcome its client
// never learnt.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
)

var _ workload.AckChecker = (*Workload)(nil)

// TrackAcks starts the record of acknowledged transfers.
func (w *Workload) TrackAcks() { w.acks = acklog.New() }

// CheckAcks counts the accounts whose latest acknowledged balance is
// missing from db. Its first read ends the recovery.
func (w *Workload) CheckAcks(ctx context.Context, db engine.DB) (workload.AckCheck, error) {
	out := workload.AckCheck{Unit: "accounts"}
	if w.acks == nil {
		return out, errors.New("bank: no acknowledged transfers were tracked (TrackAcks)")
	}
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, d engine.Dialect) error {
		read, err := conn.PrepareContext(ctx, statements(d)[sBalance])
		if err != nil {
			return fmt.Errorf("prepare the balance read: %w", err)
		}
		defer read.Close()
		var bal int64
		if err := read.QueryRowContext(ctx, 1).Scan(&bal); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read account 1: %w", err)
		}
		out.First = time.Now()
		var buf []byte
		res, err := w.acks.Check(func(id int64) ([]byte, error) {
			err := read.QueryRowContext(ctx, id).Scan(&bal)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("read account %d back: %w", id, err)
			}
			buf = strconv.AppendInt(buf[:0], bal, 10)
			return buf, nil
		})
		out.Checked, out.Lost, out.OldestLost = res.Checked, res.Lost, res.OldestLost
		return err
	})
	return out, err
}

// tracked runs a transfer's transaction keeping the record: the balances
// its body writes are begun as it writes them, and end with the commit.
func (c *Client) tracked(ctx context.Context, txn func() error) error {
	c.pending = c.pending[:0]
	err := txn()
	for _, p := range c.pending {
		c.w.acks.End(p, err == nil)
	}
	return err
}

// noteWrite begins the write of balance bal to account id, in a crash run.
func (c *Client) noteWrite(id, bal int64) {
	if c.w.acks != nil {
		c.buf = strconv.AppendInt(c.buf[:0], bal, 10)
		c.pending = append(c.pending, c.w.acks.Begin(id, c.buf))
	}
}
