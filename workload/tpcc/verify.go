package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/tierbench/tierbench/engine"
)

// districtKey names one district.
type districtKey struct{ w, d int64 }

// Verify checks the consistency conditions 1-4 of clause 3.3.2 after a run
// and that no acknowledged New-Order was lost: the districts' next order
// ids must have advanced at least by the New-Orders clients saw commit. It
// returns what held, with NOPM derived from the districts' next order ids
// over the time clients were busy (warmup included) and the rollback and
// retry counts, for the run's record.
func (w *Workload) Verify(ctx context.Context, db engine.DB) (string, error) {
	var (
		broken  []string
		sumNext int64
	)
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		var err error
		broken, sumNext, err = w.check(ctx, conn)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("tpcc verify: %w", err)
	}
	s := &w.stats
	newOrders := sumNext - w.districts()*(w.customers+1)
	committed := s.committed[opNewOrder].Load()
	if newOrders < committed {
		broken = append(broken, fmt.Sprintf("the districts' next order ids advanced by %d, but clients saw %d New-Orders commit: acknowledged orders were lost",
			newOrders, committed))
	}
	if len(broken) > 0 {
		const most = 5
		more := ""
		if len(broken) > most {
			more = fmt.Sprintf(" (and %d more)", len(broken)-most)
			broken = broken[:most]
		}
		return "", fmt.Errorf("tpcc consistency broken: %s%s", strings.Join(broken, "; "), more)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "TPC-C-like, not audited: consistency conditions 1-4 (clause 3.3.2) hold over %d warehouses and %d districts", w.warehouses, w.districts())
	busy := time.Duration(s.last.Load() - s.first.Load())
	if s.first.Load() == 0 || busy <= 0 {
		b.WriteString("; no transaction run")
		return b.String(), nil
	}
	fmt.Fprintf(&b, "; NOPM from d_next_o_id: %.0f (%d new orders in %s of client activity, warmup included)",
		float64(newOrders)/busy.Minutes(), newOrders, busy.Round(time.Millisecond))
	var total int64
	for i := range s.committed {
		total += s.committed[i].Load()
	}
	fmt.Fprintf(&b, "; committed: %d transactions, %d new_order", total, committed)
	rb := s.rollbacks.Load()
	fmt.Fprintf(&b, "; new_order rollbacks: %d (%.2f%%, ok outcomes in new_order's ops, not errors)", rb, 100*float64(rb)/float64(max(rb+committed, 1)))
	fmt.Fprintf(&b, "; %s", &s.retries)
	if sk := s.skipped.Load(); sk > 0 {
		fmt.Fprintf(&b, "; delivery skipped %d districts without a new order", sk)
	}
	return b.String(), nil
}

// Queries of the consistency check, each grouped per warehouse or
// district so one pass over each table serves all of them.
const (
	qWarehouseYTD = "SELECT w.w_id, w.w_ytd, s.ytd, CASE WHEN w.w_ytd = s.ytd THEN 1 ELSE 0 END FROM warehouse w " +
		"LEFT JOIN (SELECT d_w_id, SUM(d_ytd) AS ytd FROM district GROUP BY d_w_id) s ON s.d_w_id = w.w_id ORDER BY w.w_id"
	qDistricts = "SELECT d.d_w_id, d.d_id, d.d_next_o_id, o.mx, n.mx, n.mn, n.cnt FROM district d " +
		"LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS mx FROM orders GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id " +
		"LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS mx, MIN(no_o_id) AS mn, COUNT(*) AS cnt FROM new_order GROUP BY no_w_id, no_d_id) n " +
		"ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id ORDER BY d.d_w_id, d.d_id"
	qOrderLineCounts = "SELECT o_w_id, o_d_id, SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id"
	qOrderLines      = "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id"
)

