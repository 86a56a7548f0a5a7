// Package tpcc is a TPC-C-like workload, written from the TPC-C
// specification (revision 5.11): its nine tables and initial population
// (clause 4.3), its five transactions (clauses 2.4-2.8) with the
// specification's random inputs (NURand, clause 2.1.6), HammerDB's default
// mix, and the consistency conditions 1-4 (clause 3.3.2) checked after each
// run. Its throughput of committed New-Orders per minute is tpmC (NOPM);
// the results are TPC-C-like, not audited: no terminals, no keying or think
// time unless asked, and none of the specification's pricing, durability or
// reporting rules.
//
// Each client has a home warehouse (clients spread over the warehouses in
// turn) and a home district for Stock-Level, as the specification's
// terminals do. Deadlocks and serialization failures are retried with the
// same inputs and counted; the 1% of New-Orders that name an unused item
// roll back, as the specification wants, and count as rollbacks, not
// errors.
package tpcc

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/acklog"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// Parameter names.
const (
	pWarehouses = "warehouses"
	pKeying     = "keying_time"
	pCLastLoad  = "c_last_load"
	pCLastRun   = "c_last_run"
	pCID        = "c_id"
	pOLIID      = "ol_i_id"
	pSeed       = "seed"
)

// Op names, in Ops order.
const (
	OpNewOrder    = "new_order"
	OpPayment     = "payment"
	OpOrderStatus = "order_status"
	OpDelivery    = "delivery"
	OpStockLevel  = "stock_level"
)

// Op indexes.
const (
	opNewOrder = iota
	opPayment
	opOrderStatus
	opDelivery
	opStockLevel
	nOps
)

var opNames = [nOps]string{OpNewOrder, OpPayment, OpOrderStatus, OpDelivery, OpStockLevel}

// Cardinalities of the specification (clause 4.3.3.1). Items and customers
// are fields of Workload so that tests can load a smaller, not compliant,
// data set; everything else follows from them.
const (
	specItems             = 100000
	districtsPerWarehouse = 10
	specCustomers         = 3000 // per district, and as many initial orders
	specNewOrders         = 900  // the last 900 orders of each district
	lastNamesSequential   = 1000 // customers whose last name is their number
	maxWarehouses         = 100000
)

// Spec returns the tpcc workload's spec.
func Spec() workload.Spec {
	params := []setting.Setting{
		{Name: pWarehouses, Kind: setting.Int, Default: "1", Min: "1", Max: strconv.Itoa(maxWarehouses),
			Doc: "warehouses: 10 districts, 30,000 customers, 100,000 stock rows each (about 100 MB)"},
		{Name: pKeying, Kind: setting.Bool, Default: "false", Doc: "true: the specification's keying and think times around each transaction (latencies then include them)"},
		{Name: pCLastLoad, Kind: setting.Int, Default: "157", Min: "0", Max: strconv.Itoa(aCLast), Doc: "NURand C of C_LAST at load"},
		{Name: pCLastRun, Kind: setting.Int, Default: "223", Min: "0", Max: strconv.Itoa(aCLast),
			Doc: "NURand C of C_LAST at run time: 65-119 from c_last_load's, not 96 or 112 (clause 2.1.6.1)"},
		{Name: pCID, Kind: setting.Int, Default: "259", Min: "0", Max: strconv.Itoa(aCID), Doc: "NURand C of C_ID at run time (the load draws no C_ID)"},
		{Name: pOLIID, Kind: setting.Int, Default: "7911", Min: "0", Max: strconv.Itoa(aOLIID), Doc: "NURand C of OL_I_ID at run time (the load draws items uniformly)"},
		{Name: pSeed, Kind: setting.Int, Doc: "random seed; unset: random; set for reproducible runs"},
	}
	return workload.Spec{
		Name:  "tpcc",
		Model: engine.ModelSQL,
		Doc: "TPC-C-like, not audited: the five transactions of TPC-C 5.11 in HammerDB's mix (new_order 10/23, payment 10/23, " +
			"order_status, delivery, stock_level 1/23 each); new_order throughput is tpmC; consistency conditions 1-4 checked after the run",
		Params: params,
		Metric: &workload.Metric{Name: "tpmC", Op: OpNewOrder, PerMinute: true},
		New: func(p setting.Values) (workload.Workload, error) {
			return newWorkload(p)
		},
	}
}

// Workload is one configured tpcc workload, shared by all clients.
type Workload struct {
	warehouses int64
	keying     bool
	cLastLoad  int64
	cLastRun   int64
	cID        int64
	cOLIID     int64
	seed       int64
	seeded     bool
	// acks, in a crash run, records the acknowledged New-Orders (acks.go).
	acks *acklog.Log

	// items and customers (per district) are the specification's unless a
	// test shrinks them.
	items     int64
	customers int64

	stats stats
}

// stats counts what the driver's per-op figures do not show: rolled back
// New-Orders, retried conflicts, and when clients were busy, for the NOPM
// that Verify derives from the districts.
type stats struct {
	committed [nOps]atomic.Int64
	rollbacks atomic.Int64
	retries   sqlwork.Retries
	skipped   atomic.Int64 // districts a Delivery found without a new order
	first     atomic.Int64 // unix ns of the first transaction's start
	last      atomic.Int64 // unix ns of the latest transaction's end
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Verifier = (*Workload)(nil)
)

func newWorkload(p setting.Values) (*Workload, error) {
	w := &Workload{items: specItems, customers: specCustomers,
		warehouses: p.Int64(pWarehouses), keying: p.Bool(pKeying),
		cLastLoad: p.Int64(pCLastLoad), cLastRun: p.Int64(pCLastRun), cID: p.Int64(pCID), cOLIID: p.Int64(pOLIID)}
	if !validCLastDelta(w.cLastLoad, w.cLastRun) {
		return nil, fmt.Errorf("%s %d and %s %d: their distance must be in [65, 119] and not 96 or 112 (TPC-C clause 2.1.6.1)",
			pCLastLoad, w.cLastLoad, pCLastRun, w.cLastRun)
	}
	w.seed, w.seeded = workload.Seed(p, pSeed)
	return w, nil
}

// Ops names the five transactions.
func (w *Workload) Ops() []string { return opNames[:] }

func (w *Workload) districts() int64 { return w.warehouses * districtsPerWarehouse }

// newOrders is the number of undelivered orders per district after the
// load: the specification's 900 of 3,000, in proportion when a test
// shrinks the customers.
func (w *Workload) newOrders() int64 { return w.customers * specNewOrders / specCustomers }

// firstNewOrder is the first undelivered order id of each district (2101).
func (w *Workload) firstNewOrder() int64 { return w.customers - w.newOrders() + 1 }

// lastNames is how many distinct last-name numbers the data holds: 1000,
// fewer when a test loads fewer customers.
func (w *Workload) lastNames() int64 { return min(lastNamesSequential, w.customers) }

// Streams of random numbers, so the load and the clients never share one.
const (
	streamClient = 0x9E3779B97F4A7C15
	streamLoad   = 0xD1B54A32D192ED03
)

func (w *Workload) newRand(stream, id uint64) *rand.Rand {
	return workload.NewRand(w.seed, w.seeded, stream, id)
}

// busy records a transaction's start and end for Verify's NOPM.
func (s *stats) busy(start, end time.Time) {
	s.first.CompareAndSwap(0, start.UnixNano())
	for e := end.UnixNano(); ; {
		if old := s.last.Load(); e <= old || s.last.CompareAndSwap(old, e) {
			return
		}
	}
}
