package workload

import (
	"context"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
)

// The optional abilities of workloads, in one place: what a workload may
// implement beyond Workload and Client, each with who asks for it and
// when. Two live beside what asks for them, since those packages are below
// this one: driver.LaneClient (a Client that runs on a lane, asked by the
// driver when it starts the clients) and engine.CacheWorkload (a workload
// a cache engine's own client runs, asked on a cluster).

// Sizer is an optional Workload ability: a lower bound of the data
// set its load writes, so validation can refuse a tier that cannot hold the
// data placed on it before anything runs.
//
// Asked by study.Parse, when the study is read: a tier smaller than the data placed on it is refused.
type Sizer interface {
	EstimatedBytes() int64
}

// Preflighter is an optional Workload ability, the workload's
// engine.Preflighter: whether what its load needs is on this machine (the
// analytics workload's data generator), or the command that installs it.
//
// Asked by study.Preflight, before anything is created (validate and run).
type Preflighter interface {
	Preflight() error
}

// LoadedOnce is an optional Workload ability of a workload whose load is
// large and whose runs leave its data as loaded (read-only queries: the
// analytics workload). The runner loads it once per study, keeps a copy of
// the engine's folders after a clean close, and starts every later run
// from a copy, so a study of 18 runs pays for one load.
//
// Asked by the runner, when the study starts: the first run loads, later runs start from a copy.
type LoadedOnce interface {
	LoadOnce()
}

// Delegated is an optional Workload ability: its operations run in a client
// other than tierbench's Go driver (Ignite's Java client), which measures
// them the same way. The runner drives db through the returned External
// instead of opening sessions; NewClient is then never called.
//
// Asked by the runner, at each run's drive phase, instead of NewClient.
type Delegated interface {
	External(db engine.DB) (driver.External, error)
}

// Verifier is an optional Workload ability: it checks an invariant of the
// data after the measured window (the bank's total balance). A run whose
// check fails is failed, loudly: the engine lost or invented data. A check
// that passes returns what it checked ("sum of balances = 10000000 over
// 100000 accounts"), which is stored with the run as its proof.
//
// Asked by the runner, after the measured window: a failed check fails the run.
type Verifier interface {
	Verify(ctx context.Context, db engine.DB) (checked string, err error)
}

// ClientLimiter is an optional Workload ability of a workload whose
// clients each need one of a fixed number of things (messaging: a service
// of its own), so more clients than that could only fail. why says what
// bounds them and how to raise it.
//
// Asked by study.Parse for each client count, and by drive before it
// connects: a count above the bound is refused.
type ClientLimiter interface {
	MaxClients() (n int, why string)
}

// AckChecker is an optional Workload ability of a workload that writes: in
// a crash run it keeps a compact record of the writes the engine
// acknowledged (TrackAcks, before the clients start), and after the engine
// restarted on what survived the crash it counts the acknowledged writes
// that are missing (CheckAcks). A write whose outcome the client never
// learnt (cut by the crash, or failed) may or may not be there: neither
// counts as lost.
//
// Asked by the runner: TrackAcks before a crash run's clients start,
// CheckAcks once the engine restarted after the crash.
type AckChecker interface {
	TrackAcks()
	CheckAcks(ctx context.Context, db engine.DB) (AckCheck, error)
}

// AckCheck is what CheckAcks found.
type AckCheck struct {
	// First is when the restarted engine answered the check's first
	// operation: the end of its recovery.
	First time.Time
	// Checked counts the acknowledged writes compared, in Unit.
	Checked int64
	// Lost counts those missing, in Unit.
	Lost int64
	// OldestLost is when the oldest lost write was acknowledged; zero
	// when nothing was lost.
	OldestLost time.Time
	// Unit names what Checked and Lost count ("record fields").
	Unit string
}
