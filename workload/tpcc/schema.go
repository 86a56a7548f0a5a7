package tpcc

import (
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// Table names, the specification's (ORDER is a reserved word: orders).
const (
	tWarehouse = "warehouse"
	tDistrict  = "district"
	tCustomer  = "customer"
	tHistory   = "history"
	tNewOrder  = "new_order"
	tOrders    = "orders"
	tOrderLine = "order_line"
	tItem      = "item"
	tStock     = "stock"
)

var tables = []string{tWarehouse, tDistrict, tCustomer, tHistory, tNewOrder, tOrders, tOrderLine, tItem, tStock}

// createTables returns the DDL in dialect d: the columns of clause 1.3 with
// the primary keys declared inline (InnoDB clusters on them, so adding them
// later would rebuild the tables), plus the two secondary indexes the
// transactions need: customers by last name (Payment, Order-Status) and a
// customer's latest order (Order-Status). Times are TIMESTAMP on
// PostgreSQL and DATETIME on MariaDB, whose TIMESTAMP may default to the
// update time.
func createTables(d engine.Dialect) []string {
	ts := "TIMESTAMP"
	if d != engine.Postgres {
		ts = "DATETIME"
	}
	address := func(p string) string {
		return p + "_street_1 VARCHAR(20), " + p + "_street_2 VARCHAR(20), " + p + "_city VARCHAR(20), " + p + "_state CHAR(2), " + p + "_zip CHAR(9)"
	}
	var dists []string
	for i := 1; i <= districtsPerWarehouse; i++ {
		dists = append(dists, distColumn(i)+" CHAR(24)")
	}
	return []string{
		"CREATE TABLE " + tWarehouse + " (w_id INT NOT NULL, w_name VARCHAR(10), " + address("w") +
			", w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), PRIMARY KEY (w_id))",
		"CREATE TABLE " + tDistrict + " (d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), " + address("d") +
			", d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT, PRIMARY KEY (d_w_id, d_id))",
		"CREATE TABLE " + tCustomer + " (c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), " +
			address("c") + ", c_phone CHAR(16), c_since " + ts + ", c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), " +
			"c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id))",
		"CREATE INDEX customer_by_last ON " + tCustomer + " (c_w_id, c_d_id, c_last, c_first)",
		"CREATE TABLE " + tHistory + " (h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT, h_date " + ts + ", h_amount DECIMAL(6,2), h_data VARCHAR(24))",
		"CREATE TABLE " + tNewOrder + " (no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
		"CREATE TABLE " + tOrders + " (o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_entry_d " + ts +
			", o_carrier_id INT, o_ol_cnt INT, o_all_local INT, PRIMARY KEY (o_w_id, o_d_id, o_id))",
		"CREATE INDEX orders_by_customer ON " + tOrders + " (o_w_id, o_d_id, o_c_id, o_id)",
		"CREATE TABLE " + tOrderLine + " (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT, " +
			"ol_supply_w_id INT, ol_delivery_d " + ts + ", ol_quantity INT, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24), " +
			"PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
		"CREATE TABLE " + tItem + " (i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50), PRIMARY KEY (i_id))",
		"CREATE TABLE " + tStock + " (s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT, " + strings.Join(dists, ", ") +
			", s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id))",
	}
}

// distColumn names S_DIST_xx of district i.
func distColumn(i int) string {
	if i < 10 {
		return "s_dist_0" + strconv.Itoa(i)
	}
	return "s_dist_" + strconv.Itoa(i)
}

// dropTables drops what a previous load left.
func dropTables() []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = "DROP TABLE IF EXISTS " + t
	}
	return out
}

// rebind turns the ? placeholders of q into d's.
func rebind(d engine.Dialect, q string) string {
	if d != engine.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString(d.Placeholder(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
