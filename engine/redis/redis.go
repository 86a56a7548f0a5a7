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
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
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
		Name:          "redis",
		TargetSchemes: []string{"redis", "rediss"},
		Doc:           "Redis in-memory key-value server (redis-server, run as OS user redis on 127.0.0.1 with a password per run), records as hashes like YCSB's Redis binding; the tier holds the AOF",
		Components: []engine.Component{
			{Name: Data, Doc: "the dir: append-only file (appendonlydir/), RDB snapshot and the server log"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "appendonly yes, appendfsync always: a write is in the AOF and fsynced before its reply; writes of one event-loop pass share one fsync. Survives power loss."},
			{Durability: engine.Async, Doc: "appendonly yes, appendfsync everysec: the AOF is written before the reply and fsynced once a second in the background. Survives a redis-server crash; an OS crash or power loss loses up to ~1 s of writes (~2 s if fsync stalls)."},
			{Durability: engine.NoSync, Doc: "appendonly yes, appendfsync no: the AOF is written before the reply, never fsynced; the OS flushes it when it likes (~30 s on Linux). Survives a redis-server crash; an OS crash or power loss loses what the kernel had not written."},
			{Durability: engine.NoWAL, Doc: "appendonly no and save \"\": no AOF and no snapshots while running; every write since start is lost on any crash, even of redis-server alone. A clean stop writes one RDB (shutdown-on-sigterm save) so a restart (cache: cold) finds the data."},
		},
		Options: []engine.Option{
			{Name: "cache", Kind: engine.KindSize, Default: "0", Doc: "maxmemory: memory for the dataset, which Redis holds entirely in memory (0 = no limit); with a limit, maxmemory-policy noeviction makes writes fail when full instead of silently evicting records"},
			{Name: "io_threads", Kind: engine.KindInt, Default: "1", Doc: "io-threads for socket reads and writes (io-threads-do-reads yes when > 1); commands still run on one thread"},
		},
	}
}

