// Package postgres is tierbench's PostgreSQL engine: a postgres server run
// for each run as the OS user postgres, listening on 127.0.0.1 only, with its
// cluster folder (PGDATA) and its write-ahead log (pg_wal) placed on separate
// tiers, as initdb --waldir places them. Clients talk SQL to it over pgx's
// database/sql adapter and serve the records data model through sqlrecords.
//
// No local user gets in without the run's password: TCP logins use
// scram-sha-256 with a password random per run, which reaches the server
// only as a SCRAM verifier (over psql's standard input) and the clients and
// tools only through memory and 0600 files, never a command line. The Unix
// socket lives in a private (0700, postgres-owned) folder in the scratch
// folder, where only the postgres OS user logs in (peer); a killed run
// leaves no socket or lock file in /tmp.
//
// initdb is slow (a few seconds) and its output is the same for every run,
// so it runs once per study into the study's scratch folder; each run copies
// that template into its own folders.
//
// With Config.Target (postgres://user:password@host:port/db?sslmode=...)
// the engine starts nothing and connects to that server instead: no
// folders, no template, its durability and options are the server's own.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" database/sql driver

	"github.com/tierbench/tierbench/engine"
	// PostgreSQL's lane protocol registers itself (engine/sqlwire).
	_ "github.com/tierbench/tierbench/engine/postgres/pgwire"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/engine/sqlrecords"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/setting"
)

// Component names.
const (
	Data = "data"
	WAL  = "wal"
)

const (
	// osUser runs initdb and the server: PostgreSQL refuses to run as root.
	osUser = "postgres"
	// database is the database the records table lives in. The stock
	// postgres database saves a CREATE DATABASE (a copy of template1 written
	// through the WAL) in every run.
	database = "postgres"
	// maxConnections is fixed rather than derived from the study's client
	// counts: it sizes shared memory (lock table, PGPROC array), and a fixed
	// value keeps every run of a study on the same server configuration. 500
	// covers clients: [..., 256] plus loaders with room to spare.
	maxConnections = 500
	// serverClientsWhy is what bounds a study's clients: those
	// connections, less the load phase's and tierbench's own.
	serverClientsWhy = "tierbench starts the server with 500 connections, a fixed number because they size its shared memory, and they must also hold the load phase's connections and tierbench's own"
	// readyTimeout bounds a start, crash recovery included.
	readyTimeout = 60 * time.Second
	// stopGrace is how long a fast shutdown (which ends with a checkpoint)
	// may take before the server is killed.
	stopGrace = 30 * time.Second
	// logName is the server's log, in the data folder so it stays with the
	// run folder (kept with --keep) and names a per-run file without
	// bookkeeping.
	logName = "tierbench-postgres.log"
	// socketPrefix names the run's private socket folder in the scratch
	// folder (or, when that path is too long, in /tmp). Not the data
	// folder: tier paths can be long, and a socket path is limited.
	socketPrefix = "pgsock-"
	// maxSocketPath is the longest Unix socket path PostgreSQL accepts
	// (sun_path's 108 bytes with its NUL).
	maxSocketPath = 107
	// templateName is the initdb output in the scratch folder.
	templateName = "postgres-template"
)

// Engine opens PostgreSQL instances.
type Engine struct{}

var _ engine.Engine = Engine{}

