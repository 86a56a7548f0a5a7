// Package mariadb is tierbench's MariaDB engine: a mariadbd server per run,
// with its InnoDB datadir (tablespaces, undo, system tables) and its InnoDB
// redo log (innodb_log_group_home_dir) placed on separate tiers. Clients
// talk to it over TCP on 127.0.0.1 with server-side prepared statements and
// serve the records data model through sqlrecords.
//
// Each study installs the system tables once (mariadb-install-db into the
// study's scratch folder); each run copies that template, so runs start from
// identical state without paying for a bootstrap.
//
// With Config.Target (mysql://user:password@host:port/database) the engine
// starts nothing and connects to that server (MariaDB or MySQL) instead:
// no folders, no template; the database must exist and the user may
// create and drop tables in it.
package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/mariadb/mywire"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/engine/sqlrecords"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/reach"
	"github.com/tierbench/tierbench/host/secrets"
	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/setting"
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
		// The server starts with --max-connections=500, which must also
		// hold the load phase's connections and tierbench's own.
		MaxClients: 480, MaxClientsWhy: "tierbench starts the server with 500 connections (--max-connections), which must also hold the load phase's connections and tierbench's own",
		Models:        []engine.Model{engine.ModelRecords, engine.ModelSQL},
		Crashable:     true,
		TargetSchemes: []string{"mysql", "mariadb"},
		Image:         Image,
		Lanes:         true,
		LaneTarget:    laneTarget,
		Doc:           "MariaDB server (mariadbd, InnoDB) per run on 127.0.0.1; SQL and records over server-side prepared statements",
		Components: []engine.Component{
			{Name: Data, Role: engine.RoleData, Doc: "datadir: InnoDB tablespaces (ibdata1, <db>/<table>.ibd), undo, system tables; the binary log when on"},
			{Name: Redo, Role: engine.RoleCommitLog, Doc: "InnoDB redo log ib_logfile0 (innodb_log_group_home_dir)"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "innodb_flush_log_at_trx_commit=1 (and sync_binlog=1 with binlog): every commit " +
				"flushes the redo log before it is acknowledged; concurrent commits share a flush (group commit). Survives power loss.", Survives: []string{engine.CrashProcess, engine.CrashPower}},
			{Durability: engine.Async, Doc: "innodb_flush_log_at_trx_commit=2: each commit is written to the OS, which is " +
				"flushed about once a second. A server crash loses nothing; an OS crash or power loss loses up to ~1 s of commits.", Survives: []string{engine.CrashProcess}},
			{Durability: engine.NoSync, Doc: "innodb_flush_log_at_trx_commit=0: commits stay in the server's log buffer, written " +
				"and flushed about once a second. Even a server crash loses up to ~1 s of commits."},
		},
		Options: []setting.Setting{
			{Name: "cache", Kind: setting.Size, Memory: true, Default: "128MiB", Min: "6MiB", Doc: "InnoDB buffer pool (innodb_buffer_pool_size); InnoDB refuses to start below 6 MiB with its 16 KiB pages"},
			{Name: "redo_log_size", Kind: setting.Size, Default: "96MiB", Min: "4MiB", Doc: "InnoDB redo log size (innodb_log_file_size)"},
			{Name: "binlog", Kind: setting.Bool, Default: "false", Doc: "write the binary log (in the data folder), as a replicated primary does"},
			{Name: "innodb_doublewrite", Kind: setting.Bool, Default: "true", Doc: "write each page first to the doublewrite buffer (innodb_doublewrite), so that recovery can repair a 16 KiB page a power cut tore; off is safe only where the device writes 16 KiB pages atomically"},
		},
	}
}

// options are the run's engine options, as MariaDB's settings take them.
type options struct {
	cache, redoLogSize int64
	binlog             bool
	doublewrite        bool
}