// check runs the four conditions and returns each breach in words, and
// the sum of the districts' next order ids.
func (w *Workload) check(ctx context.Context, conn *sql.Conn) (broken []string, sumNext int64, err error) {
	// Condition 1: W_YTD = sum(D_YTD) per warehouse.
	warehouses := int64(0)
	err = eachRow(ctx, conn, qWarehouseYTD, func(rows *sql.Rows) error {
		var wid, equal int64
		var ytd string
		var sum sql.NullString
		if err := rows.Scan(&wid, &ytd, &sum, &equal); err != nil {
			return err
		}
		warehouses++
		if equal != 1 {
			broken = append(broken, fmt.Sprintf("condition 1: warehouse %d has W_YTD %s but its districts' D_YTD sum to %s", wid, ytd, sum.String))
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if warehouses != w.warehouses {
		broken = append(broken, fmt.Sprintf("%d warehouses, want %d", warehouses, w.warehouses))
	}
	// Conditions 2 and 3, per district.
	districts := int64(0)
	err = eachRow(ctx, conn, qDistricts, func(rows *sql.Rows) error {
		var k districtKey
		var next int64
		var maxO, maxNO, minNO, cntNO sql.NullInt64
		if err := rows.Scan(&k.w, &k.d, &next, &maxO, &maxNO, &minNO, &cntNO); err != nil {
			return err
		}
		districts++
		sumNext += next
		if !maxO.Valid || maxO.Int64 != next-1 {
			broken = append(broken, fmt.Sprintf("condition 2: district %d/%d has D_NEXT_O_ID %d but max(O_ID) %s", k.w, k.d, next, nullText(maxO)))
		}
		if maxNO.Valid && maxNO.Int64 != next-1 {
			broken = append(broken, fmt.Sprintf("condition 2: district %d/%d has D_NEXT_O_ID %d but max(NO_O_ID) %d", k.w, k.d, next, maxNO.Int64))
		}
		if cntNO.Valid && cntNO.Int64 > 0 && maxNO.Int64-minNO.Int64+1 != cntNO.Int64 {
			broken = append(broken, fmt.Sprintf("condition 3: district %d/%d has new orders %d..%d but %d rows of them",
				k.w, k.d, minNO.Int64, maxNO.Int64, cntNO.Int64))
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if districts != w.districts() {
		broken = append(broken, fmt.Sprintf("%d districts, want %d", districts, w.districts()))
	}
	// Condition 4: sum(O_OL_CNT) = count of order lines, per district.
	want := map[districtKey]int64{}
	err = eachRow(ctx, conn, qOrderLineCounts, func(rows *sql.Rows) error {
		var k districtKey
		var n int64
		if err := rows.Scan(&k.w, &k.d, &n); err != nil {
			return err
		}
		want[k] = n
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	err = eachRow(ctx, conn, qOrderLines, func(rows *sql.Rows) error {
		var k districtKey
		var n int64
		if err := rows.Scan(&k.w, &k.d, &n); err != nil {
			return err
		}
		if want[k] != n {
			broken = append(broken, fmt.Sprintf("condition 4: district %d/%d has sum(O_OL_CNT) %d but %d order lines", k.w, k.d, want[k], n))
		}
		delete(want, k)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	for k, n := range want {
		if n != 0 {
			broken = append(broken, fmt.Sprintf("condition 4: district %d/%d has sum(O_OL_CNT) %d but no order lines", k.w, k.d, n))
		}
	}
	return broken, sumNext, nil
}

func nullText(v sql.NullInt64) string {
	if !v.Valid {
		return "NULL (no orders)"
	}
	return fmt.Sprint(v.Int64)
}

// eachRow runs q and calls f on each row; the error names the query.
func eachRow(ctx context.Context, conn *sql.Conn, q string, f func(*sql.Rows) error) error {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// Payload bytes of one row of each table (clause 1.3's column sizes,
// variable ones at their mean), before any engine's row or page overhead.
const (
	stockBytes     = 4 + 4 + 2 + 10*24 + 4 + 2 + 2 + 38
	customerBytes  = 4 + 2 + 4 + 12 + 2 + 16 + 3*15 + 2 + 9 + 16 + 8 + 2 + 8 + 3 + 8 + 8 + 4 + 4 + 400
	orderLineBytes = 4 + 2 + 4 + 1 + 4 + 4 + 8 + 1 + 4 + 24
	orderBytes     = 4 + 2 + 4 + 4 + 8 + 1 + 1 + 1
	historyBytes   = 4 + 2 + 4 + 2 + 4 + 8 + 4 + 18
	itemBytes      = 4 + 4 + 19 + 4 + 38
)

// EstimatedBytes is a lower bound of the data set the load writes: per
// warehouse its stock, customers with history, and orders with about 10
// lines each; and the items. Study validation refuses a tier that cannot
// hold it.
func (w *Workload) EstimatedBytes() int64 {
	perDistrict := w.customers * (customerBytes + historyBytes + orderBytes + 10*orderLineBytes)
	return w.warehouses*(w.items*stockBytes+districtsPerWarehouse*perDistrict) + w.items*itemBytes
}