// Open starts a redis-server on cfg.Dirs[data]. A folder with an AOF or RDB
// from an earlier Open (a cold restart) is loaded back.
func (e Engine) Open(ctx context.Context, cfg engine.Config) (engine.DB, error) {
	if cfg.Target != "" {
		return openTarget(ctx, cfg.Target)
	}
	dir := cfg.Dirs[Data]
	if dir == "" {
		return nil, fmt.Errorf("open redis: need a folder for component %s", Data)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open redis: data folder: %w", err)
	}
	args, err := serverArgs(dir, cfg)
	if err != nil {
		return nil, err
	}
	path, err := server.Find("redis-server", binaries...)
	if err != nil {
		return nil, fmt.Errorf("open redis: %w", err)
	}
	runAs, err := serverUser()
	if err != nil {
		return nil, fmt.Errorf("open redis: %w", err)
	}
	if err := prepareDir(ctx, dir, runAs); err != nil {
		return nil, fmt.Errorf("open redis: %w", err)
	}
	password, err := server.NewSecret()
	if err != nil {
		return nil, fmt.Errorf("open redis: %w", err)
	}
	confDir, err := writeConf(ctx, cfg.Scratch, runAs, password)
	if err != nil {
		return nil, fmt.Errorf("open redis: %w", err)
	}
	defer os.RemoveAll(confDir) // read at start; the password stays in memory only
	port, err := server.FreePort()
	if err != nil {
		return nil, fmt.Errorf("open redis: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// The config file comes first: redis-server reads it, then the options.
	args = append(append([]string{filepath.Join(confDir, confName)}, args...), "--port", strconv.Itoa(port))

	proc, err := server.Start(server.Spec{Name: "redis-server", Path: path, Args: args, Dir: dir, Log: filepath.Join(dir, LogName), User: runAs})
	if err != nil {
		return nil, fmt.Errorf("open redis: %w", err)
	}
	d := &DB{proc: proc, untrack: cfg.Tracked(proc.PID()), addr: addr, dir: dir, password: password, sessions: map[*Session]struct{}{}}
	fail := func(err error) (engine.DB, error) {
		_ = proc.Stop(5 * time.Second)
		d.untrack()
		return nil, fmt.Errorf("open redis in %s: %w", dir, err)
	}
	// A server that is loading a big AOF answers -LOADING: it is up, so the
	// start timeout is met, and loading gets its own, longer bound.
	if err := proc.WaitReady(ctx, startTimeout, ping(addr, password, true)); err != nil {
		return fail(err)
	}
	if err := proc.WaitReady(ctx, loadTimeout, ping(addr, password, false)); err != nil {
		return fail(fmt.Errorf("loading its data: %w", err))
	}
	opts := clientOptions(addr)
	opts.Password = password
	if err := d.connect(ctx, opts); err != nil {
		return fail(err)
	}
	return d, nil
}

// serverUser is the OS user redis-server runs as: the first of serverUsers
// that exists when tierbench is root, else tierbench's own user ("").
func serverUser() (string, error) {
	if os.Geteuid() != 0 {
		return "", nil
	}
	for _, u := range serverUsers {
		if _, _, err := server.LookupUser(u); err == nil {
			return u, nil
		}
	}
	return "", fmt.Errorf("redis-server must not run as root, and none of the OS users %s exists (apt-get install redis-server creates user redis)",
		strings.Join(serverUsers, ", "))
}

// prepareDir closes the data folder to other users (mode 0700: the AOF and
// RDB hold every record) and gives it to runAs, whose server writes there;
// a reopened folder's files too. It then checks, as runAs, that the server
// can reach it through the tier's parent folders.
func prepareDir(ctx context.Context, dir, runAs string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	if runAs == "" {
		return nil
	}
	if err := server.ChownAll(runAs, dir); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	return server.CheckReachable(ctx, "Redis", runAs, dir)
}

// writeConf writes the server's config file, which holds only the run's
// password (requirepass; every other setting is on the command line, where
// ps shows it), 0600 in a new private folder of runAs under scratch, where
// a killed run's cleanup finds it. When runAs cannot reach the scratch
// folder (or there is none), the private folder goes in the system's
// temporary folder, which every user may enter. The caller removes it.
func writeConf(ctx context.Context, scratch, runAs, password string) (string, error) {
	dir, err := server.PrivateDir(scratch, "redis-conf-", runAs)
	if err != nil {
		return "", fmt.Errorf("config file: %w", err)
	}
	if scratch != "" && server.CheckReachable(ctx, "Redis", runAs, dir) != nil {
		os.Remove(dir)
		if dir, err = server.PrivateDir("", "tierbench-redis-conf-", runAs); err != nil {
			return "", fmt.Errorf("config file: %w", err)
		}
	}
	text := "# Written by tierbench for one run; removed once the server has read it.\nrequirepass " + password + "\n"
	if err := server.WriteSecretFile(filepath.Join(dir, confName), []byte(text), runAs); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("config file: %w", err)
	}
	return dir, nil
}

// connect makes the client sessions share and reads the server's version.
func (d *DB) connect(ctx context.Context, opts *goredis.Options) error {
	quietOnce.Do(func() { goredis.SetLogger(quietLogger{}) })
	d.client = goredis.NewClient(opts)
	info, err := d.client.Info(ctx, "server").Result()
	if err != nil {
		d.client.Close()
		return fmt.Errorf("INFO server: %w", err)
	}
	d.version = parseVersion(info)
	return nil
}

// openTarget connects to a server tierbench did not start. go-redis reads
// the URL (port 6379 by default, the database number, TLS for rediss://);
// the client otherwise behaves as with a started server.
func openTarget(ctx context.Context, target string) (engine.DB, error) {
	if _, err := server.Target("redis", target, Engine{}.Spec().TargetSchemes...); err != nil {
		return nil, err
	}
	redacted := engine.RedactTarget(target)
	u, err := goredis.ParseURL(target)
	if err != nil {
		return nil, fmt.Errorf("open redis: target %s: %w", redacted, err)
	}
	opts := clientOptions(u.Addr)
	opts.Username, opts.Password, opts.DB, opts.TLSConfig = u.Username, u.Password, u.DB, u.TLSConfig
	d := &DB{addr: u.Addr, sessions: map[*Session]struct{}{},
		target: &engine.Endpoint{Scheme: "redis", User: u.Username, Password: u.Password}}
	if u.DB != 0 {
		d.target.Database = strconv.Itoa(u.DB)
	}
	if host, port, err := net.SplitHostPort(u.Addr); err == nil {
		d.target.Host = host
		d.target.Port, _ = strconv.Atoi(port)
	}
	if err := d.connect(ctx, opts); err != nil {
		return nil, fmt.Errorf("open redis: connect to target %s: %w", redacted, err)
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
		return nil, fmt.Errorf("open redis: durability %q is not supported (use sync, async, nosync or nowal)", cfg.Durability)
	}
	if v, ok := cfg.Options["cache"]; ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("open redis: option cache=%q must be a number of bytes", v)
		}
		if n > 0 {
			args = append(args, "--maxmemory", strconv.FormatUint(n, 10), "--maxmemory-policy", "noeviction")
		}
	}
	if v, ok := cfg.Options["io_threads"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 128 {
			return nil, fmt.Errorf("open redis: option io_threads=%q must be a whole number from 1 to 128", v)
		}
		args = append(args, "--io-threads", strconv.Itoa(n))
		if n > 1 {
			args = append(args, "--io-threads-do-reads", "yes")
		}
	}
	return args, nil
}