// Spec declares PostgreSQL's components, durability modes and options.
func (Engine) Spec() engine.Spec {
	return engine.Spec{
		Name:       "postgres",
		MaxClients: 480, MaxClientsWhy: serverClientsWhy,
		Models:        []engine.Model{engine.ModelRecords, engine.ModelSQL},
		Crashable:     true,
		TargetSchemes: []string{"postgres", "postgresql"},
		Image:         Image,
		Lanes:         true,
		LaneTarget:    laneTarget,
		Doc:           "PostgreSQL server (run as OS user postgres on 127.0.0.1, scram-sha-256 with a password per run), one fresh cluster per run copied from a per-study initdb template; records over SQL (pgx)",
		Components: []engine.Component{
			{Name: Data, Role: engine.RoleData, Doc: "the cluster folder (PGDATA): tables, indexes, catalogs, configuration and the server log"},
			{Name: WAL, Role: engine.RoleCommitLog, Doc: "write-ahead log segments (pg_wal; PGDATA/pg_wal is a symlink to this folder, as initdb --waldir makes it)"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "synchronous_commit=on, fsync=on: a commit waits for its WAL flush; concurrent commits share flushes (group commit). Survives power loss if the tier honours flushes.", Survives: []string{engine.CrashProcess, engine.CrashPower}},
			{Durability: engine.Async, Doc: "synchronous_commit=off, fsync=on: commits are acknowledged before their WAL is flushed; the WAL writer flushes within wal_writer_delay (200ms, at worst 3x that). A server or OS crash can lose the last acknowledged commits; the cluster is never corrupted."},
			{Durability: engine.NoSync, Doc: "fsync=off, synchronous_commit=off: nothing is ever flushed. A server crash can lose the last commits; an OS crash or power loss can CORRUPT the cluster. For measuring only."},
		},
		Options: []setting.Setting{
			{Name: "cache", Kind: setting.Size, Memory: true, Default: "128MiB", Min: "128KiB", Doc: "shared_buffers, PostgreSQL's own page cache (the OS page cache comes on top)"},
			{Name: "max_wal_size", Kind: setting.Size, Default: "1GiB", Min: "32MiB", Doc: "WAL volume that triggers a checkpoint (max_wal_size; PostgreSQL's least is two 16MiB segments)"},
			{Name: "checkpoint_timeout", Kind: setting.Int, Default: "300", Min: "30", Max: "86400", Unit: "seconds", Doc: "time between timed checkpoints (checkpoint_timeout)"},
			{Name: "full_page_writes", Kind: setting.Bool, Default: "true", Doc: "log each page whole in the WAL on its first change after a checkpoint (full_page_writes), so that recovery can repair a page a power cut tore; off is safe only where the device writes 8 KiB pages atomically"},
		},
	}
}

// settings is the run's configuration, checked before anything is started.
type settings struct {
	sharedBuffersKB   int64
	maxWALSizeMB      int64
	checkpointTimeout int
	fsync             bool
	syncCommit        bool
	fullPageWrites    bool
}

func parseSettings(cfg engine.Config) (settings, error) {
	var s settings
	switch cfg.Durability {
	case engine.Sync:
		s.fsync, s.syncCommit = true, true
	case engine.Async:
		s.fsync, s.syncCommit = true, false
	case engine.NoSync:
		s.fsync, s.syncCommit = false, false
	default:
		return s, fmt.Errorf("durability %q is not supported (use sync, async or nosync)", cfg.Durability)
	}
	o := cfg.Options
	s.sharedBuffersKB = o.Size("cache") >> 10
	s.maxWALSizeMB = o.Size("max_wal_size") >> 20
	s.checkpointTimeout = o.Int("checkpoint_timeout")
	s.fullPageWrites = o.Bool("full_page_writes")
	return s, nil
}

// autoConf renders postgresql.auto.conf, which PostgreSQL reads after
// postgresql.conf, so these settings win over initdb's defaults. A file
// rather than -c flags keeps a kept run folder startable by hand.
func (s settings) autoConf(port int, sockDir string) string {
	lines := []string{
		"# Written by tierbench for this run.",
		// Never a public address: a benchmark server is no one else's.
		"listen_addresses = '127.0.0.1'",
		fmt.Sprintf("port = %d", port),
		// The socket in the run's private folder, closed to other users
		// twice: by the folder's mode and by the socket's own.
		fmt.Sprintf("unix_socket_directories = '%s'", sockDir),
		"unix_socket_permissions = 0700",
		// Names the run's processes in ps ("postgres: tierbench-PORT: ...").
		fmt.Sprintf("cluster_name = 'tierbench-%d'", port),
		// Dynamic shared memory as files in PGDATA/pg_dynshmem rather than
		// POSIX segments in /dev/shm, which a crashed or killed server would
		// leave behind: the run folder takes them away in every case.
		"dynamic_shared_memory_type = mmap",
		// The server's stderr is the run's log file (server.Start).
		"logging_collector = off",
		"log_destination = 'stderr'",
	}
	for _, p := range s.params() {
		lines = append(lines, fmt.Sprintf("%s = '%s'", p[0], p[1]))
	}
	return strings.Join(lines, "\n") + "\n"
}

