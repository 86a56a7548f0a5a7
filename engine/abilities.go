package engine

import (
	"context"
	"time"
)

// The optional abilities of engines, their DBs and sessions, in one place:
// what an engine may implement beyond Engine, DB and Session, each with who
// asks for it and when. The runner and the others find them by type
// assertion; an engine without one gets the behaviour the ability's doc
// names. Data models (Records, SQL, Search, Objects, Cache) are in their
// own files: a workload needs one, an engine serves it.
//
// One Engine ability is declared by who asks for it: images.LabImager
// (images), the image of the lab node `tierbench cluster up`
// makes for an engine that runs on a cluster, so that this package
// imports no image code.

// Preflighter is an optional Engine ability: it says, before a study
// creates anything, whether what every run needs is on this machine (a
// server binary, a JDK, a built launcher), or names the command that
// installs it. A study refused here stores no run that fails with the same
// error N times.
//
// Asked by study.Preflight, before anything is created (validate and run).
type Preflighter interface {
	Preflight() error
}

// OptionsPreflighter is an optional Engine ability for an engine whose
// options change what a run needs (a search engine's home: a distribution
// of the user's own instead of the bundled one). Study preflight calls it,
// instead of Preflight, with the options of each run.
//
// Asked by study.Preflight, instead of Preflight, with each run's options.
type OptionsPreflighter interface {
	PreflightOptions(options Options) error
}

// ServerUser is an optional Engine ability of a server that runs as an OS
// user of its own: that user must reach each run folder through every
// parent of its tier's folder. ServerUser names the user on this machine
// ("" when the server runs as tierbench's own user, or the user does not
// exist, which Preflight reports) and the server in messages
// ("PostgreSQL").
//
// Asked by study.Preflight, before anything is created (validate and run):
// a tier under a folder closed to that user is refused there, instead of
// failing every run when the server starts.
type ServerUser interface {
	ServerUser() (label, user string)
}

// PIDer is an optional DB ability: a server engine names its server's
// process, whose CPU, memory and sync waits telemetry samples (in-process
// engines are tierbench's own process).
//
// Asked by the runner, after Open: telemetry samples that process.
type PIDer interface {
	PID() int
}

// ProcessGroup is an optional DB ability of a server made of several
// processes that are not each other's children (Ceph's monitor, manager,
// OSDs and gateway): EnginePIDs lists them all, PID's among them, so that
// telemetry counts every one as the engine's CPU rather than as "the rest
// of the host".
//
// Asked by the runner, after Open: telemetry counts every process as the engine's.
type ProcessGroup interface {
	EnginePIDs() []int
}

// Checker is an optional DB ability: a server engine reports whether its
// server is still alive, so a crash fails the run with the server's log.
//
// Asked by the runner, after each drive: a dead server (or Pebble's fatal error) fails the run with its cause.
type Checker interface {
	Check() error
}

// Served is an optional DB ability of server engines: the address a
// standard tool connects to.
//
// Asked by tool.Run, before a standard tool drives the run: the address it connects to.
type Served interface {
	Endpoint() Endpoint
}

// BufferCounter is an optional DB ability: the engine's buffer counters.
//
// Asked by the runner, at both ends of the measured window: the proof of a cold or warm cache.
type BufferCounter interface {
	BufferCounts(ctx context.Context) (BufferCounts, error)
}

// Caveater is an optional DB ability: after the measured window, it names
// what happened in the run that changes what was measured without failing
// it ("RocksDB spilled over from block.db to the slow device"). The runner
// stores the caveats on the run, and show and the report print them beside
// its figures, so a number is never read without them.
//
// Asked by the runner, after the measured window: the caveats are stored on the run (and the rbd tier asks its cluster).
type Caveater interface {
	Caveats(ctx context.Context) []string
}

// Eventer is an optional DB ability: the engine's own events between from
// and to (checkpoints, flushes, compactions), with their times, read from
// its log or heard in-process, so a run's timeline shows what the engine
// was doing when its throughput dipped. An engine that cannot tell
// returns none; it never fails the run.
//
// Asked by the runner, after the measured window (and after a crash run's
// recovery): the events are stored on the run (results.Run.Events).
type Eventer interface {
	Events(ctx context.Context, from, to time.Time) []Event
}

// RecordsSetup is an optional Session ability: engines with a schema create
// the records table (with fields columns) before the load phase.
//
// Asked by the ycsb workload, before its load (on a Session).
type RecordsSetup interface {
	SetupRecords(ctx context.Context, fields int) error
}

// Explainer is an optional Session ability of server engines: it turns an
// error that came back on the session's connection into one a user can act
// on, adding what only the engine knows: that its server died, with the
// tail of its log; what the log says when the server dropped the
// connection; that a driver's "table is full" means the tier is out of
// space. The error keeps its text and wraps the original. Sessions apply it
// to their own data models' errors; workloads that use a session's
// connection directly (SQL) pass their errors through it.
//
// Asked by sessions and SQL workloads, on every error (through engine.Explain).
type Explainer interface {
	Explain(err error) error
}

