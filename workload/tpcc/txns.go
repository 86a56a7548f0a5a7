package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// Statement indexes in Client.stmts.
const (
	// New-Order
	sWarehouseTax = iota
	sDistrictNextOID
	sDistrictTaxOID
	sCustomerCredit
	sInsertOrder
	sInsertNewOrder
	// Payment
	sWarehouseYTD
	sWarehouseAddress
	sDistrictYTD
	sDistrictAddress
	sCustomersByLast
	sCustomerForUpdate
	sCustomerPay
	sCustomerPayBC
	sInsertHistory
	// Order-Status
	sCustomerBalance
	sLatestOrder
	sOrderLines
	// Delivery
	sOldestNewOrder
	sDeleteNewOrder
	sOrderCustomer
	sSetCarrier
	sDeliverLines
	sOrderAmount
	sCustomerDelivered
	// Stock-Level
	sDistrictNext
	sLowStock
	nStmts
)

// statements, with ? placeholders (rebind turns them into $n).
var statements = [nStmts]string{
	sWarehouseTax:    "SELECT w_tax FROM warehouse WHERE w_id = ?",
	sDistrictNextOID: "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
	sDistrictTaxOID:  "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
	sCustomerCredit:  "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	sInsertOrder: "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) " +
		"VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
	sInsertNewOrder: "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",

	sWarehouseYTD:     "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
	sWarehouseAddress: "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
	sDistrictYTD:      "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
	sDistrictAddress:  "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
	sCustomersByLast:  "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
	sCustomerForUpdate: "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, " +
		"c_credit_lim, c_discount, c_balance, c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
	sCustomerPay: "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 " +
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	sCustomerPayBC: "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, " +
		"c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	sInsertHistory: "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) " +
		"VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",

	sCustomerBalance: "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
	sLatestOrder: "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? " +
		"ORDER BY o_id DESC LIMIT 1",
	sOrderLines: "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line " +
		"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",

	sOldestNewOrder:    "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
	sDeleteNewOrder:    "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
	sOrderCustomer:     "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
	sSetCarrier:        "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
	sDeliverLines:      "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	sOrderAmount:       "SELECT COALESCE(SUM(ol_amount), 0) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
	sCustomerDelivered: "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",

	sDistrictNext: "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
	sLowStock: "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id " +
		"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_quantity < ?",
}

// orderLine is one line of a New-Order's input.
type orderLine struct {
	item, supplyW, quantity int64
}

// newOrderInput is New-Order's input (clause 2.4.1).
type newOrderInput struct {
	w, d, c int64
	lines   []orderLine
}

// newOrderInput draws New-Order's input: district uniform, customer
// NURand(1023), 5-15 lines of NURand(8191) items, each from a remote
// warehouse with probability 1% when there are several; 1% of orders end
// with an unused item, which rolls them back. Lines are sorted by
// supplying warehouse and item, so concurrent New-Orders lock stock rows
// in one order instead of deadlocking.
func (c *Client) newOrderInput() newOrderInput {
	w := c.w
	in := newOrderInput{w: c.wid, d: uniform(c.rng, 1, districtsPerWarehouse), c: nurand(c.rng, aCID, w.cID, 1, w.customers)}
	n := uniform(c.rng, 5, 15)
	rollback := uniform(c.rng, 1, 100) == 1
	for i := range n {
		l := orderLine{item: nurand(c.rng, aOLIID, w.cOLIID, 1, w.items), supplyW: c.wid, quantity: uniform(c.rng, 1, 10)}
		if i == n-1 && rollback {
			l.item = w.items + 1
		}
		if w.warehouses > 1 && uniform(c.rng, 1, 100) == 1 {
			l.supplyW = c.otherWarehouse()
		}
		in.lines = append(in.lines, l)
	}
	slices.SortFunc(in.lines, func(a, b orderLine) int {
		if a.supplyW != b.supplyW {
			return int(a.supplyW - b.supplyW)
		}
		return int(a.item - b.item)
	})
	return in
}

// otherWarehouse draws a warehouse other than the home one (there are at
// least two).
func (c *Client) otherWarehouse() int64 {
	o := uniform(c.rng, 1, c.w.warehouses-1)
	if o >= c.wid {
		o++
	}
	return o
}