// params are the run's server settings wherever the server runs: this
// machine's postgresql.auto.conf and a container's -c flags.
func (s settings) params() [][2]string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	minWAL := min(s.maxWALSizeMB, 80) // min_wal_size may not exceed max_wal_size
	return [][2]string{
		{"password_encryption", "scram-sha-256"},
		{"max_connections", strconv.Itoa(maxConnections)},
		{"shared_buffers", fmt.Sprintf("%dkB", s.sharedBuffersKB)},
		{"max_wal_size", fmt.Sprintf("%dMB", s.maxWALSizeMB)},
		{"min_wal_size", fmt.Sprintf("%dMB", minWAL)},
		{"checkpoint_timeout", fmt.Sprintf("%ds", s.checkpointTimeout)},
		{"fsync", onOff(s.fsync)},
		{"synchronous_commit", onOff(s.syncCommit)},
		{"full_page_writes", onOff(s.fullPageWrites)},
		// Checkpoints in the log, with times tierbench reads back
		// (events.go): the default prefix, in UTC whatever the host's zone.
		{"log_checkpoints", "on"},
		{"log_line_prefix", "%m [%p] "},
		{"log_timezone", "UTC"},
	}
}

// Open starts a PostgreSQL server on a fresh cluster in cfg.Dirs, or, when
// the data folder already holds a cluster (the runner reopens an engine for
// cache: cold), restarts that cluster.
func (e Engine) Open(ctx context.Context, cfg engine.Config) (_ engine.DB, err error) {
	if cfg.Target != "" {
		return openTarget(ctx, cfg.Target)
	}
	dirs, err := server.RunDirs(cfg.Dirs, Data, WAL)
	if err != nil {
		return nil, err
	}
	dataDir, walDir := dirs[0], dirs[1]
	set, err := parseSettings(cfg)
	if err != nil {
		return nil, err
	}
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	pg, err := lookupOSUser()
	if err != nil {
		return nil, err
	}

	d := &DB{dataDir: dataDir, uid: pg.uid, amcheck: filepath.Join(filepath.Dir(bins.postgres), "pg_amcheck")}
	defer d.closers.CloseOnError(&err)
	scratch, err := server.Scratch(cfg.Scratch, "tierbench-postgres-", &d.closers)
	if err != nil {
		return nil, err
	}
	if cfg.Scratch == "" {
		d.tmpScratch = scratch
	}
	tmpl := filepath.Join(scratch, templateName)
	if _, err := template(bins, pg, tmpl).Ensure(ctx); err != nil {
		return nil, err
	}
	if err := prepareCluster(ctx, tmpl, pg, dataDir, walDir); err != nil {
		return nil, err
	}
	if d.port, err = tcpport.Free(); err != nil {
		return nil, err
	}
	if d.sockDir, err = socketFolder(scratch); err != nil {
		return nil, err
	}
	// The socket and its lock file go with their folder, after a crash too.
	d.closers.RemoveAll(d.sockDir)
	for name, text := range map[string]string{"postgresql.auto.conf": set.autoConf(d.port, d.sockDir), "pg_hba.conf": hbaConf} {
		if err := writeConf(filepath.Join(dataDir, name), text, pg); err != nil {
			return nil, err
		}
	}
	if d.password, err = secrets.New(); err != nil {
		return nil, err
	}

	d.proc, err = server.Start(server.Spec{Name: "postgres", Path: bins.postgres, Args: []string{"-D", dataDir},
		Dir: dataDir, Log: filepath.Join(dataDir, logName), User: osUser, Track: cfg.Track, Memory: cfg.Memory, SyncDelays: cfg.SyncDelays})
	if err != nil {
		return nil, err
	}
	d.closers.Add("", func() error {
		err := d.proc.Stop(stopGrace, syscall.SIGINT) // fast shutdown
		// After a clean shutdown this finds nothing: the postmaster exits last.
		reapCrashed(dataDir, pg.uid)
		return err
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(d.port))
	if err := d.proc.WaitReady(ctx, readyTimeout, acceptsLogins(addr)); err != nil {
		return nil, err
	}
	if err := setPassword(ctx, bins.psql, d.sockDir, d.port, d.password); err != nil {
		return nil, d.explain(err)
	}
	// The password is set on the parsed configuration, never written into
	// a DSN that a parse error could quote.
	cc, err := pgx.ParseConfig(fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable connect_timeout=10 application_name=tierbench",
		d.port, osUser, database))
	if err != nil {
		return nil, err
	}
	cc.Password = d.password
	if err := d.connect(ctx, cc); err != nil {
		return nil, d.explain(err)
	}
	return d, nil
}

