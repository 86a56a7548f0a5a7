// Package redis is tierbench's Redis engine: a redis-server started for each
// run, bound to 127.0.0.1 on a free port, with its append-only file (AOF) and
// any RDB snapshot in the folder of its one component, data. Records are
// stored the way YCSB's Redis binding stores them (a hash per record plus the
// "_indices" sorted set for scans), so results compare with published YCSB
// numbers.
//
// Redis keeps the whole dataset in memory: reads never touch the data tier.
// The tier only sees AOF appends and fsyncs (and AOF rewrites), so placing
// data on a slower tier shows up in write latency under durability sync, and
// in restart time (the AOF is loaded back at start).
//
// Other local users are kept out: as root, tierbench runs the server as the
// OS user redis (Debian's package makes it; else nobody), never as root, in
// a data folder of mode 0700 it owns; and every client must AUTH with a
// password random per run, which reaches the server in a 0600 config file
// in a private folder (removed once the server has read it), never on its
// command line. The command line keeps its other arguments (set-proc-title
// no), so `ps` shows which data folder a stray server belongs to.
//
// With Config.Target (redis://[user:password@]host:port[/db], or rediss://
// for TLS) the engine starts nothing and connects to that server instead;
// its durability and memory settings are the server's own. A target keeps
// its data between runs, so the load phase (SetupRecords) empties the
// target's database first with FLUSHDB: point it at a database that holds
// nothing else.
package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/setting"
)

// Data is the one component: the folder holding the AOF (appendonlydir/)
// and RDB files, and the server's log.
const Data = "data"

// LogName is the server's log file in the data folder. Redis logs to stdout
// (logfile ""), which server.Start sends to this file, so a failed start's
// own complaints (a bad argument) and the running server's log are in one
// place.
const LogName = "redis.log"

// Timeouts.
const (
	// startTimeout bounds how long a fresh server may take to accept a PING.
	startTimeout = 30 * time.Second
	// loadTimeout bounds loading an existing AOF/RDB after a restart (cache:
	// cold), which takes as long as the dataset is large.
	loadTimeout = 30 * time.Minute
	// stopGrace is how long SIGTERM may take (an fsync of the AOF, or the
	// final RDB save under nowal) before the server is killed.
	stopGrace = 30 * time.Second
	// opTimeout fails an operation that hangs rather than stalling a run; it
	// is long because an fsync on a slow tier under a big load batch can
	// legitimately take seconds.
	opTimeout = 60 * time.Second
)

// maxClients is Redis's default maxclients; the client pool is sized to it
// so a session never waits for a connection.
const maxClients = 10000

// binaries are where redis-server is looked for; a variable so a test can
// check the message for a missing binary.
var binaries = []string{"redis-server", "/usr/bin/redis-server", "/usr/local/bin/redis-server"}

// serverUsers are the OS users redis-server runs as when tierbench is root,
// in order of preference: the Debian package's own, else nobody. Redis does
// not refuse root, but a server anyone can reach must not hold root.
var serverUsers = []string{"redis", "nobody"}

// confName is the server's config file in its private folder: the one
// place the run's password is written.
const confName = "redis.conf"

// Engine opens Redis instances.
type Engine struct{}

var _ engine.Engine = Engine{}

// Spec declares Redis's component, durability modes and options.
func (Engine) Spec() engine.Spec {
	return engine.Spec{
		Name:       "redis",
		MaxClients: 1024, MaxClientsWhy: engine.DriverClientsWhy + "; redis-server itself would take 10000",
		Models:        []engine.Model{engine.ModelRecords},
		Crashable:     true,
		TargetSchemes: []string{"redis", "rediss"},
		Image:         Image,
		Lanes:         true,
		LaneTarget:    laneTarget,
		Doc:           "Redis in-memory key-value server (redis-server, run as OS user redis on 127.0.0.1 with a password per run), records as hashes like YCSB's Redis binding; the tier holds the AOF",
		Components: []engine.Component{
			{Name: Data, Role: engine.RoleData, Doc: "the dir: append-only file (appendonlydir/), RDB snapshot and the server log"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "appendonly yes, appendfsync always: a write is in the AOF and fsynced before its reply; writes of one event-loop pass share one fsync. Survives power loss.", Survives: []string{engine.CrashProcess, engine.CrashPower}},
			{Durability: engine.Async, Doc: "appendonly yes, appendfsync everysec: the AOF is written before the reply and fsynced once a second in the background. Survives a redis-server crash; an OS crash or power loss loses up to ~1 s of writes (~2 s if fsync stalls).", Survives: []string{engine.CrashProcess}},
			{Durability: engine.NoSync, Doc: "appendonly yes, appendfsync no: the AOF is written before the reply, never fsynced; the OS flushes it when it likes (~30 s on Linux). Survives a redis-server crash; an OS crash or power loss loses what the kernel had not written.", Survives: []string{engine.CrashProcess}},
			{Durability: engine.NoWAL, Doc: "appendonly no and save \"\": no AOF and no snapshots while running; every write since start is lost on any crash, even of redis-server alone. A clean stop writes one RDB (shutdown-on-sigterm save) so a restart (cache: cold) finds the data."},
		},
		Options: []setting.Setting{
			{Name: "cache", Kind: setting.Size, Memory: true, Default: "0", Min: "0", Doc: "maxmemory: memory for the dataset, which Redis holds entirely in memory (0 = no limit); with a limit, maxmemory-policy noeviction makes writes fail when full instead of silently evicting records"},
			{Name: "io_threads", Kind: setting.Int, Default: "1", Min: "1", Max: "128", Doc: "io-threads for socket reads and writes (io-threads-do-reads yes when > 1); commands still run on one thread"},
		},
	}
}

