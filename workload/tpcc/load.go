package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// Load batching: items and stock load in chunks of chunkRows rows, one
// transaction each; customers and orders one district per transaction. A
// statement carries stmtRows rows (order lines: the lines of stmtOrders
// orders), far below any packet limit.
const (
	chunkRows  = 10000
	stmtRows   = 500
	stmtOrders = 100
)

// loadTask is one transaction-sized piece of the load, done by whichever
// loader claims it; it returns the rows it inserted.
type loadTask func(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte) (_ []byte, rows int64, err error)

// tasks lists the load's pieces, the largest (a district's orders and
// lines) first so loaders finish together.
func (w *Workload) tasks() []loadTask {
	var out []loadTask
	for wid := int64(1); wid <= w.warehouses; wid++ {
		for did := int64(1); did <= districtsPerWarehouse; did++ {
			out = append(out, func(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte) ([]byte, int64, error) {
				return w.loadOrders(ctx, conn, r, buf, wid, did)
			})
		}
	}
	for wid := int64(1); wid <= w.warehouses; wid++ {
		for did := int64(1); did <= districtsPerWarehouse; did++ {
			out = append(out, func(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte) ([]byte, int64, error) {
				return w.loadCustomers(ctx, conn, r, buf, wid, did)
			})
		}
		for first := int64(1); first <= w.items; first += chunkRows {
			out = append(out, func(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte) ([]byte, int64, error) {
				return w.loadStock(ctx, conn, r, buf, wid, first, min(chunkRows, w.items-first+1))
			})
		}
		out = append(out, func(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte) ([]byte, int64, error) {
			return w.loadWarehouse(ctx, conn, r, buf, wid)
		})
	}
	for first := int64(1); first <= w.items; first += chunkRows {
		out = append(out, func(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte) ([]byte, int64, error) {
			return w.loadItems(ctx, conn, r, buf, first, min(chunkRows, w.items-first+1))
		})
	}
	return out
}

// Load drops and creates the nine tables, fills them as clause 4.3.3.1
// says with loaders parallel sessions, then analyzes them. Records counts
// every row inserted. Each piece draws from its own random stream, so a
// seeded load is the same whatever the loaders' order.
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	var d engine.Dialect
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, dialect engine.Dialect) error {
		d = dialect
		return sqlwork.ExecAll(ctx, conn, append(dropTables(), createTables(d)...)...)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("tpcc load: create tables: %w", err)
	}
	tasks := w.tasks()
	var next, rows atomic.Int64
	err = sqlwork.LoadChunks(ctx, "tpcc", db, loaders, func(ctx context.Context, conn *sql.Conn, buf []byte) ([]byte, bool, error) {
		i := next.Add(1) - 1
		if i >= int64(len(tasks)) {
			return buf, true, nil
		}
		buf, n, err := tasks[i](ctx, conn, w.newRand(streamLoad, uint64(i)), buf)
		rows.Add(n)
		return buf, false, err
	})
	stats := workload.LoadStats{Records: rows.Load()}
	if err == nil {
		err = engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
			return sqlwork.Analyze(ctx, conn, d, tables...)
		})
		if err != nil {
			err = fmt.Errorf("tpcc load: %w", err)
		}
	}
	stats.Duration = time.Since(start)
	return stats, err
}

// Appenders of SQL literals.
func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

func appendSep(b []byte) []byte { return append(b, ", "...) }

// appendTuple opens a row's tuple with its leading integers: "(1, 2, 3".
func appendTuple(b []byte, vs ...int64) []byte {
	b = append(b, '(')
	for i, v := range vs {
		if i > 0 {
			b = appendSep(b)
		}
		b = appendInt(b, v)
	}
	return b
}

// quoted appends ', what f appends, and ', for strings of letters and
// digits that need no escaping.
func quoted(b []byte, f func([]byte) []byte) []byte {
	b = append(b, '\'')
	b = f(b)
	return append(b, '\'')
}

func appendAStr(b []byte, r *rand.Rand, lo, hi int64) []byte {
	return quoted(b, func(b []byte) []byte { return appendAString(b, r, lo, hi) })
}