func parseOptions(o engine.Options) options {
	return options{cache: o.Size("cache"), redoLogSize: o.Size("redo_log_size"), binlog: o.Bool("binlog"), doublewrite: o.Bool("innodb_doublewrite")}
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
	return 0, fmt.Errorf("durability %q is not supported (use sync, async or nosync)", d)
}

// Where mariadbd and mariadb-install-db are looked for (Open, Preflight).
var (
	mariadbdPaths  = []string{"mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld"}
	installDBPaths = []string{"mariadb-install-db", "/usr/bin/mariadb-install-db", "mysql_install_db"}
)

// diskFullLog matches how InnoDB's log names a full disk: by errno
// ("preallocating 12582912 bytes for file ./ibtmp1 failed with error 28",
// "Could not set the file size of './ibtmp1'. Probably out of disk space").
var diskFullLog = regexp.MustCompile(`with error 28\b|errno: 28\b|out of disk space`)

// Open installs the study's template if needed, copies it into cfg.Dirs,
// starts mariadbd on a free port of 127.0.0.1 and creates the tierbench
// database and client account.
func (e Engine) Open(ctx context.Context, cfg engine.Config) (_ engine.DB, err error) {
	if cfg.Target != "" {
		return openTarget(ctx, cfg.Target)
	}
	dirs, err := server.RunDirs(cfg.Dirs, Data, Redo)
	if err != nil {
		return nil, err
	}
	dataDir, redoDir := dirs[0], dirs[1]
	flush, err := flushAtCommit(cfg.Durability)
	if err != nil {
		return nil, err
	}
	opts := parseOptions(cfg.Options)
	mariadbd, err := proc.Find("mariadb-server", mariadbdPaths...)
	if err != nil {
		return nil, err
	}
	installDB, err := proc.Find("mariadb-server", installDBPaths...)
	if err != nil {
		return nil, err
	}
	runAs, err := proc.RunAs("mariadbd", "mariadb-server", serverUser)
	if err != nil {
		return nil, err
	}

	d := &DB{}
	defer d.closers.CloseOnError(&err)
	scratch, err := server.Scratch(cfg.Scratch, "tierbench-mariadb-", &d.closers)
	if err != nil {
		return nil, err
	}
	if cfg.Scratch == "" {
		d.tempDirs = append(d.tempDirs, scratch)
	}
	tmpl := filepath.Join(scratch, templateDir)
	if d.templateVersion, err = template(installDB, mariadbd, runAs, tmpl).Ensure(ctx); err != nil {
		return nil, err
	}
	// A datadir that already holds a server's files is reopened as it is
	// (cache: cold restarts the engine on its run folders).
	if _, err := os.Stat(filepath.Join(dataDir, "mysql")); errors.Is(err, fs.ErrNotExist) {
		if err := copyTemplate(tmpl, dataDir, redoDir); err != nil {
			return nil, err
		}
	}
	socket := filepath.Join(dataDir, "mariadbd.sock")
	if len(socket) > 100 { // sun_path holds 108 bytes
		dir, err := os.MkdirTemp("", "tbm-")
		if err != nil {
			return nil, fmt.Errorf("socket folder: %w", err)
		}
		d.closers.RemoveAll(dir)
		d.tempDirs = append(d.tempDirs, dir)
		socket = filepath.Join(dir, "mariadbd.sock")
	}
	// The datadir holds the socket of the passwordless root@localhost:
	// only root and the server's user may enter it.
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return nil, err
	}
	if runAs != "" {
		if err := proc.ChownAll(runAs, dataDir, redoDir, filepath.Dir(socket)); err != nil {
			return nil, err
		}
		if err := reach.Check(ctx, "MariaDB", runAs, dataDir, redoDir); err != nil {
			return nil, err
		}
	}
	port, err := tcpport.Free()
	if err != nil {
		return nil, err
	}
	d.addr = net127(port)
	// No --user: the process starts as runAs. mariadbd switching users
	// itself would clear the parent-death signal (the kernel resets it on
	// a credential change), and a killed tierbench would leave it running.
	d.proc, err = server.Start(server.Spec{Name: "mariadb", Path: mariadbd,
		Args: serverArgs(dataDir, redoDir, socket, port, flush, opts, cfg.Durability),
		Dir:  dataDir, Log: filepath.Join(dataDir, "mariadbd.log"), User: runAs, Track: cfg.Track, Memory: cfg.Memory, SyncDelays: cfg.SyncDelays,
		DiskFull: diskFullLog, DiskFullNote: "the server's log reports no space left, errno 28"})
	if err != nil {
		return nil, err
	}
	d.closers.Add("close mariadb", func() error {
		if err := d.proc.Stop(stopGrace); err != nil {
			return d.proc.WithLog(err)
		}
		return nil
	})

	// Setup goes through the socket as root@localhost, which has no
	// password and is reachable only by users who can enter the datadir.
	admin := mysql.NewConfig()
	admin.User, admin.Net, admin.Addr = "root", "unix", socket
	admin.Timeout = 5 * time.Second
	admin.Logger = quietLogger{}
	adminConn, err := mysql.NewConnector(admin)
	if err != nil {
		return nil, err
	}
	adminDB := sql.OpenDB(adminConn)
	defer adminDB.Close()
	if err := d.proc.WaitReady(ctx, readyTimeout, adminDB.PingContext); err != nil {
		return nil, err
	}
	password, err := secrets.New()
	if err != nil {
		return nil, err
	}
	if err := setup(ctx, adminDB, password); err != nil {
		return nil, d.proc.WithLog(err)
	}
	client := mysql.NewConfig()
	client.User, client.Passwd, client.Net, client.Addr, client.DBName = clientUser, password, "tcp", d.addr, Database
	client.InterpolateParams = false // server-side prepared statements, as the workloads intend
	client.Timeout = 10 * time.Second
	if err := d.connect(ctx, client); err != nil {
		return nil, d.proc.WithLog(fmt.Errorf("connect as %s over TCP %s: %w", clientUser, d.addr, err))
	}
	return d, nil
}

