// Package mariadb is tierbench's MariaDB engine: a mariadbd server per run,
// with its InnoDB datadir (tablespaces, undo, system tables) and its InnoDB
// redo log (innodb_log_group_home_dir) placed on separate tiers. Clients
// talk to it over TCP on 127.0.0.1 with server-side prepared statements and
// serve the records data model through sqlrecords.
//
// Each study installs the system tables once (mariadb-install-db into the
// study's scratch folder); each run copies that template, so runs start from
// identical state without paying for a bootstrap.
package mariadb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/engine/sqlrecords"
)

// Component names.
const (
	Data = "data"
	Redo = "redo"
)

// Database is the database clients use.
const Database = "tierbench"

// clientUser is the account clients log in as over TCP; its password is
// random per run, so a server left behind accepts no one.
const clientUser = "tierbench"

// serverUser is the OS user mariadbd runs as when tierbench is root
// (mariadbd refuses root unless told, and should not hold root anyway).
const serverUser = "mysql"

// stopGrace is how long a stopping server may flush before it is killed.
const stopGrace = 60 * time.Second

// readyTimeout bounds a start: a cold start takes about a second, but a
// large buffer pool takes longer to allocate.
const readyTimeout = 2 * time.Minute

// Engine opens MariaDB instances.
type Engine struct{}

var _ engine.Engine = Engine{}

// Spec declares MariaDB's components, durability modes and options.
func (Engine) Spec() engine.Spec {
	return engine.Spec{
		Name: "mariadb",
		Doc:  "MariaDB server (mariadbd, InnoDB) per run on 127.0.0.1; SQL and records over server-side prepared statements",
		Components: []engine.Component{
			{Name: Data, Doc: "datadir: InnoDB tablespaces (ibdata1, <db>/<table>.ibd), undo, system tables; the binary log when on"},
			{Name: Redo, Doc: "InnoDB redo log ib_logfile0 (innodb_log_group_home_dir)"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "innodb_flush_log_at_trx_commit=1 (and sync_binlog=1 with binlog): every commit " +
				"flushes the redo log before it is acknowledged; concurrent commits share a flush (group commit). Survives power loss."},
			{Durability: engine.Async, Doc: "innodb_flush_log_at_trx_commit=2: each commit is written to the OS, which is " +
				"flushed about once a second. A server crash loses nothing; an OS crash or power loss loses up to ~1 s of commits."},
			{Durability: engine.NoSync, Doc: "innodb_flush_log_at_trx_commit=0: commits stay in the server's log buffer, written " +
				"and flushed about once a second. Even a server crash loses up to ~1 s of commits."},
		},
		Options: []engine.Option{
			{Name: "cache", Kind: engine.KindSize, Default: "128MiB", Doc: "InnoDB buffer pool (innodb_buffer_pool_size)"},
			{Name: "redo_log_size", Kind: engine.KindSize, Default: "96MiB", Doc: "InnoDB redo log size (innodb_log_file_size)"},
			{Name: "binlog", Kind: engine.KindBool, Default: "false", Doc: "write the binary log (in the data folder), as a replicated primary does"},
		},
	}
}

// options are the study's engine options with defaults applied.
type options struct {
	cache, redoLogSize int64
	binlog             bool
}

func parseOptions(o map[string]string) (options, error) {
	opts := options{cache: 128 << 20, redoLogSize: 96 << 20}
	var err error
	if opts.cache, err = sizeOption(o, "cache", opts.cache); err != nil {
		return opts, err
	}
	if opts.redoLogSize, err = sizeOption(o, "redo_log_size", opts.redoLogSize); err != nil {
		return opts, err
	}
	if v, ok := o["binlog"]; ok {
		if opts.binlog, err = strconv.ParseBool(v); err != nil {
			return opts, fmt.Errorf("open mariadb: option binlog=%q must be true or false", v)
		}
	}
	return opts, nil
}

func sizeOption(opts map[string]string, name string, def int64) (int64, error) {
	return engine.PositiveOption("mariadb", opts, name, def, "a positive number of bytes")
}

// flushAtCommit maps a durability mode to innodb_flush_log_at_trx_commit.
func flushAtCommit(d engine.Durability) (int, error) {
	switch d {
	case engine.Sync:
		return 1, nil
	case engine.Async:
		return 2, nil
	case engine.NoSync:
		return 0, nil
	}
	return 0, fmt.Errorf("open mariadb: durability %q is not supported (use sync, async or nosync)", d)
}

