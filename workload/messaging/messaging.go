// Package messaging is the write-heavy half of the IRIS study (issue 15):
// an HL7 v2 integration engine that persists every step of a message's
// route, so its throughput is bound by commits to the journal (PostgreSQL's
// WAL, MariaDB's redo log). Each inbound message takes, each step its own
// committed transaction, as such engines persist them:
//
//  1. inbound: store the message (a row in inbound, status 'received');
//  2. transform, once per route: rewrite four segments of it (MSH's
//     receiving application, PID's name order, PV1's patient class, one
//     OBX's code) and store the result queued (a row in outbound, status
//     'queued');
//  3. outbound, once per route: read the queued message, as the outbound
//     interface does to send it, and mark it 'sent'; the last one then
//     marks the inbound 'done' in a transaction of its own.
//
// That is 1 + routes message objects and 2 + 2 x routes commits per
// inbound: 5 and 10 with the seed's four routes. Op `inbound` counts
// inbound messages (the seed's messages/s), `transform` the store and
// queue steps, `outbound` the sends. Rows carry the client's times in
// microseconds, so end-to-end latency is done_at - received_at of a done
// inbound; Verify reports its mean.
//
// Bodies are TEXT (MEDIUMTEXT on MariaDB) with each engine's defaults:
// PostgreSQL compresses a row past about 2 KB (TOAST), InnoDB does not,
// so the same messages may cost the two journals different bytes.
//
// A service is one inbound stream whose messages are taken in order, one
// at a time. Services wait in a queue: a client takes the one idle
// longest, carries one message through all its steps, one step per Do,
// and puts the service back, so the run's clients share the services
// round-robin (one service per client when clients = services).
package messaging