// newOrder is clause 2.4.2.2. It returns the step that failed. What only a
// terminal would show (the order's total, each line's brand-generic flag)
// is read as the specification says but not computed.
func (c *Client) newOrder(ctx context.Context, in newOrderInput) (string, error) {
	var wTax, dTax, discount float64
	var oid int64
	if err := c.stmts[sWarehouseTax].QueryRowContext(ctx, in.w).Scan(&wTax); err != nil {
		return "select warehouse", err
	}
	if _, err := c.stmts[sDistrictNextOID].ExecContext(ctx, in.w, in.d); err != nil {
		return "update district", err
	}
	if err := c.stmts[sDistrictTaxOID].QueryRowContext(ctx, in.w, in.d).Scan(&dTax, &oid); err != nil {
		return "select district", err
	}
	oid-- // the id before the increment
	var credit string
	if err := c.stmts[sCustomerCredit].QueryRowContext(ctx, in.w, in.d, in.c).Scan(&discount, &c.sink, &credit); err != nil {
		return "select customer", err
	}
	allLocal := int64(1)
	for _, l := range in.lines {
		if l.supplyW != in.w {
			allLocal = 0
		}
	}
	c.noteOrder(in.w, in.d, oid)
	if _, err := c.stmts[sInsertOrder].ExecContext(ctx, oid, in.d, in.w, in.c, len(in.lines), allLocal); err != nil {
		return "insert order", err
	}
	if _, err := c.stmts[sInsertNewOrder].ExecContext(ctx, oid, in.d, in.w); err != nil {
		return "insert new_order", err
	}
	return c.newOrderLines(ctx, in, oid)
}

// customerInput names a customer by last name (60%) or by id.
type customerInput struct {
	w, d, id int64
	last     string
}

// pickCustomer draws a customer of district d of warehouse w: 60% by a
// NURand(255) last name with the run's C, otherwise by NURand(1023) id.
func (c *Client) pickCustomer(w, d int64) customerInput {
	if uniform(c.rng, 1, 100) <= 60 {
		return customerInput{w: w, d: d, last: lastName(nurand(c.rng, aCLast, c.w.cLastRun, 0, c.w.lastNames()-1))}
	}
	return customerInput{w: w, d: d, id: nurand(c.rng, aCID, c.w.cID, 1, c.w.customers)}
}

// customerID resolves a customer by last name to the middle one of those
// sorted by first name (position ceil(n/2), clause 2.5.2.2).
func (c *Client) customerID(ctx context.Context, in customerInput) (int64, error) {
	if in.last == "" {
		return in.id, nil
	}
	rows, err := c.stmts[sCustomersByLast].QueryContext(ctx, in.w, in.d, in.last)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in district %d/%d: was the load phase run?", in.last, in.w, in.d)
	}
	return ids[(len(ids)-1)/2], nil
}

// paymentInput is Payment's input (clause 2.5.1).
type paymentInput struct {
	w, d   int64
	cust   customerInput
	amount int64 // cents
}

// paymentInput draws Payment's input: the customer of the home district
// 85% of the time, otherwise of a random district of another warehouse
// (of the home one when there is only one); amount in [1.00, 5000.00].
func (c *Client) paymentInput() paymentInput {
	in := paymentInput{w: c.wid, d: uniform(c.rng, 1, districtsPerWarehouse), amount: uniform(c.rng, 100, 500000)}
	cw, cd := in.w, in.d
	if uniform(c.rng, 1, 100) > 85 {
		cd = uniform(c.rng, 1, districtsPerWarehouse)
		if c.w.warehouses > 1 {
			cw = c.otherWarehouse()
		}
	}
	in.cust = c.pickCustomer(cw, cd)
	return in
}

// payment is clause 2.5.2.2.
func (c *Client) payment(ctx context.Context, in paymentInput) (string, error) {
	amount := cents(in.amount)
	if _, err := c.stmts[sWarehouseYTD].ExecContext(ctx, amount, in.w); err != nil {
		return "update warehouse", err
	}
	var wName, dName string
	s := &c.sink
	if err := c.stmts[sWarehouseAddress].QueryRowContext(ctx, in.w).Scan(&wName, s, s, s, s, s); err != nil {
		return "select warehouse", err
	}
	if _, err := c.stmts[sDistrictYTD].ExecContext(ctx, amount, in.w, in.d); err != nil {
		return "update district", err
	}
	if err := c.stmts[sDistrictAddress].QueryRowContext(ctx, in.w, in.d).Scan(&dName, s, s, s, s, s); err != nil {
		return "select district", err
	}
	cid, err := c.customerID(ctx, in.cust)
	if err != nil {
		return "select customers by last name", err
	}
	var credit, data string
	err = c.stmts[sCustomerForUpdate].QueryRowContext(ctx, in.cust.w, in.cust.d, cid).Scan(s, s, s, s, s, s, s, s, s, s, &credit, s, s, s, &data)
	if err != nil {
		return fmt.Sprintf("select customer %d", cid), err
	}
	if credit == "BC" {
		data = fmt.Sprintf("%d %d %d %d %d %s|%s", cid, in.cust.d, in.cust.w, in.d, in.w, amount, data)
		if len(data) > 500 {
			data = data[:500]
		}
		_, err = c.stmts[sCustomerPayBC].ExecContext(ctx, amount, amount, data, in.cust.w, in.cust.d, cid)
	} else {
		_, err = c.stmts[sCustomerPay].ExecContext(ctx, amount, amount, in.cust.w, in.cust.d, cid)
	}
	if err != nil {
		return fmt.Sprintf("update customer %d", cid), err
	}
	hData := wName + "    " + dName
	if _, err := c.stmts[sInsertHistory].ExecContext(ctx, cid, in.cust.d, in.cust.w, in.d, in.w, amount, hData); err != nil {
		return "insert history", err
	}
	return "", nil
}