// Open installs the study's template if needed, copies it into cfg.Dirs,
// starts mariadbd on a free port of 127.0.0.1 and creates the tierbench
// database and client account.
func (e Engine) Open(ctx context.Context, cfg engine.Config) (_ engine.DB, err error) {
	dirs, err := server.RunDirs("mariadb", cfg.Dirs, Data, Redo)
	if err != nil {
		return nil, err
	}
	dataDir, redoDir := dirs[0], dirs[1]
	flush, err := flushAtCommit(cfg.Durability)
	if err != nil {
		return nil, err
	}
	opts, err := parseOptions(cfg.Options)
	if err != nil {
		return nil, err
	}
	mariadbd, err := server.Find("mariadb-server", "mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld")
	if err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	installDB, err := server.Find("mariadb-server", "mariadb-install-db", "/usr/bin/mariadb-install-db", "mysql_install_db")
	if err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	// As root the server runs as mysql; otherwise as tierbench's own user,
	// which then owns every folder already.
	runAs := ""
	if os.Geteuid() == 0 {
		runAs = serverUser
	}

	d := &DB{}
	defer func() {
		if err != nil {
			d.cleanup()
		}
	}()
	scratch := cfg.Scratch
	if scratch == "" {
		if scratch, err = os.MkdirTemp("", "tierbench-mariadb-"); err != nil {
			return nil, fmt.Errorf("open mariadb: scratch folder: %w", err)
		}
		d.tempDirs = append(d.tempDirs, scratch)
	}
	tmpl, err := ensureTemplate(ctx, scratch, installDB, mariadbd, runAs)
	if err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	if err := copyTemplate(tmpl, dataDir, redoDir); err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	socket := filepath.Join(dataDir, "mariadbd.sock")
	if len(socket) > 100 { // sun_path holds 108 bytes
		dir, err := os.MkdirTemp("", "tbm-")
		if err != nil {
			return nil, fmt.Errorf("open mariadb: socket folder: %w", err)
		}
		d.tempDirs = append(d.tempDirs, dir)
		socket = filepath.Join(dir, "mariadbd.sock")
	}
	// The datadir holds the socket of the passwordless root@localhost:
	// only root and the server's user may enter it.
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	if runAs != "" {
		if err := server.ChownAll(runAs, dataDir, redoDir, filepath.Dir(socket)); err != nil {
			return nil, fmt.Errorf("open mariadb: %w", err)
		}
		for _, dir := range []string{dataDir, redoDir} {
			if err := checkReach(ctx, runAs, dir); err != nil {
				return nil, fmt.Errorf("open mariadb: %w", err)
			}
		}
	}
	port, err := server.FreePort()
	if err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	d.addr = net127(port)
	args := []string{
		"--no-defaults",
		"--datadir=" + dataDir,
		"--innodb-log-group-home-dir=" + redoDir,
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(port),
		"--socket=" + socket,
		"--pid-file=" + filepath.Join(dataDir, "mariadbd.pid"),
		// Accounts match by address, so 127.0.0.1 is not "localhost" (the
		// passwordless root is socket-only), and connects do no DNS.
		"--skip-name-resolve",
		"--max-connections=500",
		// As distributions configure it (--no-defaults would leave latin1).
		"--character-set-server=utf8mb4",
		"--innodb-flush-log-at-trx-commit=" + strconv.Itoa(flush),
		"--innodb-buffer-pool-size=" + strconv.FormatInt(opts.cache, 10),
		"--innodb-log-file-size=" + strconv.FormatInt(opts.redoLogSize, 10),
		// Every run starts cold and identical: no buffer pool warm-up
		// from the template, no dump to write while stopping.
		"--innodb-buffer-pool-load-at-startup=OFF",
		"--innodb-buffer-pool-dump-at-shutdown=OFF",
	}
	if opts.binlog {
		syncBinlog := "0"
		if cfg.Durability == engine.Sync {
			syncBinlog = "1"
		}
		args = append(args, "--log-bin="+filepath.Join(dataDir, "mariadb-bin"), "--server-id=1", "--sync-binlog="+syncBinlog)
	} else {
		args = append(args, "--skip-log-bin")
	}
	// No --user: the process starts as runAs. mariadbd switching users
	// itself would clear the parent-death signal (the kernel resets it on
	// a credential change), and a killed tierbench would leave it running.
	d.log = filepath.Join(dataDir, "mariadbd.log")
	d.proc, err = server.Start(server.Spec{Name: "mariadb", Path: mariadbd, Args: args, Dir: dataDir, Log: d.log, User: runAs})
	if err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	d.untrack = cfg.Tracked(d.proc.PID())

	// Setup goes through the socket as root@localhost, which has no
	// password and is reachable only by users who can enter the datadir.
	admin := mysql.NewConfig()
	admin.User, admin.Net, admin.Addr = "root", "unix", socket
	admin.Timeout = 5 * time.Second
	admin.Logger = quietLogger{}
	adminConn, err := mysql.NewConnector(admin)
	if err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	adminDB := sql.OpenDB(adminConn)
	defer adminDB.Close()
	if err := d.proc.WaitReady(ctx, readyTimeout, adminDB.PingContext); err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	password, err := randomPassword()
	if err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	if err := setup(ctx, adminDB, password); err != nil {
		return nil, d.failed(err)
	}
	client := mysql.NewConfig()
	d.password = password
	client.User, client.Passwd, client.Net, client.Addr, client.DBName = clientUser, password, "tcp", d.addr, Database
	client.InterpolateParams = false // server-side prepared statements, as the workloads intend
	client.Timeout = 10 * time.Second
	client.Logger = quietLogger{}
	clientConn, err := mysql.NewConnector(client)
	if err != nil {
		return nil, fmt.Errorf("open mariadb: %w", err)
	}
	d.db = sql.OpenDB(clientConn)
	d.db.SetMaxOpenConns(0) // unlimited: one connection per client session
	d.db.SetMaxIdleConns(8)
	var version string
	if err := d.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return nil, d.failed(fmt.Errorf("connect as %s over TCP %s: %w", clientUser, d.addr, err))
	}
	// "10.11.19-MariaDB-0+deb12u1" -> "MariaDB 10.11.19-0+deb12u1"
	d.version = "MariaDB " + strings.Replace(version, "-MariaDB", "", 1)
	d.templateVersion = tmpl.version
	return d, nil
}