// connect opens the clients' pool on cc, which Close closes, and reads the
// server's version. Every client holds its own connection for the whole
// run; a returned connection stays open for the next session (database/sql
// would otherwise keep only 2 idle ones and reconnect the rest).
func (d *DB) connect(ctx context.Context, cc *pgx.ConnConfig) error {
	d.db = stdlib.OpenDB(*cc)
	d.closers.Add("close postgres connections", d.db.Close)
	d.db.SetMaxOpenConns(0)
	d.db.SetMaxIdleConns(maxConnections)
	if err := d.db.PingContext(ctx); err != nil {
		return err
	}
	var v string
	if err := d.db.QueryRowContext(ctx, "SHOW server_version").Scan(&v); err != nil {
		return fmt.Errorf("read the server version: %w", err)
	}
	d.version = "PostgreSQL " + v
	return nil
}

// laneTarget says why a target's connections may not be plain, which
// clients on lanes need (engine.Spec.LaneTarget): pgx's sslmode, from the
// URL or PGSSLMODE, is prefer unless set, which takes TLS wherever the
// server offers it.
func laneTarget(u *url.URL) string {
	mode := u.Query().Get("sslmode")
	if mode == "" {
		mode = os.Getenv("PGSSLMODE")
	}
	switch mode {
	case "disable", "allow":
		return ""
	case "":
		return "the target's sslmode is prefer (pgx's default), which takes TLS wherever the server offers it: add ?sslmode=disable to the target"
	}
	return fmt.Sprintf("the target's sslmode=%s takes TLS: make it sslmode=disable", mode)
}

// openTarget connects to a server tierbench did not start. pgx reads the
// URL (its defaults: port 5432, the OS user, the database named as the
// user; and its parameters: sslmode, ...); tierbench adds a connect
// timeout and its application name unless the URL sets them. pgx's parse
// errors show the URL with its password masked.
func openTarget(ctx context.Context, target string) (engine.DB, error) {
	parse := func(u *url.URL) (*pgx.ConnConfig, error) {
		q := u.Query()
		for k, v := range map[string]string{"connect_timeout": "10", "application_name": "tierbench"} {
			if !q.Has(k) {
				q.Set(k, v)
			}
		}
		u.RawQuery = q.Encode()
		return pgx.ParseConfig(u.String())
	}
	return server.OpenTarget(ctx, Engine{}.Spec(), target, parse, func(ctx context.Context, cc *pgx.ConnConfig) (_ engine.DB, err error) {
		d := &DB{target: &engine.Endpoint{Scheme: "postgres", Host: cc.Host, Port: int(cc.Port),
			User: cc.User, Password: cc.Password, Database: cc.Database}}
		defer d.closers.CloseOnError(&err)
		return d, d.connect(ctx, cc)
	})
}

// DB is a running PostgreSQL server: one Open started (proc), or a target
// server tierbench only connects to (target; proc is nil).
type DB struct {
	db         *sql.DB
	proc       *server.Process
	target     *engine.Endpoint
	closers    server.Closers // what Open got, given back by Close
	version    string
	dataDir    string
	uid        int    // the server's OS user
	sockDir    string // the run's private socket folder, removed on Close
	port       int
	password   string // the run's, of the superuser role clients log in as
	tmpScratch string // removed on Close when Open made it
	amcheck    string // pg_amcheck of the server's installation
}

