// Package engine defines what tierbench needs from a storage engine: the
// components it can place on tiers, the durability modes it maps to its own
// knobs, the options it accepts, and sessions that serve a data model.
//
// Engines live in subpackages (engine/pebble, ...). Data models such as
// Records and SQL are small optional interfaces that a Session implements
// (Cache, of engines that run their own client, a DB implements); a
// workload finds them with a type assertion (NeedRecords, NeedSQL,
// NeedCache in model.go), so an engine grows new abilities without
// changing this package's core, and no engine imports a workload. A server
// engine that can run on a cluster is a Containerizer (container.go): it
// describes its server as a container with the same settings it writes for
// a local run.
package engine

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tier/syncdelay"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Durability is an engine-neutral commit mode.
type Durability string

// The durability modes tierbench knows. Each engine supports a subset.
const (
	// Sync: every acknowledged write is on stable storage (group commit allowed).
	Sync Durability = "sync"
	// Async: acknowledged before it is flushed; the engine flushes soon after.
	Async Durability = "async"
	// NoSync: acknowledged before fsync, the WAL/journal is still written.
	NoSync Durability = "nosync"
	// NoWAL: no write-ahead log at all.
	NoWAL Durability = "nowal"
	// Background: the log is written and flushed by a background thread
	// (Ignite's BACKGROUND WAL mode).
	Background Durability = "background"
	// Memory: no persistence at all (Ignite with native persistence off).
	Memory Durability = "memory"
)

// Component is a part of an engine that can live on its own tier.
type Component struct {
	Name string
	// Role is what the component holds, which the analysis reads (whose
	// writes a commit waits for) instead of its name.
	Role Role
	Doc  string
	// DefaultsTo names the component whose tier this one goes on when a
	// placement leaves it out (Ignite's wal_archive goes with wal); empty
	// means every placement must place it.
	DefaultsTo string
}

// DriverClientsWhy is what bounds the clients of tierbench's own driver on
// any engine: each client is a goroutine with its own HDR histograms per
// operation type (about 0.2 MB each, twice over for the swap each second),
// so 1000 clients of ycsb-a took 2 GB and minutes of merging on a 2-core
// machine.
const DriverClientsWhy = "each client is a goroutine of tierbench with its own HDR histograms, about 1 MB per client: beyond this, memory grows by gigabytes and the figures measure Go's scheduler, not the storage"

// Role is what a component holds, in the words the analysis reads.
type Role string

// Roles of components.
const (
	// RoleCommitLog: commits wait for its writes (a WAL, redo log or
	// journal); its device's flushes are the journal figures.
	RoleCommitLog Role = "commit log"
	// RoleData: the data set; the commit waits on it where the engine has
	// no commit log of its own (Redis's append-only file).
	RoleData Role = "data"
	// RoleMetadata: the engine's index of its data (BlueStore's RocksDB).
	RoleMetadata Role = "metadata"
	// RoleArchive: copies of old commit log segments.
	RoleArchive Role = "archive"
	// RoleLogs: the engine's own logs, which nothing waits for.
	RoleLogs Role = "logs"
)

// Mode documents what one durability mode means for this engine.
type Mode struct {
	Durability Durability
	Doc        string
	// Survives lists the crashes (CrashProcess, CrashPower) that, as Doc
	// and the engine's own documentation promise, lose no acknowledged
	// write in this mode on a tier that honours flushes. A crash run that
	// loses one anyway contradicts them: a finding about the engine or
	// about tierbench's mapping of the mode, which reports show as such.
	Survives []string
}

// Crash kinds an engine's mode may promise to survive (Mode.Survives);
// the study's crash: axis uses the same words.
const (
	CrashProcess = "process"
	CrashPower   = "power"
)

// Survives reports whether mode d promises to keep every acknowledged
// write through a crash of kind kind.
func (s Spec) Survives(d Durability, kind string) bool {
	for _, m := range s.Modes {
		if m.Durability == d {
			return slices.Contains(m.Survives, kind)
		}
	}
	return false
}