// Open starts a redis-server on cfg.Dirs[data]. A folder with an AOF or RDB
// from an earlier Open (a cold restart) is loaded back.
func (e Engine) Open(ctx context.Context, cfg engine.Config) (_ engine.DB, err error) {
	if cfg.Target != "" {
		return openTarget(ctx, cfg.Target)
	}
	dirs, err := server.RunDirs(cfg.Dirs, Data)
	if err != nil {
		return nil, err
	}
	dir := dirs[0]
	args, err := serverArgs(dir, cfg)
	if err != nil {
		return nil, err
	}
	path, err := proc.Find("redis-server", binaries...)
	if err != nil {
		return nil, err
	}
	runAs, err := proc.RunAs("redis-server", "redis-server", serverUsers...)
	if err != nil {
		return nil, err
	}
	if err := prepareDir(ctx, dir, runAs); err != nil {
		return nil, err
	}
	password, err := secrets.New()
	if err != nil {
		return nil, err
	}
	confDir, err := writeConf(ctx, cfg.Scratch, runAs, password)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(confDir) // read at start; the password stays in memory only
	port, err := tcpport.Free()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// The config file comes first: redis-server reads it, then the options.
	args = append(append([]string{filepath.Join(confDir, confName)}, args...), "--port", strconv.Itoa(port))

	d := &DB{addr: addr, dir: dir, password: password, sessions: map[*Session]struct{}{}}
	defer d.closers.CloseOnError(&err)
	d.proc, err = server.Start(server.Spec{Name: "redis-server", Path: path, Args: args, Dir: dir, Log: filepath.Join(dir, LogName),
		User: runAs, Track: cfg.Track, Memory: cfg.Memory, SyncDelays: cfg.SyncDelays, DiskFull: aofShortWrite, DiskFullNote: "the AOF could not grow"})
	if err != nil {
		return nil, err
	}
	d.closers.Add("close redis", d.stop)
	// A server that is loading a big AOF answers -LOADING: it is up, so the
	// start timeout is met, and loading gets its own, longer bound.
	if err := d.proc.WaitReady(ctx, startTimeout, ping(addr, password, true)); err != nil {
		return nil, err
	}
	if err := d.proc.WaitReady(ctx, loadTimeout, ping(addr, password, false)); err != nil {
		return nil, fmt.Errorf("loading its data: %w", err)
	}
	opts := clientOptions(addr)
	opts.Password = password
	if err := d.connect(ctx, opts); err != nil {
		return nil, err
	}
	return d, nil
}

// serverArgs maps the durability and options to redis-server arguments.
// Everything the server writes goes under dir: no pidfile (daemonize no and
// none configured), no unix socket, the log on stdout.
func serverArgs(dir string, cfg engine.Config) ([]string, error) {
	args := []string{
		"--bind", "127.0.0.1",
		"--protected-mode", "yes",
		"--dir", dir,
		"--daemonize", "no",
		"--supervised", "no",
		"--logfile", "",
		"--save", "",
		"--set-proc-title", "no",
		"--always-show-logo", "no",
	}
	switch cfg.Durability {
	case engine.Sync:
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	case engine.Async:
		args = append(args, "--appendonly", "yes", "--appendfsync", "everysec")
	case engine.NoSync:
		args = append(args, "--appendonly", "yes", "--appendfsync", "no")
	case engine.NoWAL:
		// Without this a clean stop under save "" writes nothing, and a cold
		// restart would start empty.
		args = append(args, "--appendonly", "no", "--shutdown-on-sigterm", "save")
	default:
		return nil, fmt.Errorf("durability %q is not supported (use sync, async, nosync or nowal)", cfg.Durability)
	}
	o := cfg.Options
	if n := o.Size("cache"); n > 0 {
		args = append(args, "--maxmemory", strconv.FormatInt(n, 10), "--maxmemory-policy", "noeviction")
	}
	n := o.Int("io_threads")
	args = append(args, "--io-threads", strconv.Itoa(n))
	if n > 1 {
		args = append(args, "--io-threads-do-reads", "yes")
	}
	return args, nil
}

