package analytics

import (
	"strconv"
	"strings"
)

// column is one column of a TPC-H table: its name and SQL type.
type column struct{ name, typ string }

// table is one of the eight TPC-H tables (clause 1.4): its columns in the
// generator's order, its primary key, and its cardinality at scale 1 (0
// for lineitem, whose count the generator draws, and for nation and
// region, fixed at 25 and 5 at every scale).
type table struct {
	name    string
	columns []column
	key     string
	perSF   int64
	fixed   int64
}

// Column types of clause 1.3.1, the same in PostgreSQL and MariaDB:
// identifiers INTEGER (BIGINT for order keys, which pass 2^31 from scale
// 358), decimals DECIMAL(15,2), fixed text CHAR, variable text VARCHAR,
// dates DATE.
const (
	ident    = "INTEGER NOT NULL"
	bigIdent = "BIGINT NOT NULL"
	integer  = "INTEGER NOT NULL"
	money    = "DECIMAL(15,2) NOT NULL"
	date     = "DATE NOT NULL"
	char1    = "CHAR(1) NOT NULL"
	char10   = "CHAR(10) NOT NULL"
	char15   = "CHAR(15) NOT NULL"
	char25   = "CHAR(25) NOT NULL"
)

// vc is VARCHAR(n).
func vc(n int) string { return "VARCHAR(" + strconv.Itoa(n) + ") NOT NULL" }

// tables are the eight tables, largest first: the load hands out their
// chunks in this order so parallel loaders finish together.
var tables = []table{
	{name: "lineitem", key: "l_orderkey, l_linenumber", columns: []column{
		{"l_orderkey", bigIdent}, {"l_partkey", ident}, {"l_suppkey", ident}, {"l_linenumber", integer},
		{"l_quantity", money}, {"l_extendedprice", money}, {"l_discount", money}, {"l_tax", money},
		{"l_returnflag", char1}, {"l_linestatus", char1},
		{"l_shipdate", date}, {"l_commitdate", date}, {"l_receiptdate", date},
		{"l_shipinstruct", char25}, {"l_shipmode", char10}, {"l_comment", vc(44)}}},
	{name: "orders", key: "o_orderkey", perSF: 1500000, columns: []column{
		{"o_orderkey", bigIdent}, {"o_custkey", ident}, {"o_orderstatus", char1}, {"o_totalprice", money},
		{"o_orderdate", date}, {"o_orderpriority", char15}, {"o_clerk", char15}, {"o_shippriority", integer},
		{"o_comment", vc(79)}}},
	{name: "partsupp", key: "ps_partkey, ps_suppkey", perSF: 800000, columns: []column{
		{"ps_partkey", ident}, {"ps_suppkey", ident}, {"ps_availqty", integer}, {"ps_supplycost", money},
		{"ps_comment", vc(199)}}},
	{name: "part", key: "p_partkey", perSF: 200000, columns: []column{
		{"p_partkey", ident}, {"p_name", vc(55)}, {"p_mfgr", char25}, {"p_brand", char10}, {"p_type", vc(25)},
		{"p_size", integer}, {"p_container", char10}, {"p_retailprice", money}, {"p_comment", vc(23)}}},
	{name: "customer", key: "c_custkey", perSF: 150000, columns: []column{
		{"c_custkey", ident}, {"c_name", vc(25)}, {"c_address", vc(40)}, {"c_nationkey", ident},
		{"c_phone", char15}, {"c_acctbal", money}, {"c_mktsegment", char10}, {"c_comment", vc(117)}}},
	{name: "supplier", key: "s_suppkey", perSF: 10000, columns: []column{
		{"s_suppkey", ident}, {"s_name", char25}, {"s_address", vc(40)}, {"s_nationkey", ident},
		{"s_phone", char15}, {"s_acctbal", money}, {"s_comment", vc(101)}}},
	{name: "nation", key: "n_nationkey", fixed: 25, columns: []column{
		{"n_nationkey", ident}, {"n_name", char25}, {"n_regionkey", ident}, {"n_comment", vc(152)}}},
	{name: "region", key: "r_regionkey", fixed: 5, columns: []column{
		{"r_regionkey", ident}, {"r_name", char25}, {"r_comment", vc(152)}}},
}

// tableNames lists the tables in tables' order.
func tableNames() []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = t.name
	}
	return out
}

// columnList is t's columns, comma separated, in the generator's order.
func (t table) columnList() string {
	names := make([]string, len(t.columns))
	for i, c := range t.columns {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// specRows is how many rows the specification gives t at scale (clause
// 4.2.5: scaled counts rounded down), -1 for lineitem, whose count the
// generator draws (1 to 7 lines per order).
func (t table) specRows(scale float64) int64 {
	switch {
	case t.fixed > 0:
		return t.fixed
	case t.perSF > 0:
		return int64(float64(t.perSF) * scale)
	}
	return -1
}

// createStatements drops what a previous load left and creates the tables
// with their primary keys inline (InnoDB clusters rows on them, so adding
// them later would rebuild the tables).
func createStatements() []string {
	var out []string
	for _, t := range tables {
		out = append(out, "DROP TABLE IF EXISTS "+t.name)
	}
	for _, t := range tables {
		cols := make([]string, len(t.columns))
		for i, c := range t.columns {
			cols[i] = c.name + " " + c.typ
		}
		out = append(out, "CREATE TABLE "+t.name+" ("+strings.Join(cols, ", ")+", PRIMARY KEY ("+t.key+"))")
	}
	return out
}

// indexStatements are the secondary indexes made after the load (faster
// than maintaining them row by row): the foreign keys the queries join or
// probe through that no primary key starts with. lineitem by part and
// supplier serves Q9's join to partsupp and the correlated subqueries of
// Q17 and Q20; by supplier, Q5, Q15 and Q21 from a nation's suppliers;
// orders by customer, Q13, Q22's NOT EXISTS and the customer joins;
// partsupp by supplier, Q11 and Q16; the nation keys, the joins of the
// small tables that MariaDB runs as nested loops.
var indexStatements = []string{
	"CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey)",
	"CREATE INDEX lineitem_supp ON lineitem (l_suppkey)",
	"CREATE INDEX orders_cust ON orders (o_custkey)",
	"CREATE INDEX partsupp_supp ON partsupp (ps_suppkey)",
	"CREATE INDEX customer_nation ON customer (c_nationkey)",
	"CREATE INDEX supplier_nation ON supplier (s_nationkey)",
	"CREATE INDEX nation_region ON nation (n_regionkey)",
}