// Containerizer is an engine that can run as a container on a cluster
// (platform: kubernetes). The engine says what it would run locally, the
// server's settings for the run's durability and options, and only where
// it runs changes: an image instead of this machine's binaries, claims
// mounted where the image expects each component instead of run folders.
//
// Asked by platform/kube and runner/cluster.go, when a study runs on a cluster (render and run).
type Containerizer interface {
	Container(cfg ContainerConfig) (Container, error)
}

// ClientContainerizer is a Containerizer whose workloads run in a client
// of its own (Ignite's client JVM) rather than in tierbench drive: on a
// cluster the load generator's Job runs ClientContainer, which writes
// driver/stream's lines, one run ending in done, on its standard output.
//
// Asked by platform/kube and runner/cluster.go, for the load generator's Job of an engine with its own client.
type ClientContainerizer interface {
	Containerizer
	ClientContainer(cfg ContainerConfig, run ClientRun) (Container, error)
}

// CacheWorkload is a workload that runs in a cache engine's client: it
// says what that client does.
//
// Asked by runner/cluster.go, for the load generator's Job on a cluster: a workload says what the engine's own client does.
type CacheWorkload interface {
	CacheWork() (work CacheWork, preload int64)
}

// Crasher is an optional DB ability of an engine whose server runs in
// processes of its own: Crash kills them all at once (SIGKILL, no
// shutdown), and returns once they are gone. The operating system keeps
// what they wrote; Close afterwards releases what is left (connections,
// ports, the process's record) without asking the server to stop.
//
// Asked by the runner, at the crash moment of a crash run (crash: process
// or power); an engine without it cannot be crashed, which study
// validation refuses first.
type Crasher interface {
	Crash() error
}

// CorruptionChecker is an optional DB ability of a crashable engine that
// can check its own state for damage with its own tools: checksums of
// every page, table and log, and the structure of its indexes
// (PostgreSQL's pg_amcheck over data checksums, MariaDB's CHECK TABLE,
// Pebble's checksum pass, Redis's redis-check-aof). CheckCorruption
// returns the engine's message for the damage it found, "" for none, and
// an error only when the check itself could not run.
//
// Asked by the runner after a crash run's restart and read-back: the
// run records corrupt: true with the message. An engine that cannot
// start on what the crash left counts as corrupt without asking.
type CorruptionChecker interface {
	CheckCorruption(ctx context.Context) (damage string, err error)
}

// NodeCrasher is an optional DB ability of an engine of several server
// processes: a process crash of part of the cluster (crash: {kind:
// process, nodes: n}). CrashNodes kills n nodes at once (SIGKILL; never
// every node), and RestartNodes starts them again on what they left and
// waits until they have rejoined; the other nodes run on throughout.
//
// Asked by the runner, at the crash moment and for the recovery of a
// crash run that names nodes; study validation refuses nodes for an
// engine whose Spec has no CrashNodes.
type NodeCrasher interface {
	CrashNodes(n int) error
	RestartNodes(ctx context.Context) error
}

// FieldsReader is an optional Records ability: a record's field values,
// for the check of acknowledged writes after a crash (the hot path's Read
// only says whether the record is there). fields is nil when the record
// is absent.
//
// Asked by the ycsb workload, after a crash run's recovery.
type FieldsReader interface {
	ReadFields(ctx context.Context, key []byte) (fields [][]byte, err error)
}

// RecoveryReporter is an optional DB ability: what the engine says its
// last start replayed after a crash ("replayed 12 MiB of WAL in 0.15 s"),
// "" when it says nothing.
//
// Asked by the runner, once a crash run's restarted engine answered: the
// text is stored with the crash record.
type RecoveryReporter interface {
	Recovery() string
}

// StepKeeper is an optional Engine ability: its DB may stay open across
// the steps of a capacity search, each step driving the same engine, on
// the same folders and loaded data, at its own rate. An engine says so
// when a step's operations change its state harmlessly for the next
// step: the data set stays the size it was loaded at (updates in place,
// or inserts too few to matter over a search's minutes), and nothing a
// step leaves (a warm cache, compaction or vacuum debt) is larger than
// what the step's own warmup absorbs. KeepReason says why, for the docs
// and the study's record. An engine without it is opened, loaded and
// closed for every step.
//
// Asked by the runner, when a capacity search starts (runner/capacity.go):
// never for crash runs (a crash leaves the engine recovered, not the
// state the next step needs) nor `cache: cold` (every step must start
// with nothing cached).
type StepKeeper interface {
	KeepReason() string
}