func net127(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// setup creates the database and the client account, the only one that
// can log in over TCP (the template has no other).
func setup(ctx context.Context, db *sql.DB, password string) error {
	for _, s := range []string{
		"CREATE DATABASE " + Database,
		fmt.Sprintf("CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s'", clientUser, password),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON %s.* TO '%s'@'127.0.0.1'", Database, clientUser),
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			if strings.Contains(s, "IDENTIFIED BY") {
				s = "CREATE USER " + clientUser // keep the password out of errors
			}
			return fmt.Errorf("setup: %s: %w", s, err)
		}
	}
	return nil
}

func randomPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("client password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// DB is a running mariadbd for one run.
type DB struct {
	proc            *server.Process
	untrack         func()
	db              *sql.DB
	addr            string
	log             string
	version         string
	templateVersion string
	tempDirs        []string
	password        string // the client account's, random per run
	closeOnce       sync.Once
	closeErr        error
}

var (
	_ engine.DB      = (*DB)(nil)
	_ engine.Checker = (*DB)(nil)
)

// failed wraps an error of a started server with its log's tail, which
// usually says why.
func (d *DB) failed(err error) error {
	return fmt.Errorf("open mariadb: %w; last lines of its log %s:\n%s", err, d.log, d.proc.LogTail(15))
}

// Version is the running server's version, e.g. "MariaDB 10.11.19-0+deb12u1".
func (d *DB) Version() string { return d.version }

// Addr is the server's TCP address (127.0.0.1:port).
func (d *DB) Addr() string { return d.addr }

// Endpoint is the client account's address, for sysbench.
func (d *DB) Endpoint() engine.Endpoint {
	return engine.EndpointAt("mysql", d.addr, clientUser, d.password, Database)
}

// PID is the server's process id, for telemetry.
func (d *DB) PID() int { return d.proc.PID() }

// Check reports a server that has exited, with its log's tail.
func (d *DB) Check() error { return d.proc.Died() }

// Close stops the server (SIGTERM, killed after a grace period) and leaves
// the folders for the caller to remove.
func (d *DB) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.cleanup() })
	return d.closeErr
}

// cleanup releases whatever Open got so far.
func (d *DB) cleanup() error {
	var errs []error
	if d.db != nil {
		if err := d.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close mariadb clients: %w", err))
		}
	}
	if d.proc != nil {
		if err := d.proc.Stop(stopGrace); err != nil {
			errs = append(errs, fmt.Errorf("close mariadb: %w; last lines of its log %s:\n%s", err, d.log, d.proc.LogTail(15)))
		}
	}
	if d.untrack != nil {
		d.untrack()
	}
	for _, dir := range d.tempDirs {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("close mariadb: %w", err))
		}
	}
	return errors.Join(errs...)
}

// NewSession opens one client connection with its own prepared statements.
func (d *DB) NewSession(ctx context.Context) (engine.Session, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		if died := d.proc.Died(); died != nil {
			return nil, fmt.Errorf("mariadb session: %w", died)
		}
		return nil, fmt.Errorf("mariadb session: connect to %s: %w", d.addr, err)
	}
	return sqlrecords.NewSession(conn, engine.MySQL, "close mariadb session"), nil
}

// Session is one client's connection. It serves SQL (Conn, Dialect) and the
// records data model. Not safe for concurrent use.
type Session = sqlrecords.Session

// quietLogger drops the driver's own log lines (bad idle connections and
// the like), which would break the progress display; every failure also
// reaches the caller as an error.
type quietLogger struct{}

func (quietLogger) Print(...any) {}