// DB is a running redis-server and the client its sessions share; for a
// target server tierbench did not start, proc is nil and target is set.
type DB struct {
	proc     *server.Process
	closers  server.Closers // what Open got, given back by Close
	target   *engine.Endpoint
	client   *goredis.Client
	addr     string
	dir      string
	password string // the run's, of a started server (requirepass)
	version  string

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
}

var (
	_ engine.DB      = (*DB)(nil)
	_ engine.Checker = (*DB)(nil)
)

// Version is the server's version from INFO ("Redis 7.0.15").
func (d *DB) Version() string { return d.version }

// Addr is the server's 127.0.0.1:port.
func (d *DB) Addr() string { return d.addr }

// Endpoint is the server's address.
func (d *DB) Endpoint() engine.Endpoint {
	if d.target != nil {
		return *d.target
	}
	return engine.EndpointAt("redis", d.addr, "", d.password, "")
}

// PID is the server's process id; 0 for a target server.
func (d *DB) PID() int { return d.proc.PID() }

// Crash kills the server at once (engine.Crasher): a crash run's process crash.
func (d *DB) Crash() error { return d.proc.Crash() }

// Check reports a server that has exited, with the tail of its log; nil
// for a target server, which is not watched.
func (d *DB) Check() error { return d.proc.Died() }

// NewSession claims one connection for one client. The connection is the
// session's alone (a go-redis Conn), so its commands and pipelines never
// wait on a lock another session holds.
func (d *DB) NewSession(ctx context.Context) (engine.Session, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, errors.New("redis session: the engine is closed")
	}
	s := newSession(d, d.client.Conn())
	d.sessions[s] = struct{}{}
	d.mu.Unlock()
	// Connect now, so a dead server fails here and a client's first
	// operation does not pay for the dial.
	if err := s.conn.Ping(ctx).Err(); err != nil {
		s.Close()
		if derr := d.Check(); derr != nil {
			return nil, fmt.Errorf("redis session: %w", derr)
		}
		return nil, fmt.Errorf("redis session: connect to %s: %w", d.addr, err)
	}
	return s, nil
}

// Close closes any sessions still open and the client, then stops the server
// (SIGTERM, killed after 30 s); its folder is left for the caller. A server
// that had already exited is reported, with its log. A target server is
// left running: only the connections are closed.
func (d *DB) Close() error {
	died := d.proc.Died()
	err := d.closers.Close()
	if died != nil {
		return fmt.Errorf("close redis: server had already stopped: %w", died)
	}
	return err
}

// closeSessions marks the DB closed and closes the sessions still open.
func (d *DB) closeSessions() {
	d.mu.Lock()
	d.closed = true
	open := make([]*Session, 0, len(d.sessions))
	for s := range d.sessions {
		open = append(open, s)
	}
	d.mu.Unlock()
	for _, s := range open {
		s.Close()
	}
}

// stop stops the server. It reports what went wrong in stopping it (a
// kill after the grace, an exit with an error), not a death before, which
// Close reports.
func (d *DB) stop() error {
	alive := d.proc.Died() == nil
	if err := d.proc.Stop(stopGrace); err != nil {
		return d.proc.WithLog(err)
	}
	if exited, werr := d.proc.Exited(); alive && exited && werr != nil {
		return d.proc.WithLog(fmt.Errorf("server exited with %v", werr))
	}
	return nil
}

// aofShortWrite is what Redis logs when the AOF cannot grow: it writes
// no errno, but takes a short write for ENOSPC itself (it then refuses
// writes with "MISCONF Errors writing to the AOF file: No space left on
// device", or, under appendfsync always, exits).
var aofShortWrite = regexp.MustCompile("Short write while writing to the AOF file")

// explain adds to an operation's error what the server's log says when the
// server died or dropped the connection, and "disk full" when the log shows
// the AOF could not grow. A target server's log is not ours.
func (d *DB) explain(err error) error {
	return d.proc.Explain(err, server.ConnLost(err))
}

func (d *DB) forget(s *Session) {
	d.mu.Lock()
	delete(d.sessions, s)
	d.mu.Unlock()
}