// orderStatusInput draws Order-Status's input: a customer of a random
// district of the home warehouse (clause 2.6.1).
func (c *Client) orderStatusInput() customerInput {
	return c.pickCustomer(c.wid, uniform(c.rng, 1, districtsPerWarehouse))
}

// orderStatus is clause 2.6.2.2: the customer, their latest order and its
// lines.
func (c *Client) orderStatus(ctx context.Context, in customerInput) (string, error) {
	cid, err := c.customerID(ctx, in)
	if err != nil {
		return "select customers by last name", err
	}
	s := &c.sink
	if err := c.stmts[sCustomerBalance].QueryRowContext(ctx, in.w, in.d, cid).Scan(s, s, s, s); err != nil {
		return fmt.Sprintf("select customer %d", cid), err
	}
	var oid int64
	if err := c.stmts[sLatestOrder].QueryRowContext(ctx, in.w, in.d, cid).Scan(&oid, s, s); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", nil // a customer without orders: nothing more to show
		}
		return fmt.Sprintf("select latest order of customer %d", cid), err
	}
	rows, err := c.stmts[sOrderLines].QueryContext(ctx, in.w, in.d, oid)
	if err != nil {
		return fmt.Sprintf("select lines of order %d", oid), err
	}
	for rows.Next() {
		if err := rows.Scan(s, s, s, s, s); err != nil {
			rows.Close()
			return fmt.Sprintf("read lines of order %d", oid), err
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Sprintf("read lines of order %d", oid), err
	}
	return "", rows.Err()
}

// delivery is clause 2.7.4.2 run as one transaction over the 10 districts
// of the home warehouse, as HammerDB runs it: each district's oldest new
// order is delivered by carrier; a district without one is skipped and
// counted (on PostgreSQL also one whose oldest new order a concurrent
// Delivery took while this one waited for its lock).
func (c *Client) delivery(ctx context.Context, carrier int64) (string, error) {
	w := c.wid
	for d := int64(1); d <= districtsPerWarehouse; d++ {
		var oid, cid int64
		if err := c.stmts[sOldestNewOrder].QueryRowContext(ctx, w, d).Scan(&oid); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				c.skipped++
				continue
			}
			return fmt.Sprintf("district %d: select oldest new order", d), err
		}
		if _, err := c.stmts[sDeleteNewOrder].ExecContext(ctx, w, d, oid); err != nil {
			return fmt.Sprintf("district %d: delete new order %d", d, oid), err
		}
		if err := c.stmts[sOrderCustomer].QueryRowContext(ctx, w, d, oid).Scan(&cid); err != nil {
			return fmt.Sprintf("district %d: select order %d", d, oid), err
		}
		if _, err := c.stmts[sSetCarrier].ExecContext(ctx, carrier, w, d, oid); err != nil {
			return fmt.Sprintf("district %d: update order %d", d, oid), err
		}
		if _, err := c.stmts[sDeliverLines].ExecContext(ctx, w, d, oid); err != nil {
			return fmt.Sprintf("district %d: update lines of order %d", d, oid), err
		}
		var amount string // DECIMAL as text, bound back as is
		if err := c.stmts[sOrderAmount].QueryRowContext(ctx, w, d, oid).Scan(&amount); err != nil {
			return fmt.Sprintf("district %d: sum lines of order %d", d, oid), err
		}
		if _, err := c.stmts[sCustomerDelivered].ExecContext(ctx, amount, w, d, cid); err != nil {
			return fmt.Sprintf("district %d: update customer %d", d, cid), err
		}
	}
	return "", nil
}

// stockLevel is clause 2.8.2.2: the distinct items of the district's last
// 20 orders whose stock is below threshold.
func (c *Client) stockLevel(ctx context.Context, threshold int64) (string, error) {
	var next, low int64
	if err := c.stmts[sDistrictNext].QueryRowContext(ctx, c.wid, c.did).Scan(&next); err != nil {
		return "select district", err
	}
	if err := c.stmts[sLowStock].QueryRowContext(ctx, c.wid, c.did, next, next-20, threshold).Scan(&low); err != nil {
		return "count low stock", err
	}
	return "", nil
}