// clientOptions configures the shared client sessions take connections from.
func clientOptions(addr string) *goredis.Options {
	return &goredis.Options{
		Addr: addr,
		// RESP2, as YCSB's Jedis speaks; replies to HGETALL are flat arrays.
		Protocol: 2,
		// Redis 7.0 knows neither CLIENT SETINFO nor maintenance
		// notifications; skip the failing round trips on connect.
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		// A failed operation is an error in the run, not something to hide
		// by sending it again.
		MaxRetries:            -1,
		DialTimeout:           5 * time.Second,
		ReadTimeout:           opTimeout,
		WriteTimeout:          opTimeout,
		ContextTimeoutEnabled: true,
		// Each session keeps one connection for its life, so the pool must
		// hold as many as there may be sessions.
		PoolSize:    maxClients,
		PoolTimeout: opTimeout,
	}
}

var errLoading = errors.New("LOADING")

// quietLogger drops go-redis's own log lines ("failed to dial after 5
// attempts"), which would break tierbench's progress lines; every failure
// they describe also comes back as an operation's error. go-redis's logger
// is global, so it is set once, when a Redis engine is first opened.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// ping returns a ready check that sends AUTH with the run's password and
// PING on a fresh connection (AUTH is answered while loading, PING is
// not). It does not use go-redis: a pool that saw failed dials backs off
// for a second, which would slow every start.
func ping(addr, password string, loadingOK bool) func(context.Context) error {
	return func(ctx context.Context) error {
		var dl net.Dialer
		c, err := dl.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		auth := fmt.Sprintf("*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password)
		if _, err := c.Write([]byte(auth + "*1\r\n$4\r\nPING\r\n")); err != nil {
			return err
		}
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line = strings.TrimSpace(line); line != "+OK" {
			return fmt.Errorf("AUTH answered %q", line)
		}
		if line, err = r.ReadString('\n'); err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "+PONG":
			return nil
		case strings.HasPrefix(line, "-LOADING"):
			if loadingOK {
				return nil
			}
			return fmt.Errorf("%w: %s", errLoading, line)
		default:
			return fmt.Errorf("PING answered %q", line)
		}
	}
}

// parseVersion finds redis_version in INFO server output.
func parseVersion(info string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return "Redis " + v
		}
	}
	return "Redis (unknown version)"
}

// DB is a running redis-server and the client its sessions share; for a
// target server tierbench did not start, proc is nil and target is set.
type DB struct {
	proc     *server.Process
	untrack  func()
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

// Check reports a server that has exited, with the tail of its log; nil
// for a target server, which is not watched.
func (d *DB) Check() error { return noteDiskFull(d.proc.Died()) }

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
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	open := make([]*Session, 0, len(d.sessions))
	for s := range d.sessions {
		open = append(open, s)
	}
	d.mu.Unlock()
	for _, s := range open {
		s.Close()
	}
	_ = d.client.Close() // errors only on a second close
	if d.proc == nil {
		return nil
	}
	died := d.proc.Died()
	err := d.proc.Stop(stopGrace)
	d.untrack()
	if died != nil {
		return fmt.Errorf("close redis: server had already stopped: %w", died)
	}
	if err != nil {
		return fmt.Errorf("close redis: %w; last lines of its log:\n%s", err, d.proc.LogTail(15))
	}
	if exited, werr := d.proc.Exited(); exited && werr != nil {
		return fmt.Errorf("close redis: server exited with %v; last lines of its log:\n%s", werr, d.proc.LogTail(15))
	}
	return nil
}

// aofShortWrite is what Redis logs when the AOF cannot grow: it writes
// no errno, but takes a short write for ENOSPC itself (it then refuses
// writes with "MISCONF Errors writing to the AOF file: No space left on
// device", or, under appendfsync always, exits).
const aofShortWrite = "Short write while writing to the AOF file"

// explain adds to an operation's error what the server's log says when the
// server died or dropped the connection, and "disk full" when the log shows
// the AOF could not grow. A target server's log is not ours.
func (d *DB) explain(err error) error {
	if d.proc == nil || err == nil {
		return err
	}
	return noteDiskFull(d.proc.Explain(err, server.ConnLost(err)))
}

// noteDiskFull adds "disk full" to an error holding the server's log tail
// when the log shows the AOF could not grow, which is how the runner knows
// a tier filled up.
func noteDiskFull(err error) error {
	if err != nil && strings.Contains(err.Error(), aofShortWrite) {
		return fmt.Errorf("%w (disk full: the AOF could not grow)", err)
	}
	return err
}

func (d *DB) forget(s *Session) {
	d.mu.Lock()
	delete(d.sessions, s)
	d.mu.Unlock()
}