// Spec is what an engine declares about itself.
type Spec struct {
	Name       string
	Doc        string
	Components []Component
	Modes      []Mode
	Options    []setting.Setting
	// TargetSchemes are the URL schemes of an external server the engine
	// can connect to instead of starting one (a study's target:); none for
	// engines that run inside tierbench.
	TargetSchemes []string
	// InProcess marks an engine that runs inside tierbench's own process
	// (an embedded library): it has no server to target, place in a pod or
	// sample apart from the load generator.
	InProcess bool
	// Crashable marks an engine whose DB is an engine.Crasher: its server
	// runs in processes tierbench can kill and restart, so a study may
	// crash it (crash:).
	Crashable bool
	// CrashNodes, set for an engine of several server processes whose DB
	// is an engine.NodeCrasher, is how many nodes its options run: a
	// crash of part of the cluster must leave at least one.
	CrashNodes func(options Options) int
	// MaxClients is the most clients a study may run against the engine,
	// 0 for no limit; MaxClientsWhy says what runs out beyond it, for the
	// error that refuses a larger count.
	MaxClients    int
	MaxClientsWhy string
	// TierBytes, when set, is what the engine preallocates on each tier a
	// placement names (component to tier) under the given options:
	// ceph's device files, made at full size. A study whose tier cannot
	// hold them is refused when it is read. Nil when the options are wrong
	// (their own check says why).
	TierBytes func(placement map[string]string, options Options) map[string]int64
	// MemoryNeed, when set, is what the engine's own settings hold in
	// memory and the options that say so (Ignite: every node's heap and
	// data region); unset, the sum of its Memory options. A memory limit
	// below it is refused when the study is read.
	MemoryNeed func(options Options) (int64, []string)
	// Models are the data models the engine serves (see Model).
	Models []Model
	// Image is the engine's official container image, which a study on
	// Kubernetes runs (engine.Containerizer); empty for an engine that
	// cannot run on a cluster yet.
	Image string
	// Lanes marks an engine whose sessions can run on tierbench's lanes
	// (driver/lane: a socket taken over from the client library) when
	// the workload's clients can (workload.Spec.Lanes). Elsewhere the
	// clients run a goroutine each whatever the lanes, so a study's
	// builtin:lanes=N would be builtin under another name: it is refused.
	Lanes bool
	// LaneTarget, with Lanes, says why a target server's URL gives
	// connections a lane cannot take over (TLS, which only crypto/tls
	// reads) and how to fix the URL, or "" when its connections are plain.
	LaneTarget func(target *url.URL) string
}

// ComponentNames returns the component names in declaration order.
func (s Spec) ComponentNames() []string {
	names := make([]string, len(s.Components))
	for i, c := range s.Components {
		names[i] = c.Name
	}
	return names
}

// HasComponent reports whether name is one of the engine's components.
func (s Spec) HasComponent(name string) bool {
	for _, c := range s.Components {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Supports reports whether the engine implements durability mode d.
func (s Spec) Supports(d Durability) bool {
	for _, m := range s.Modes {
		if m.Durability == d {
			return true
		}
	}
	return false
}

// ModeNames lists the supported durability modes.
func (s Spec) ModeNames() []string {
	out := make([]string, len(s.Modes))
	for i, m := range s.Modes {
		out[i] = string(m.Durability)
	}
	return out
}

// Config is everything an engine needs to start one run on fresh state.
type Config struct {
	// Dirs maps each component to its own empty folder on its tier.
	Dirs map[string]string
	// Devices maps each component to its tier's device (the source of the
	// mount that holds the tier: /dev/loop3, /dev/pmem0, or tmpfs), for
	// engines that want block devices rather than folders (Ceph BlueStore's
	// block, db and wal). The device is mounted and may hold other data:
	// writing to it raw needs a tier made for that. Empty with Target.
	Devices map[string]string
	// Durability is one of the engine's supported modes.
	Durability Durability
	// Options are the run's engine options, resolved against the Spec
	// (the study's values with every Default) by whoever builds the
	// Config, with Spec.ResolveOptions: the engine reads them by kind
	// and resolves nothing itself. The zero Options, which no one
	// resolved, panics when read.
	Options Options
	// Memory, when set, is the memory cgroup the engine's processes start
	// in (the study's memory setting): its limit bounds them, page cache
	// included.
	// The runner makes and removes it; server engines hand it to their
	// kit (server.Spec.Memory).
	Memory MemoryGroup
	// SyncDelays, when set, make the syncs of files under some tiers take
	// as long as those tiers' devices' (emulate: syscall): server engines
	// hand them to their kit (server.Spec.SyncDelays), which starts the
	// server under them; the embedded Pebble wraps its files' syncs.
	SyncDelays syncdelay.Rules
	// Scratch is a folder that lives for the whole study, where an engine
	// may keep what is expensive to make and the same for every run (an
	// initdb template). Empty means the engine must make everything per run.
	Scratch string
	// Track, when set, records a process the engine starts (a server) so a
	// killed tierbench can be cleaned up; call the returned func once the
	// process is gone.
	Track func(pid int) (untrack func())
	// LockPorts, when set, closes a server's loopback TCP ports to every
	// local user but root and uids, recorded for cleanup (tier.LockPorts):
	// the door a server without authentication of its own would leave.
	LockPorts func(name string, ports, uids []int) (unlock func() error, err error)
	// InChild asks an in-process engine (Spec.InProcess) to run in a child
	// process instead, which a crash run can kill without killing
	// tierbench (engine.Crasher).
	InChild bool
	// Target, when set, is the URL of a server tierbench did not start
	// (postgres://, mysql://, redis://). The engine connects to it and
	// starts nothing; Dirs is then empty and Durability is whatever the
	// server is configured for (recorded as given).
	Target string
}

// Tracked calls cfg.Track if set.
func (cfg Config) Tracked(pid int) func() {
	if cfg.Track == nil {
		return func() {}
	}
	return cfg.Track(pid)
}

// Engine opens instances of one kind of engine.
type Engine interface {
	Spec() Spec
	// Open starts a fresh instance with its components in cfg.Dirs.
	Open(ctx context.Context, cfg Config) (DB, error)
}

// DB is one open engine instance.
type DB interface {
	// NewSession returns a session for one client; sessions are not shared
	// between goroutines.
	NewSession(ctx context.Context) (Session, error)
	// Version names the engine's version, recorded with each run.
	Version() string
	Close() error
}

// Session is one client's handle on a DB. It implements one or more data
// models (Records, ...).
type Session interface {
	Close() error
}

// Field is one field of a record, by index, for partial updates.
type Field struct {
	Index int
	Value []byte
}

// Records is the YCSB data model: a table of keyed records made of fields.
// Slices passed in are owned by the caller and may be reused after return.
type Records interface {
	// Insert writes a whole record (fields in order).
	Insert(ctx context.Context, key []byte, fields [][]byte) error
	// InsertBatch writes many records at once; used by the load phase.
	InsertBatch(ctx context.Context, keys [][]byte, fields [][][]byte) error
	// Read reads all fields of a record; found is false when it is absent.
	Read(ctx context.Context, key []byte) (found bool, err error)
	// Update overwrites the given fields of a record.
	Update(ctx context.Context, key []byte, fields []Field) error
	// Scan reads up to count records in key order from start, returning how many.
	Scan(ctx context.Context, start []byte, count int) (int, error)
}

// SQL is the data model of SQL engines: the client's own connection (no
// shared pool lock on the hot path) and the dialect to write statements in.
type SQL interface {
	Conn() *sql.Conn
	Dialect() Dialect
}

// Dialect is a SQL flavour.
type Dialect string

// Dialects tierbench writes statements for.
const (
	Postgres Dialect = "postgres"
	MySQL    Dialect = "mysql"
)

// Placeholder returns the i-th (from 1) bind parameter.
func (d Dialect) Placeholder(i int) string {
	if d == Postgres {
		return "$" + strconv.Itoa(i)
	}
	return "?"
}

// Placeholders returns n bind parameters from the first, comma separated.
func (d Dialect) Placeholders(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = d.Placeholder(i + 1)
	}
	return strings.Join(p, ", ")
}

// WithSession runs f on a new session of db and closes the session after
// it; a failed close is the error when f succeeded. Loaders use it for their
// one session each.
func WithSession(ctx context.Context, db DB, f func(Session) error) (err error) {
	s, err := db.NewSession(ctx)
	if err != nil {
		return fmt.Errorf("new session: %w", err)
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close session: %w", cerr)
		}
	}()
	return f(s)
}