// serverArgs are mariadbd's arguments for a run: everything on the command
// line (--no-defaults), where ps shows it; no secret among them.
func serverArgs(dataDir, redoDir, socket string, port, flush int, opts options, durability engine.Durability) []string {
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
		"--innodb-doublewrite=" + map[bool]string{true: "ON", false: "OFF"}[opts.doublewrite],
	}
	if !opts.binlog {
		return append(args, "--skip-log-bin")
	}
	syncBinlog := "0"
	if durability == engine.Sync {
		syncBinlog = "1"
	}
	return append(args, "--log-bin="+filepath.Join(dataDir, "mariadb-bin"), "--server-id=1", "--sync-binlog="+syncBinlog)
}

// connect opens the clients' pool with c, which Close closes, and reads
// the server's version.
func (d *DB) connect(ctx context.Context, c *mysql.Config) error {
	c.Logger = quietLogger{}
	// Through mywire, so clients on lanes can take their sockets over.
	c.DialFunc = mywire.Dial
	d.user, d.password, d.database = c.User, c.Passwd, c.DBName
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return err
	}
	d.db = sql.OpenDB(mywire.Connector(conn))
	d.closers.Add("close mariadb clients", d.db.Close)
	d.db.SetMaxOpenConns(0) // unlimited: one connection per client session
	d.db.SetMaxIdleConns(8)
	var version string
	if err := d.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return err
	}
	d.version = serverVersion(version)
	return nil
}

// serverVersion names a server from SELECT VERSION():
// "10.11.19-MariaDB-0+deb12u1" -> "MariaDB 10.11.19-0+deb12u1"; a target
// may be MySQL: "8.0.36" -> "MySQL 8.0.36".
func serverVersion(v string) string {
	if strings.Contains(v, "-MariaDB") {
		return "MariaDB " + strings.Replace(v, "-MariaDB", "", 1)
	}
	return "MySQL " + v
}