// appendAddress appends street 1 and 2, city, state and zip (clause
// 4.3.2.7: a zip is 4 random digits and "11111").
func appendAddress(b []byte, r *rand.Rand) []byte {
	b = appendAStr(b, r, 10, 20)
	b = appendSep(b)
	b = appendAStr(b, r, 10, 20)
	b = appendSep(b)
	b = appendAStr(b, r, 10, 20)
	b = appendSep(b)
	b = quoted(b, func(b []byte) []byte {
		return append(b, byte('A'+r.IntN(26)), byte('A'+r.IntN(26)))
	})
	b = appendSep(b)
	return quoted(b, func(b []byte) []byte { return append(appendNString(b, r, 4), "11111"...) })
}

// appendPlace appends what a warehouse and a district have alike: name,
// address and tax (0-20%).
func appendPlace(b []byte, r *rand.Rand) []byte {
	b = appendAStr(b, r, 6, 10)
	b = appendSep(b)
	b = appendAddress(b, r)
	b = appendSep(b)
	return appendFixed(b, uniform(r, 0, 2000), 4)
}

// insert runs one multi-row INSERT chunk (sqlwork.InsertChunk) of rows
// first..first+n-1 of table, perStmt per statement.
func insert(ctx context.Context, conn *sql.Conn, buf []byte, table, columns string, first, n, perStmt int64,
	row func(b []byte, i int64) []byte) ([]byte, error) {
	return sqlwork.InsertChunk(ctx, conn, buf, table, first, n, perStmt, func(b []byte, first, n int64) []byte {
		return sqlwork.AppendInsert(b, table, columns, first, n, row)
	})
}

func (w *Workload) loadItems(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte, first, n int64) ([]byte, int64, error) {
	buf, err := insert(ctx, conn, buf, tItem, "i_id, i_im_id, i_name, i_price, i_data", first, n, stmtRows, func(b []byte, i int64) []byte {
		b = appendTuple(b, i, uniform(r, 1, 10000))
		b = appendSep(b)
		b = appendAStr(b, r, 14, 24)
		b = appendSep(b)
		b = appendFixed(b, uniform(r, 100, 10000), 2)
		b = appendSep(b)
		b = quoted(b, func(b []byte) []byte { return appendData(b, r) })
		return append(b, ')')
	})
	return buf, n, err
}

// loadWarehouse inserts warehouse wid and its districts: W_YTD 300,000.00,
// D_YTD 30,000.00 each (so condition 1 holds), D_NEXT_O_ID after the
// initial orders.
func (w *Workload) loadWarehouse(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte, wid int64) ([]byte, int64, error) {
	buf, err := insert(ctx, conn, buf, tWarehouse, "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd", wid, 1, 1,
		func(b []byte, i int64) []byte {
			b = appendTuple(b, i)
			b = appendSep(b)
			b = appendPlace(b, r)
			return append(b, ", 300000.00)"...)
		})
	if err != nil {
		return buf, 0, err
	}
	buf, err = insert(ctx, conn, buf, tDistrict, "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id",
		1, districtsPerWarehouse, districtsPerWarehouse, func(b []byte, i int64) []byte {
			b = appendTuple(b, i, wid)
			b = appendSep(b)
			b = appendPlace(b, r)
			b = append(b, ", 30000.00, "...)
			b = appendInt(b, w.customers+1)
			return append(b, ')')
		})
	return buf, 1 + districtsPerWarehouse, err
}

func (w *Workload) loadStock(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte, wid, first, n int64) ([]byte, int64, error) {
	cols := "s_i_id, s_w_id, s_quantity"
	for i := 1; i <= districtsPerWarehouse; i++ {
		cols += ", " + distColumn(i)
	}
	cols += ", s_ytd, s_order_cnt, s_remote_cnt, s_data"
	buf, err := insert(ctx, conn, buf, tStock, cols, first, n, stmtRows, func(b []byte, i int64) []byte {
		b = appendTuple(b, i, wid, uniform(r, 10, 100))
		for range districtsPerWarehouse {
			b = appendSep(b)
			b = appendAStr(b, r, 24, 24)
		}
		b = append(b, ", 0, 0, 0, "...)
		b = quoted(b, func(b []byte) []byte { return appendData(b, r) })
		return append(b, ')')
	})
	return buf, n, err
}