import (
	"context"
	"database/sql"
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

// Name is the workload's name in studies and results.
const Name = "messaging"

// Parameter names.
const (
	pServices  = "services"
	pBytes     = "message_bytes"
	pTransform = "transforms"
	pOutbound  = "outbound"
	pSeed      = "seed"
)

// Op names, in Ops order.
const (
	OpInbound   = "inbound"
	OpTransform = "transform"
	OpOutbound  = "outbound"
)

const (
	opInbound = iota
	opTransform
	opOutbound
)

// Tables.
const (
	InboundTable  = "inbound"
	OutboundTable = "outbound"
)

// Bounds of the parameters: a message must hold the segments the
// transforms rewrite, and stay far below MariaDB's default
// max_allowed_packet (16 MiB) and MEDIUMTEXT.
const (
	maxServices = 100000
	minBytes    = 1024
	maxBytes    = 1 << 20
	maxRoutes   = 32
)

// Spec returns the messaging workload's spec.
func Spec() workload.Spec {
	params := []setting.Setting{
		{Name: pServices, Kind: setting.Int, Default: "128", Min: "1", Max: strconv.Itoa(maxServices), Doc: "inbound interfaces, each a stream of messages taken in order; the clients share them round-robin (clients <= services)"},
		{Name: pBytes, Kind: setting.Size, Default: "2048", Min: strconv.Itoa(minBytes), Max: strconv.Itoa(maxBytes), Doc: "bytes of each inbound message: HL7 v2 text (MSH, PID, PV1, OBR, OBX..., NTE) from the seed; room for the segments the transforms rewrite, and one packet"},
		{Name: pTransform, Kind: setting.Int, Default: "4", Min: "1", Max: strconv.Itoa(maxRoutes), Doc: "transformations of each inbound message, one per route"},
		{Name: pOutbound, Kind: setting.Int, Default: "4", Min: "1", Max: strconv.Itoa(maxRoutes), Doc: "outbound interfaces each inbound message is sent to, one per route: must equal transforms"},
		{Name: pSeed, Kind: setting.Int, Doc: "random seed of the messages' contents, unset: random; set for reproducible runs"},
	}
	return workload.Spec{
		Name:  Name,
		Model: engine.ModelSQL,
		Doc: "HL7 v2 messaging engine (the IRIS study's T4): each inbound message is stored, transformed and queued for each route, " +
			"sent on each route and marked done, every step its own commit: 1 + routes message objects and 2 + 2 x routes commits per inbound " +
			"(5 and 10 with 4 routes); op inbound is messages/s; Verify checks that every done message is fully routed and reports its mean end-to-end latency",
		Params: params,
		// The seed's figure: inbound messages per second.
		Metric: &workload.Metric{Name: "msgs/s", Op: OpInbound},
		New: func(p setting.Values) (workload.Workload, error) {
			return newWorkload(p)
		},
	}
}

// Workload is one configured messaging workload, shared by all clients of
// a run.
type Workload struct {
	services int
	bytes    int
	routes   int
	// seed picks every message's contents with its service and sequence
	// number: random when no seed is given.
	seed uint64

	// idle holds the services no client is carrying a message of, the
	// longest idle first.
	idle  chan *service
	stats stats
	// acks is a crash run's record of inbound messages (TrackAcks); nil
	// otherwise.
	acks *acklog.Log
}

// service is one inbound stream: the client that took it from the idle
// queue owns it until it puts it back.
type service struct {
	id   int
	next int64 // sequence number of its next message, from 1
}

// stats counts the steps clients saw commit, for Verify's check that
// none was lost.
type stats struct {
	inbound, transformed, sent, done atomic.Int64
	// finishedLate counts the messages in flight when the run ended that
	// Close carried to done after the measured window; unfinished those it
	// could not.
	finishedLate, unfinished atomic.Int64
	retries                  sqlwork.Retries
}

// reset zeroes the counts, for a fresh load.
func (s *stats) reset() {
	for _, c := range []*atomic.Int64{&s.inbound, &s.transformed, &s.sent, &s.done, &s.finishedLate, &s.unfinished} {
		c.Store(0)
	}
	s.retries.Reset()
}

var (
	_ workload.Workload      = (*Workload)(nil)
	_ workload.Verifier      = (*Workload)(nil)
	_ workload.ClientLimiter = (*Workload)(nil)
)

func newWorkload(p setting.Values) (*Workload, error) {
	w := &Workload{services: p.Int(pServices), bytes: int(p.Size(pBytes))}
	transforms, outbound := p.Int(pTransform), p.Int(pOutbound)
	if transforms != outbound {
		return nil, fmt.Errorf("%s %d and %s %d: each route transforms the message once and sends it to one outbound interface, so they must be equal",
			pTransform, transforms, pOutbound, outbound)
	}
	w.routes = transforms
	seed, seeded := workload.Seed(p, pSeed)
	w.seed = uint64(seed)
	if !seeded {
		w.seed = rand.Uint64()
	}
	w.resetServices()
	return w, nil
}

// resetServices puts every service in the idle queue with its sequence at
// the start, for empty tables.
func (w *Workload) resetServices() {
	w.idle = make(chan *service, w.services)
	for i := range w.services {
		w.idle <- &service{id: i, next: 1}
	}
}

// Ops names the three steps.
func (w *Workload) Ops() []string { return []string{OpInbound, OpTransform, OpOutbound} }

// ObjectsPerMessage is how many message objects one inbound persists: the
// inbound and one transformed message per route.
func (w *Workload) ObjectsPerMessage() int { return 1 + w.routes }

// CommitsPerMessage is how many transactions one inbound commits: its
// store, a store-and-queue and a send per route, and its done.
func (w *Workload) CommitsPerMessage() int { return 2 + 2*w.routes }

// ddl returns the statements that make both tables fresh and empty. Times
// are the client's, in microseconds since the epoch. No foreign key ties
// outbound to inbound, as none ties an engine's queue to its message
// store; Verify checks the tie instead.
func ddl(d engine.Dialect) []string {
	text := "TEXT"
	if d == engine.MySQL {
		text = "MEDIUMTEXT"
	}
	return []string{
		"DROP TABLE IF EXISTS " + OutboundTable,
		"DROP TABLE IF EXISTS " + InboundTable,
		"CREATE TABLE " + InboundTable + " (service INT NOT NULL, seq BIGINT NOT NULL, status VARCHAR(8) NOT NULL, " +
			"received_at BIGINT NOT NULL, done_at BIGINT, body " + text + " NOT NULL, PRIMARY KEY (service, seq))",
		"CREATE TABLE " + OutboundTable + " (service INT NOT NULL, seq BIGINT NOT NULL, route INT NOT NULL, status VARCHAR(8) NOT NULL, " +
			"queued_at BIGINT NOT NULL, sent_at BIGINT, body " + text + " NOT NULL, PRIMARY KEY (service, seq, route))",
	}
}

// Load makes both tables empty: the run's messages fill them. The
// services start their sequences again and the counts start from zero.
func (w *Workload) Load(ctx context.Context, db engine.DB, _ int) (workload.LoadStats, error) {
	start := time.Now()
	w.resetServices()
	w.stats.reset()
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, d engine.Dialect) error {
		return sqlwork.ExecAll(ctx, conn, ddl(d)...)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("messaging load: %w", err)
	}
	return workload.LoadStats{Duration: time.Since(start)}, nil
}
