package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// TestDeadlocksKeepConsistency forces deadlocks at high contention and
// checks that the retried transactions leave the data as the
// specification's consistency conditions want, and the clients' counts
// as the data says. One shrunk warehouse (100 items, 30 customers per
// district) serves 16 clients that run the mix, 4 of them every other
// transaction a Payment or a New-Order with its locks taken in the
// reverse order (the customer before the district and the warehouse; the
// stock before the district), which deadlock with the mix's. Every transaction's outcome is known
// (nothing is cancelled), so the counts must match exactly: a retry that
// replayed part of a transaction, or counted an attempt that was rolled
// back, shows as a difference.
func TestDeadlocksKeepConsistency(t *testing.T) {
	const (
		clients    = 16
		reversedOf = 4 // every 4th client takes its locks in reverse, every other transaction
		ops        = 40
	)
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		w := newW(t, map[string]string{pSeed: "59"})
		w.items, w.customers = 100, 30
		if _, err := w.Load(ctx, db, 2); err != nil {
			t.Fatal(err)
		}
		before := ledgerOf(t, db)

		var (
			mu     sync.Mutex
			errs   []error
			gaveUp int
			wg     sync.WaitGroup
		)
		for i := range clients {
			s, err := db.NewSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			cl, err := w.NewClient(i, s)
			if err != nil {
				t.Fatal(err)
			}
			c := cl.(*Client)
			defer c.Close()
			// PostgreSQL looks for deadlocks after deadlock_timeout (1 s):
			// shorter, so the test makes many in little time. Only a
			// superuser may set it; without, the test is slower, not wrong.
			if name == "postgres" {
				if _, err := c.conn.ExecContext(ctx, "SET deadlock_timeout = '20ms'"); err != nil {
					t.Logf("deadlock_timeout left at its default: %v", err)
				}
			}
			reversed := i%reversedOf == reversedOf-1
			wg.Go(func() {
				for n := range ops {
					var err error
					if reversed && n%2 == 0 {
						err = c.reversed(ctx, n%4 == 0)
					} else {
						_, err = c.Do(ctx)
					}
					// One given up after MaxRetries deadlocks is rolled
					// back and not counted: an outcome, not a failure.
					if err != nil {
						mu.Lock()
						if errors.Is(err, sqlwork.ErrGaveUp) {
							gaveUp++
						} else {
							errs = append(errs, err)
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("%d of %d transactions failed; first: %v", len(errs), clients*ops, errs[0])
		}
		deadlocks := w.stats.retries.Deadlocks()
		t.Logf("%s: %s; %d transactions given up", name, &w.stats.retries, gaveUp)
		if deadlocks == 0 {
			t.Fatalf("no deadlock was forced: %s", &w.stats.retries)
		}
		if checked, err := w.Verify(ctx, db); err != nil {
			t.Errorf("after %d deadlocks: %v", deadlocks, err)
		} else {
			t.Logf("%s: %s", name, checked)
		}
		for _, c := range conditions {
			if n := enginetest.QueryInt(t, db, c.query); n != 0 {
				t.Errorf("after %d deadlocks, condition %s: %d rows break it", deadlocks, c.name, n)
			}
		}
		after := ledgerOf(t, db)
		// Conditions 8 and 9 as the load leaves them for shrunk customers:
		// each YTD less its payments' history stays what it was.
		if !maps.Equal(before.ytdLessHistory, after.ytdLessHistory) {
			t.Errorf("after %d deadlocks, conditions 8-9: W_YTD and D_YTD less their payments' H_AMOUNT were %v, are %v",
				deadlocks, before.ytdLessHistory, after.ytdLessHistory)
		}
		if got, want := after.nextOrders-before.nextOrders, w.stats.committed[opNewOrder].Load(); got != want {
			t.Errorf("after %d deadlocks: the districts' next order ids advanced by %d, clients saw %d New-Orders commit", deadlocks, got, want)
		}
		if got, want := after.history-before.history, w.stats.committed[opPayment].Load(); got != want {
			t.Errorf("after %d deadlocks: %d history rows were added, clients saw %d Payments commit", deadlocks, got, want)
		}
		// Each committed Delivery delivered or skipped every district.
		delivered, skipped := after.delivered-before.delivered, w.stats.skipped.Load()
		if got, want := delivered+skipped, districtsPerWarehouse*w.stats.committed[opDelivery].Load(); got != want {
			t.Errorf("after %d deadlocks: %d orders delivered and %d districts skipped, want %d in all from %d Deliveries",
				deadlocks, delivered, skipped, want, w.stats.committed[opDelivery].Load())
		}
	})
}

// reversed runs a Payment (payment) or a New-Order with its locks taken
// in the reverse of the mix's order, retried and counted as the mix's:
// the same changes, so every consistency condition holds after it.
func (c *Client) reversed(ctx context.Context, payment bool) error {
	if err := c.prepare(ctx); err != nil {
		return err
	}
	if payment {
		in := c.paymentInput()
		in.cust.last, in.cust.id = "", uniform(c.rng, 1, c.w.customers)
		return c.retry(ctx, opPayment, func(ctx context.Context) (string, error) { return c.reversedPayment(ctx, in) },
			func() string { return fmt.Sprintf("reversed payment %+v", in) })
	}
	in := c.newOrderInput()
	return c.retry(ctx, opNewOrder, func(ctx context.Context) (string, error) {
		if step, err := c.lockStock(ctx, in); err != nil {
			return step, err
		}
		return c.newOrder(ctx, in)
	}, func() string { return fmt.Sprintf("reversed new_order %+v", in) })
}

// reversedPayment is Payment's changes made customer first, then the
// district, then the warehouse.
func (c *Client) reversedPayment(ctx context.Context, in paymentInput) (string, error) {
	amount := cents(in.amount)
	if _, err := c.stmts[sCustomerPay].ExecContext(ctx, amount, amount, in.cust.w, in.cust.d, in.cust.id); err != nil {
		return "update customer", err
	}
	if _, err := c.stmts[sDistrictYTD].ExecContext(ctx, amount, in.w, in.d); err != nil {
		return "update district", err
	}
	if _, err := c.stmts[sWarehouseYTD].ExecContext(ctx, amount, in.w); err != nil {
		return "update warehouse", err
	}
	if _, err := c.stmts[sInsertHistory].ExecContext(ctx, in.cust.id, in.cust.d, in.cust.w, in.d, in.w, amount, "reversed"); err != nil {
		return "insert history", err
	}
	return "", nil
}

// lockStock locks a New-Order's stock rows before its district, the
// reverse of New-Order's own order.
func (c *Client) lockStock(ctx context.Context, in newOrderInput) (string, error) {
	var items []any
	for _, l := range in.lines {
		if l.supplyW == in.w && l.item <= c.w.items && !containsID(items, l.item) {
			items = append(items, l.item)
		}
	}
	if len(items) == 0 {
		return "", nil
	}
	st, err := c.stmtFor(ctx, stockQuery(len(items)))
	if err != nil {
		return "lock stock", err
	}
	rows, err := st.QueryContext(ctx, append([]any{in.w}, items...)...)
	if err != nil {
		return "lock stock", err
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return "lock stock", err
	}
	return "lock stock", rows.Err()
}

// conditions are the specification's consistency conditions 5-7, 10 and
// 12 (clause 3.3.2) that hold for shrunk customers as for the
// specification's: each query counts the rows that break one. (1-4 are
// Verify's; 8 and 9 are checked as differences; 11 holds only after the
// load.)
var conditions = []struct{ name, query string }{
	{"5 (O_CARRIER_ID is null exactly for the orders with a new-order row)",
		"SELECT COUNT(*) FROM orders o LEFT JOIN new_order n ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id " +
			"WHERE (o.o_carrier_id IS NULL AND n.no_o_id IS NULL) OR (o.o_carrier_id IS NOT NULL AND n.no_o_id IS NOT NULL)"},
	{"5 (no new-order row without its order)",
		"SELECT COUNT(*) FROM new_order n LEFT JOIN orders o ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id WHERE o.o_id IS NULL"},
	{"6 (O_OL_CNT is the order's number of lines)",
		"SELECT COUNT(*) FROM orders o LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l " +
			"ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id WHERE COALESCE(l.n, 0) <> o.o_ol_cnt"},
	{"7 (OL_DELIVERY_D is null exactly when its order's O_CARRIER_ID is)",
		"SELECT COUNT(*) FROM order_line l JOIN orders o ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id " +
			"WHERE (l.ol_delivery_d IS NULL AND o.o_carrier_id IS NOT NULL) OR (l.ol_delivery_d IS NOT NULL AND o.o_carrier_id IS NULL)"},
	{"10 (C_BALANCE = delivered OL_AMOUNT - H_AMOUNT)", customerSums + "WHERE c.c_balance <> COALESCE(d.s, 0) - COALESCE(h.s, 0)"},
	{"12 (C_BALANCE + C_YTD_PAYMENT = delivered OL_AMOUNT)", customerSums + "WHERE c.c_balance + c.c_ytd_payment <> COALESCE(d.s, 0)"},
}

// customerSums joins each customer with the sum of its delivered order
// lines (d.s) and of its payments (h.s).
const customerSums = "SELECT COUNT(*) FROM customer c " +
	"LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) AS s FROM orders JOIN order_line " +
	"ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL GROUP BY o_w_id, o_d_id, o_c_id) d " +
	"ON d.o_w_id = c.c_w_id AND d.o_d_id = c.c_d_id AND d.o_c_id = c.c_id " +
	"LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) AS s FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id) h " +
	"ON h.h_c_w_id = c.c_w_id AND h.h_c_d_id = c.c_d_id AND h.h_c_id = c.c_id "

// ledger is what the test compares before and after the clients run.
type ledger struct {
	// ytdLessHistory is W_YTD and each D_YTD less the H_AMOUNT of the
	// payments to it, as text, by "w" or "w/d".
	ytdLessHistory map[string]string
	nextOrders     int64 // sum of D_NEXT_O_ID
	history        int64 // history rows
	delivered      int64 // sum of C_DELIVERY_CNT
}

func ledgerOf(t *testing.T, db engine.DB) ledger {
	t.Helper()
	l := ledger{ytdLessHistory: map[string]string{},
		nextOrders: enginetest.QueryInt(t, db, "SELECT SUM(d_next_o_id) FROM district"),
		history:    count(t, db, tHistory),
		delivered:  enginetest.QueryInt(t, db, "SELECT SUM(c_delivery_cnt) FROM customer")}
	ctx := context.Background()
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		for _, q := range []string{
			"SELECT CONCAT(w_id, ''), w_ytd - COALESCE((SELECT SUM(h_amount) FROM history WHERE h_w_id = w_id), 0) FROM warehouse",
			"SELECT CONCAT(d_w_id, '/', d_id), d_ytd - COALESCE((SELECT SUM(h_amount) FROM history WHERE h_w_id = d_w_id AND h_d_id = d_id), 0) FROM district",
		} {
			if err := eachRow(ctx, conn, q, func(rows *sql.Rows) error {
				var k, v string
				if err := rows.Scan(&k, &v); err != nil {
					return err
				}
				l.ytdLessHistory[k] = v
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