// loadCustomers inserts district did's customers and their history rows.
// Customers 1-1000 are named by their number minus one, the others by
// NURand(255, 0, 999) with the load's C (clause 4.3.3.1); 10% have bad
// credit.
func (w *Workload) loadCustomers(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte, wid, did int64) ([]byte, int64, error) {
	cols := "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, " +
		"c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data"
	buf, err := insert(ctx, conn, buf, tCustomer, cols, 1, w.customers, stmtRows, func(b []byte, i int64) []byte {
		b = appendTuple(b, i, did, wid)
		b = appendSep(b)
		b = appendAStr(b, r, 8, 16)
		b = append(b, ", 'OE', "...)
		name := i - 1
		if i > w.lastNames() {
			name = nurand(r, aCLast, w.cLastLoad, 0, w.lastNames()-1)
		}
		b = quoted(b, func(b []byte) []byte { return appendLastName(b, name) })
		b = appendSep(b)
		b = appendAddress(b, r)
		b = appendSep(b)
		b = quoted(b, func(b []byte) []byte { return appendNString(b, r, 16) })
		b = append(b, ", CURRENT_TIMESTAMP, "...)
		if r.IntN(10) == 0 {
			b = append(b, "'BC'"...)
		} else {
			b = append(b, "'GC'"...)
		}
		b = append(b, ", 50000.00, "...)
		b = appendFixed(b, uniform(r, 0, 5000), 4)
		b = append(b, ", -10.00, 10.00, 1, 0, "...)
		b = appendAStr(b, r, 300, 500)
		return append(b, ')')
	})
	if err != nil {
		return buf, 0, err
	}
	buf, err = insert(ctx, conn, buf, tHistory, "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data", 1, w.customers, stmtRows,
		func(b []byte, i int64) []byte {
			b = appendTuple(b, i, did, wid, did, wid)
			b = append(b, ", CURRENT_TIMESTAMP, 10.00, "...)
			b = appendAStr(b, r, 12, 24)
			return append(b, ')')
		})
	return buf, 2 * w.customers, err
}

// loadOrders inserts district did's initial orders (customers in a random
// permutation), their 5-15 lines each, and the last 900 as new orders:
// orders before 2101 are delivered (carrier, delivery date, amount 0).
func (w *Workload) loadOrders(ctx context.Context, conn *sql.Conn, r *rand.Rand, buf []byte, wid, did int64) ([]byte, int64, error) {
	n := w.customers
	perm := make([]int64, n)
	for i := range perm {
		perm[i] = int64(i) + 1
	}
	r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	olCnt := make([]int64, n)
	lines := int64(0)
	for i := range olCnt {
		olCnt[i] = uniform(r, 5, 15)
		lines += olCnt[i]
	}
	delivered := func(oid int64) bool { return oid < w.firstNewOrder() }
	buf, err := insert(ctx, conn, buf, tOrders, "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local", 1, n, stmtRows,
		func(b []byte, i int64) []byte {
			b = appendTuple(b, i, did, wid, perm[i-1])
			b = append(b, ", CURRENT_TIMESTAMP, "...)
			if delivered(i) {
				b = appendInt(b, uniform(r, 1, 10))
			} else {
				b = append(b, "NULL"...)
			}
			b = appendSep(b)
			b = appendInt(b, olCnt[i-1])
			return append(b, ", 1)"...)
		})
	if err != nil {
		return buf, 0, err
	}
	cols := "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info"
	buf, err = insert(ctx, conn, buf, tOrderLine, cols, 1, n, stmtOrders, func(b []byte, oid int64) []byte {
		for num := int64(1); num <= olCnt[oid-1]; num++ {
			if num > 1 {
				b = appendSep(b)
			}
			b = appendTuple(b, oid, did, wid, num, uniform(r, 1, w.items), wid)
			if delivered(oid) {
				b = append(b, ", CURRENT_TIMESTAMP, 5, 0.00, "...)
			} else {
				b = append(b, ", NULL, 5, "...)
				b = appendFixed(b, uniform(r, 1, 999999), 2)
				b = appendSep(b)
			}
			b = appendAStr(b, r, 24, 24)
			b = append(b, ')')
		}
		return b
	})
	if err != nil {
		return buf, 0, err
	}
	first := w.firstNewOrder()
	buf, err = insert(ctx, conn, buf, tNewOrder, "no_o_id, no_d_id, no_w_id", first, n-first+1, stmtRows, func(b []byte, i int64) []byte {
		return append(appendTuple(b, i, did, wid), ')')
	})
	return buf, n + lines + (n - first + 1), err
}
