package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// New-Order's lines are done in a few statements, whatever their number,
// as cockroach's tpcc does: one SELECT of the order's items, one locking
// SELECT and one UPDATE of the stock per supplying warehouse, one INSERT of
// all lines. Each statement's text depends on how many items it names, so
// a client prepares each shape once, when first needed (stmtFor).

// stmtFor returns q (with ? placeholders) prepared on the client's
// connection, preparing it on first use.
func (c *Client) stmtFor(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := c.shaped[q]; ok {
		return st, nil
	}
	st, err := c.conn.PrepareContext(ctx, rebind(c.d, q))
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", q, err)
	}
	if c.shaped == nil {
		c.shaped = map[string]*sql.Stmt{}
	}
	c.shaped[q] = st
	return st, nil
}

// closeShaped closes the statements stmtFor prepared.
func (c *Client) closeShaped() {
	for q, st := range c.shaped {
		st.Close()
		delete(c.shaped, q)
	}
}

// list returns n comma-separated placeholders.
func list(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func itemsQuery(n int) string {
	return "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (" + list(n) + ")"
}

func stockQuery(n int) string {
	return "SELECT s_i_id, s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, " +
		"s_dist_09, s_dist_10 FROM stock WHERE s_w_id = ? AND s_i_id IN (" + list(n) + ") ORDER BY s_i_id FOR UPDATE"
}

// stockUpdate sets the quantity and adds to the counters of n items of one
// warehouse: arguments are, per column, (item, value) pairs, then the
// warehouse and the items. PostgreSQL types a CASE of bare parameters as
// text, hence the casts there.
func stockUpdate(d engine.Dialect, n int) string {
	p := "?"
	if d == engine.Postgres {
		p = "?::int"
	}
	when := strings.Repeat(" WHEN ? THEN "+p, n)
	return "UPDATE stock SET s_quantity = CASE s_i_id" + when + " END, s_ytd = s_ytd + CASE s_i_id" + when +
		" END, s_order_cnt = s_order_cnt + CASE s_i_id" + when + " END, s_remote_cnt = s_remote_cnt + CASE s_i_id" + when +
		" END WHERE s_w_id = ? AND s_i_id IN (" + list(n) + ")"
}

func orderLinesInsert(n int) string {
	return "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES " +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", n), ", ")
}

// stockItem is one item's stock row of one warehouse as New-Order changes
// it: an item may be on several lines.
type stockItem struct {
	item, qty, ytd, orders, remote int64
	dist                           string
}

// newOrderLines does the lines of order oid (clause 2.4.2.2's loop over
// items); in.lines are sorted by supplying warehouse and item, so stock
// rows are locked in one order by every New-Order. A missing item is the
// planned rollback (errUnusedItem).
func (c *Client) newOrderLines(ctx context.Context, in newOrderInput, oid int64) (string, error) {
	var ids []any
	for _, l := range in.lines {
		if !containsID(ids, l.item) {
			ids = append(ids, l.item)
		}
	}
	st, err := c.stmtFor(ctx, itemsQuery(len(ids)))
	if err != nil {
		return "select items", err
	}
	rows, err := st.QueryContext(ctx, ids...)
	if err != nil {
		return "select items", err
	}
	prices := make(map[int64]float64, len(ids))
	for rows.Next() {
		var id int64
		var price float64
		if err := rows.Scan(&id, &price, &c.sink, &c.sink); err != nil {
			rows.Close()
			return "select items", err
		}
		prices[id] = price
	}
	if err := rows.Close(); err != nil {
		return "select items", err
	}
	if err := rows.Err(); err != nil {
		return "select items", err
	}
	if len(prices) < len(ids) {
		return "select items", errUnusedItem
	}
	amounts := make([]string, len(in.lines))
	dists := make([]string, len(in.lines))
	for a := 0; a < len(in.lines); {
		b := a
		for b < len(in.lines) && in.lines[b].supplyW == in.lines[a].supplyW {
			b++
		}
		if step, err := c.supply(ctx, in, a, b, prices, amounts, dists); err != nil {
			return step, err
		}
		a = b
	}
	st, err = c.stmtFor(ctx, orderLinesInsert(len(in.lines)))
	if err != nil {
		return "insert order lines", err
	}
	args := make([]any, 0, 9*len(in.lines))
	for i, l := range in.lines {
		args = append(args, oid, in.d, in.w, i+1, l.item, l.supplyW, l.quantity, amounts[i], dists[i])
	}
	if _, err := st.ExecContext(ctx, args...); err != nil {
		return "insert order lines", err
	}
	return "", nil
}

// supply takes lines a..b-1, all from one warehouse, out of its stock:
// locks the rows, computes each line's new quantity (less the ordered
// quantity, plus 91 when that would leave fewer than 10), amount and
// district info, and writes the rows back in one UPDATE.
func (c *Client) supply(ctx context.Context, in newOrderInput, a, b int, prices map[int64]float64, amounts, dists []string) (string, error) {
	w := in.lines[a].supplyW
	var items []*stockItem
	args := []any{w}
	for _, l := range in.lines[a:b] {
		if len(items) == 0 || items[len(items)-1].item != l.item {
			items = append(items, &stockItem{item: l.item})
			args = append(args, l.item)
		}
	}
	step := fmt.Sprintf("select stock of warehouse %d", w)
	st, err := c.stmtFor(ctx, stockQuery(len(items)))
	if err != nil {
		return step, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return step, err
	}
	var dist [districtsPerWarehouse]string
	n := 0
	for rows.Next() {
		var id, qty int64
		if err := rows.Scan(&id, &qty, &c.sink, &dist[0], &dist[1], &dist[2], &dist[3], &dist[4], &dist[5], &dist[6], &dist[7], &dist[8], &dist[9]); err != nil {
			rows.Close()
			return step, err
		}
		for _, s := range items {
			if s.item == id {
				s.qty, s.dist = qty, dist[in.d-1]
				n++
			}
		}
	}
	if err := rows.Close(); err != nil {
		return step, err
	}
	if err := rows.Err(); err != nil {
		return step, err
	}
	if n != len(items) {
		return step, fmt.Errorf("%d of %d stock rows found: was the load phase run?", n, len(items))
	}
	for i := a; i < b; i++ {
		l := in.lines[i]
		s := items[0]
		for _, x := range items {
			if x.item == l.item {
				s = x
			}
		}
		if s.qty-l.quantity >= 10 {
			s.qty -= l.quantity
		} else {
			s.qty += 91 - l.quantity
		}
		s.ytd += l.quantity
		s.orders++
		if w != in.w {
			s.remote++
		}
		amounts[i] = cents(int64(float64(l.quantity)*prices[l.item]*100 + 0.5))
		dists[i] = s.dist
	}
	upd := make([]any, 0, 8*len(items)+1+len(items))
	for col := range 4 {
		for _, s := range items {
			upd = append(upd, s.item, [4]int64{s.qty, s.ytd, s.orders, s.remote}[col])
		}
	}
	upd = append(upd, w)
	for _, s := range items {
		upd = append(upd, s.item)
	}
	step = fmt.Sprintf("update stock of warehouse %d", w)
	if st, err = c.stmtFor(ctx, stockUpdate(c.d, len(items))); err != nil {
		return step, err
	}
	if _, err := st.ExecContext(ctx, upd...); err != nil {
		return step, err
	}
	return "", nil
}

func containsID(ids []any, id int64) bool {
	for _, x := range ids {
		if x.(int64) == id {
			return true
		}
	}
	return false
}