var (
	_ engine.DB      = (*DB)(nil)
	_ engine.Checker = (*DB)(nil)
)

// Version is the server's version, e.g. "PostgreSQL 15.18 (Debian ...)".
func (d *DB) Version() string { return d.version }

// Endpoint is the server's address and the run's account, for pgbench and
// sysbench, which must keep its password off their command lines.
func (d *DB) Endpoint() engine.Endpoint {
	if d.target != nil {
		return *d.target
	}
	return engine.Endpoint{Scheme: "postgres", Host: "127.0.0.1", Port: d.port, User: osUser, Password: d.password, Database: database}
}

// PID is the postmaster's process id, for telemetry; 0 for a target
// server.
func (d *DB) PID() int { return d.proc.PID() }

// Crash kills the server at once (engine.Crasher): a crash run's process
// crash. The postmaster's children leave its process group (setsid), so
// they are found by their working folder and killed in the same breath:
// left alone they would notice its death and exit on their own, the WAL
// writer perhaps flushing first, which no crash allows.
func (d *DB) Crash() error {
	dir := d.dataDir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	for _, pid := range serverProcesses(dir, d.uid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	err := d.proc.Crash()
	reapCrashed(d.dataDir, d.uid)
	return err
}

// Check reports a server that has exited mid-run, with its log's tail;
// nil for a target server, which is not watched.
func (d *DB) Check() error { return d.proc.Died() }

// explain replaces a driver error by the server's death, which is what a
// user needs to read when the server is gone.
func (d *DB) explain(err error) error {
	if died := d.Check(); died != nil {
		return died
	}
	return err
}

// explainOp adds to an operation's error what the server's log says when
// the server died or dropped the connection. A backend that hits a PANIC
// (no space left for a new WAL segment: "could not write to file
// pg_wal/xlogtemp...: No space left on device") takes the whole server
// through a crash restart: its client reads only "unexpected EOF" and the
// others "terminating connection because of crash of another server
// process"; the reason is in the log. A target server's log is not ours.
func (d *DB) explainOp(err error) error {
	return d.proc.Explain(err, connLost(err))
}

// connLost reports whether err ends the connection: a FATAL or PANIC
// report from the server (a shutdown, a crash restart) or a broken
// connection.
func connLost(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Severity == "FATAL" || pe.Severity == "PANIC"
	}
	// pgx closes a connection on its first read error (often "unexpected
	// EOF"); a statement sent after that, such as the COMMIT of a batch,
	// reads only "conn closed", yet the server's log explains it the same.
	return errors.Is(err, pgconn.ErrConnClosed) || server.ConnLost(err)
}

// NewSession returns a session on its own connection.
func (d *DB) NewSession(ctx context.Context) (engine.Session, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("new connection: %w", d.explain(err))
	}
	return sqlrecords.NewSession(conn, engine.Postgres, "postgres: close connection", d.explainOp), nil
}

// Close shuts the server down (fast shutdown: SIGINT), kills it if it has
// not stopped within 30s, and leaves its folders to the caller. For a
// target server it only closes the connections.
func (d *DB) Close() error { return d.closers.Close() }

// Session is one client's connection. It serves the records data model and
// exposes the connection to SQL workloads. Not safe for concurrent use.
type Session = sqlrecords.Session

// BufferCounts implements engine.BufferCounter from pg_stat_database.
func (d *DB) BufferCounts(ctx context.Context) (engine.BufferCounts, error) {
	return engine.SQLBufferCounts(ctx, d)
}

// KeepReason implements engine.StepKeeper: a step's updates leave dead
// tuples autovacuum reclaims and a few history rows; over a search's
// minutes the tables stay near their loaded size.
func (Engine) KeepReason() string {
	return "a step's updates leave dead tuples that autovacuum reclaims and, in TPC-B, a few history rows: over a search's minutes the tables stay near their loaded size, and the shared buffers a step warms are what the next step's warmup warms anyway"
}