func net127(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// setup creates the database and the client account, the only one that
// can log in over TCP (the template has no other).
func setup(ctx context.Context, db *sql.DB, password string) error {
	for _, s := range []string{
		"CREATE DATABASE IF NOT EXISTS " + Database,
		// OR REPLACE: a reopened datadir has the account, with last Open's password.
		fmt.Sprintf("CREATE OR REPLACE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s'", clientUser, password),
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

// DB is a running mariadbd for one run, or a target server (target; proc
// is nil) tierbench only connects to.
type DB struct {
	proc            *server.Process
	closers         server.Closers // what Open got, given back by Close
	db              *sql.DB
	addr            string
	version         string
	templateVersion string
	tempDirs        []string // folders Open made for itself, removed by Close
	// The clients' account: for a started server tierbench's own, with a
	// password random per run; for a target the URL's.
	user, password, database string
}

var (
	_ engine.DB      = (*DB)(nil)
	_ engine.Checker = (*DB)(nil)
)

// Version is the running server's version, e.g. "MariaDB 10.11.19-0+deb12u1".
func (d *DB) Version() string { return d.version }

// Addr is the server's TCP address (127.0.0.1:port).
func (d *DB) Addr() string { return d.addr }

// Endpoint is the client account's address, for sysbench.
func (d *DB) Endpoint() engine.Endpoint {
	return engine.EndpointAt("mysql", d.addr, d.user, d.password, d.database)
}

// PID is the server's process id, for telemetry; 0 for a target server.
func (d *DB) PID() int { return d.proc.PID() }

// Crash kills the server at once (engine.Crasher): a crash run's process crash.
func (d *DB) Crash() error { return d.proc.Crash() }

// Check reports a server that has exited, with its log's tail; nil for a
// target server, which is not watched.
func (d *DB) Check() error { return d.proc.Died() }

// Close stops the server (SIGTERM, killed after a grace period) and leaves
// the folders for the caller to remove; for a target server it only closes
// the connections.
func (d *DB) Close() error { return d.closers.Close() }

// NewSession opens one client connection with its own prepared statements.
func (d *DB) NewSession(ctx context.Context) (engine.Session, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		if died := d.Check(); died != nil {
			return nil, fmt.Errorf("mariadb session: %w", died)
		}
		return nil, fmt.Errorf("mariadb session: connect to %s: %w", d.addr, err)
	}
	return sqlrecords.NewSession(conn, engine.MySQL, "close mariadb session", d.explain), nil
}

// errTableFull is MariaDB's ER_RECORD_FILE_FULL.
const errTableFull = 1114

// explain makes an operation's error say what happened. InnoDB reports a
// tablespace it cannot extend for want of space as error 1114, "The table
// 'usertable' is full" (its log has the errno: "preallocating ... bytes
// for file ./tierbench/usertable.ibd failed with error 28"): the error
// gains "disk full" (engine.ErrDiskFull), which is how the runner knows a
// tier filled up. When the server died or dropped the connection, the
// error gains the server's log.
func (d *DB) explain(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errTableFull {
		err = server.DiskFull(err, "InnoDB could not grow the table, most likely for want of space on its tier")
	}
	return d.proc.Explain(err, errors.Is(err, mysql.ErrInvalidConn) || server.ConnLost(err))
}

// Session is one client's connection. It serves SQL (Conn, Dialect) and the
// records data model. Not safe for concurrent use.
type Session = sqlrecords.Session

// quietLogger drops the driver's own log lines (bad idle connections and
// the like), which would break the progress display; every failure also
// reaches the caller as an error.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

// BufferCounts implements engine.BufferCounter from InnoDB's status.
func (d *DB) BufferCounts(ctx context.Context) (engine.BufferCounts, error) {
	return engine.SQLBufferCounts(ctx, d)
}