// Describe renders a one-engine summary for `tierbench engines`.
func Describe(s Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", s.Name, s.Doc)
	b.WriteString("  components:\n")
	for _, c := range s.Components {
		fmt.Fprintf(&b, "    %-12s %s\n", c.Name, c.Doc)
	}
	b.WriteString("  durability:\n")
	for _, m := range s.Modes {
		fmt.Fprintf(&b, "    %-12s %s%s\n", m.Durability, m.Doc, survivesText(m.Survives))
	}
	if s.Crashable {
		b.WriteString("  crash runs: crash: process kills its server and restarts it on what survived (docs/crash-runs.md)\n")
	}
	if len(s.Options) > 0 {
		b.WriteString("  options:\n")
		setting.Describe(&b, s.Options)
	}
	if s.MaxClients > 0 {
		fmt.Fprintf(&b, "  clients: at most %d: %s\n", s.MaxClients, s.MaxClientsWhy)
	}
	if len(s.Models) > 0 {
		models := make([]string, len(s.Models))
		for i, m := range s.Models {
			models[i] = string(m)
		}
		fmt.Fprintf(&b, "  data models: %s (the workloads it runs need one of them)\n", strings.Join(models, ", "))
	}
	if len(s.TargetSchemes) > 0 {
		fmt.Fprintf(&b, "  external server: target: %s://... measures a server tierbench did not start (it places and configures nothing)\n", s.TargetSchemes[0])
	}
	return b.String()
}

// survivesText says which crashes a mode promises to survive, for
// Describe.
func survivesText(kinds []string) string {
	switch {
	case slices.Contains(kinds, CrashPower):
		return " [promises no lost acknowledged write on a process crash or power loss]"
	case slices.Contains(kinds, CrashProcess):
		return " [promises no lost acknowledged write on a process crash]"
	}
	return " [promises nothing through a crash]"
}

// Endpoint is where a server engine listens, for the standard tools
// (pgbench, sysbench) that connect to it on their own.
type Endpoint struct {
	Scheme   string // postgres | mysql | redis
	Host     string
	Port     int
	User     string
	Password string
	Database string
}

// EndpointAt builds an Endpoint from a host:port address.
func EndpointAt(scheme, addr, user, password, database string) Endpoint {
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return Endpoint{Scheme: scheme, Host: host, Port: n, User: user, Password: password, Database: database}
}

// RedactTarget returns a target URL without its password, for the record.
func RedactTarget(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return "(unparseable target)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	for _, k := range []string{"password", "pass"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}
