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
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" database/sql driver

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/engine/sqlrecords"
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
		Name:          "postgres",
		TargetSchemes: []string{"postgres", "postgresql"},
		Doc:           "PostgreSQL server (run as OS user postgres on 127.0.0.1, scram-sha-256 with a password per run), one fresh cluster per run copied from a per-study initdb template; records over SQL (pgx)",
		Components: []engine.Component{
			{Name: Data, Doc: "the cluster folder (PGDATA): tables, indexes, catalogs, configuration and the server log"},
			{Name: WAL, Doc: "write-ahead log segments (pg_wal; PGDATA/pg_wal is a symlink to this folder, as initdb --waldir makes it)"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "synchronous_commit=on, fsync=on: a commit waits for its WAL flush; concurrent commits share flushes (group commit). Survives power loss if the tier honours flushes."},
			{Durability: engine.Async, Doc: "synchronous_commit=off, fsync=on: commits are acknowledged before their WAL is flushed; the WAL writer flushes within wal_writer_delay (200ms, at worst 3x that). A server or OS crash can lose the last acknowledged commits; the cluster is never corrupted."},
			{Durability: engine.NoSync, Doc: "fsync=off, synchronous_commit=off: nothing is ever flushed. A server crash can lose the last commits; an OS crash or power loss can CORRUPT the cluster. For measuring only."},
		},
		Options: []engine.Option{
			{Name: "cache", Kind: engine.KindSize, Default: "128MiB", Doc: "shared_buffers, PostgreSQL's own page cache (the OS page cache comes on top)"},
			{Name: "max_wal_size", Kind: engine.KindSize, Default: "1GiB", Doc: "WAL volume that triggers a checkpoint (max_wal_size, at least 32MiB)"},
			{Name: "checkpoint_timeout", Kind: engine.KindInt, Default: "300", Doc: "seconds between timed checkpoints (checkpoint_timeout, 30 to 86400)"},
		},
	}
}

// settings is the run's configuration, checked before anything is started.
type settings struct {
	sharedBuffersKB   int64
	maxWALSizeMB      int64
	checkpointTimeout int64
	fsync             bool
	syncCommit        bool
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
		return s, fmt.Errorf("open postgres: durability %q is not supported (use sync, async or nosync)", cfg.Durability)
	}
	cache, err := intOption(cfg.Options, "cache", 128<<20)
	if err != nil {
		return s, err
	}
	if cache < 128<<10 {
		return s, fmt.Errorf("open postgres: option cache=%d bytes is below PostgreSQL's minimum shared_buffers of 128KiB", cache)
	}
	s.sharedBuffersKB = cache >> 10
	wal, err := intOption(cfg.Options, "max_wal_size", 1<<30)
	if err != nil {
		return s, err
	}
	// PostgreSQL refuses a max_wal_size below two 16MiB WAL segments.
	if wal < 32<<20 {
		return s, fmt.Errorf("open postgres: option max_wal_size=%d bytes is below PostgreSQL's minimum of 32MiB (two WAL segments)", wal)
	}
	s.maxWALSizeMB = wal >> 20
	if s.checkpointTimeout, err = intOption(cfg.Options, "checkpoint_timeout", 300); err != nil {
		return s, err
	}
	if s.checkpointTimeout < 30 || s.checkpointTimeout > 86400 {
		return s, fmt.Errorf("open postgres: option checkpoint_timeout=%d must be between 30 and 86400 seconds", s.checkpointTimeout)
	}
	return s, nil
}

func intOption(opts map[string]string, name string, def int64) (int64, error) {
	return engine.PositiveOption("postgres", opts, name, def, "a positive whole number")
}

// autoConf renders postgresql.auto.conf, which PostgreSQL reads after
// postgresql.conf, so these settings win over initdb's defaults. A file
// rather than -c flags keeps a kept run folder startable by hand.
func (s settings) autoConf(port int, sockDir string) string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	minWAL := min(s.maxWALSizeMB, 80) // min_wal_size may not exceed max_wal_size
	lines := []string{
		"# Written by tierbench for this run.",
		// Never a public address: a benchmark server is no one else's.
		"listen_addresses = '127.0.0.1'",
		fmt.Sprintf("port = %d", port),
		// The socket in the run's private folder, closed to other users
		// twice: by the folder's mode and by the socket's own.
		fmt.Sprintf("unix_socket_directories = '%s'", sockDir),
		"unix_socket_permissions = 0700",
		"password_encryption = 'scram-sha-256'",
		// Names the run's processes in ps ("postgres: tierbench-PORT: ...").
		fmt.Sprintf("cluster_name = 'tierbench-%d'", port),
		fmt.Sprintf("max_connections = %d", maxConnections),
		// Dynamic shared memory as files in PGDATA/pg_dynshmem rather than
		// POSIX segments in /dev/shm, which a crashed or killed server would
		// leave behind: the run folder takes them away in every case.
		"dynamic_shared_memory_type = mmap",
		fmt.Sprintf("shared_buffers = '%dkB'", s.sharedBuffersKB),
		fmt.Sprintf("max_wal_size = '%dMB'", s.maxWALSizeMB),
		fmt.Sprintf("min_wal_size = '%dMB'", minWAL),
		fmt.Sprintf("checkpoint_timeout = '%ds'", s.checkpointTimeout),
		"fsync = " + onOff(s.fsync),
		"synchronous_commit = " + onOff(s.syncCommit),
		// The server's stderr is the run's log file (server.Start).
		"logging_collector = off",
		"log_destination = 'stderr'",
		"log_checkpoints = on",
	}
	return strings.Join(lines, "\n") + "\n"
}

// Open starts a PostgreSQL server on a fresh cluster in cfg.Dirs, or, when
// the data folder already holds a cluster (the runner reopens an engine for
// cache: cold), restarts that cluster.
func (e Engine) Open(ctx context.Context, cfg engine.Config) (_ engine.DB, err error) {
	if cfg.Target != "" {
		return openTarget(ctx, cfg.Target)
	}
	dirs, err := server.RunDirs("postgres", cfg.Dirs, Data, WAL)
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
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	pg, err := lookupOSUser()
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}

	scratch, ownScratch := cfg.Scratch, false
	if scratch == "" {
		if scratch, err = os.MkdirTemp("", "tierbench-postgres-"); err != nil {
			return nil, fmt.Errorf("open postgres: scratch folder: %w", err)
		}
		ownScratch = true
		defer func() {
			if err != nil {
				os.RemoveAll(scratch)
			}
		}()
	}
	tmpl, err := ensureTemplate(ctx, bins, pg, scratch)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}

	if err := prepareCluster(ctx, tmpl, pg, dataDir, walDir); err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	port, err := server.FreePort()
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	sockDir, err := socketFolder(scratch)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(sockDir)
		}
	}()
	for name, text := range map[string]string{"postgresql.auto.conf": set.autoConf(port, sockDir), "pg_hba.conf": hbaConf} {
		if err := writeConf(filepath.Join(dataDir, name), text, pg); err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
	}
	password, err := server.NewSecret()
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}

	proc, err := server.Start(server.Spec{
		Name: "postgres",
		Path: bins.postgres,
		Args: []string{"-D", dataDir},
		Dir:  dataDir,
		Log:  filepath.Join(dataDir, logName),
		User: osUser,
	})
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	d := &DB{proc: proc, untrack: cfg.Tracked(proc.PID()), dataDir: dataDir, sockDir: sockDir, port: port, uid: pg.uid, password: password}
	if ownScratch {
		d.tmpScratch = scratch
	}
	defer func() {
		if err != nil {
			d.stop()
		}
	}()

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := proc.WaitReady(ctx, readyTimeout, acceptsLogins(addr)); err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := setPassword(ctx, bins.psql, sockDir, port, password); err != nil {
		return nil, fmt.Errorf("open postgres: %w", d.explain(err))
	}
	// The password is set on the parsed configuration, never written into
	// a DSN that a parse error could quote.
	cc, err := pgx.ParseConfig(fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable connect_timeout=10 application_name=tierbench",
		port, osUser, database))
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	cc.Password = password
	d.db = stdlib.OpenDB(*cc)
	// Every client holds its own connection for the whole run; a returned
	// connection stays open for the next session (database/sql would
	// otherwise keep only 2 idle ones and reconnect the rest).
	d.db.SetMaxOpenConns(0)
	d.db.SetMaxIdleConns(maxConnections)
	var v string
	if err := d.db.QueryRowContext(ctx, "SHOW server_version").Scan(&v); err != nil {
		return nil, fmt.Errorf("open postgres: read the server version: %w", d.explain(err))
	}
	d.version = "PostgreSQL " + v
	return d, nil
}

// openTarget connects to a server tierbench did not start. pgx reads the
// URL (its defaults: port 5432, the OS user, the database named as the
// user; and its parameters: sslmode, ...); tierbench adds a connect
// timeout and its application name unless the URL sets them.
func openTarget(ctx context.Context, target string) (engine.DB, error) {
	u, err := server.Target("postgres", target, Engine{}.Spec().TargetSchemes...)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	for k, v := range map[string]string{"connect_timeout": "10", "application_name": "tierbench"} {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	redacted := engine.RedactTarget(target)
	cc, err := pgx.ParseConfig(u.String())
	if err != nil {
		// pgx's parse errors show the URL with its password masked.
		return nil, fmt.Errorf("open postgres: target %s: %w", redacted, err)
	}
	d := &DB{target: &engine.Endpoint{Scheme: "postgres", Host: cc.Host, Port: int(cc.Port),
		User: cc.User, Password: cc.Password, Database: cc.Database}}
	d.db = stdlib.OpenDB(*cc)
	d.db.SetMaxOpenConns(0)
	d.db.SetMaxIdleConns(maxConnections)
	if err := d.db.PingContext(ctx); err != nil {
		d.db.Close()
		return nil, fmt.Errorf("open postgres: connect to target %s: %w", redacted, err)
	}
	var v string
	if err := d.db.QueryRowContext(ctx, "SHOW server_version").Scan(&v); err != nil {
		d.db.Close()
		return nil, fmt.Errorf("open postgres: target %s: read the server version: %w", redacted, err)
	}
	d.version = "PostgreSQL " + v
	return d, nil
}

// binaries are the PostgreSQL programs of one installation.
type binaries struct {
	postgres, initdb, psql string
}

// findBinaries finds postgres in PATH or in Debian's versioned folders
// (which are not in PATH), newest version first, and initdb and psql next
// to it so the template, the server and the client that sets the run's
// password come from the same release.
func findBinaries() (binaries, error) {
	candidates := []string{"postgres"}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		candidates = append(candidates, filepath.Join(d, "postgres"))
	}
	pgPath, err := server.Find("postgresql", candidates...)
	if err != nil {
		return binaries{}, err
	}
	if real, err := filepath.EvalSymlinks(pgPath); err == nil {
		pgPath = real
	}
	b := binaries{postgres: pgPath}
	for _, tool := range []struct {
		path      *string
		name, pkg string
	}{{&b.initdb, "initdb", "postgresql"}, {&b.psql, "psql", "postgresql-client"}} {
		*tool.path = filepath.Join(filepath.Dir(pgPath), tool.name)
		if _, err := os.Stat(*tool.path); err != nil {
			if *tool.path, err = server.Find(tool.pkg, tool.name); err != nil {
				return binaries{}, err
			}
		}
	}
	return b, nil
}

// versionOf reads the major version from /usr/lib/postgresql/<v>/bin.
func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

type osAccount struct {
	uid, gid int
}

func lookupOSUser() (osAccount, error) {
	uid, gid, err := server.LookupUser(osUser)
	if err != nil {
		return osAccount{}, fmt.Errorf("PostgreSQL runs as OS user %s, which does not exist (apt-get install postgresql creates it): %w", osUser, err)
	}
	return osAccount{uid: uid, gid: gid}, nil
}

// initdbRuns counts initdb invocations, so tests can check the template is
// made once per scratch folder.
var initdbRuns struct {
	sync.Mutex
	n int
}

// ensureTemplate makes the study's initdb template once. A flock on a file
// next to it serialises concurrent Opens (goroutines and processes alike:
// each Open opens the lock file anew, and flock locks belong to the open
// file); a marker written after initdb succeeds tells later Opens the
// template is complete, and a template without it is from an interrupted
// initdb and is made again.
func ensureTemplate(ctx context.Context, bins binaries, pg osAccount, scratch string) (string, error) {
	tmpl := filepath.Join(scratch, templateName)
	lockPath, done := tmpl+".lock", tmpl+".done"
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("template lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("template lock %s: %w", lockPath, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(done); err == nil {
		return tmpl, nil
	}
	if err := os.RemoveAll(tmpl); err != nil {
		return "", fmt.Errorf("remove incomplete template %s: %w", tmpl, err)
	}
	// initdb runs as postgres and must reach the scratch folder. tierbench
	// made it (os.MkdirTemp makes it 0700), so letting others enter it is
	// ours to do; its parents are checked below.
	if err := addSearch(scratch); err != nil {
		return "", err
	}
	if err := os.Mkdir(tmpl, 0o700); err != nil {
		return "", fmt.Errorf("create template folder: %w", err)
	}
	if err := os.Chown(tmpl, pg.uid, pg.gid); err != nil {
		return "", fmt.Errorf("create template folder: %w", err)
	}
	if err := server.CheckReachable(ctx, "PostgreSQL", osUser, tmpl); err != nil {
		return "", err
	}
	initdbRuns.Lock()
	initdbRuns.n++
	initdbRuns.Unlock()
	if err := initTemplate(ctx, bins, scratch, tmpl); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, bins.postgres, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bins.postgres, err)
	}
	if err := os.WriteFile(done, out, 0o644); err != nil {
		return "", fmt.Errorf("template marker: %w", err)
	}
	return tmpl, nil
}

// initTemplate runs initdb into tmpl. Password authentication needs a
// superuser password at initdb time; the template's is random and thrown
// away (each run sets its own, setPassword), and initdb reads it from a
// file in a private folder, never from its command line.
// --no-sync: the template is never used in place; each run's copy is
// flushed (prepareCluster).
func initTemplate(ctx context.Context, bins binaries, scratch, tmpl string) error {
	pwDir, err := server.PrivateDir(scratch, "initdb-", osUser)
	if err != nil {
		return fmt.Errorf("initdb template: %w", err)
	}
	defer os.RemoveAll(pwDir)
	password, err := server.NewSecret()
	if err != nil {
		return fmt.Errorf("initdb template: %w", err)
	}
	pwFile := filepath.Join(pwDir, "pwfile")
	if err := server.WriteSecretFile(pwFile, []byte(password+"\n"), osUser); err != nil {
		return fmt.Errorf("initdb template: %w", err)
	}
	if err := server.Run(ctx, osUser, bins.initdb, "-D", tmpl, "-U", osUser, "--pwfile="+pwFile,
		"--auth-host=scram-sha-256", "--auth-local=peer", "-E", "UTF8",
		"--locale=C", "--no-instructions", "--no-sync"); err != nil {
		return fmt.Errorf("initdb template: %w", err)
	}
	return nil
}

// addSearch lets others enter dir (o+x, not o+r).
func addSearch(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("scratch folder: %w", err)
	}
	if st.Mode().Perm()&0o001 == 0 {
		if err := os.Chmod(dir, st.Mode().Perm()|0o001); err != nil {
			return fmt.Errorf("let user %s enter the scratch folder: %w", osUser, err)
		}
	}
	return nil
}

// prepareCluster makes dataDir and walDir the run's cluster: a copy of the
// template with its WAL in walDir and PGDATA/pg_wal a symlink to it, which is
// what initdb --waldir makes. A data folder that already holds a cluster is
// reused, after checking its WAL is where this run's placement puts it.
func prepareCluster(ctx context.Context, tmpl string, pg osAccount, dataDir, walDir string) error {
	for _, d := range []string{dataDir, walDir} {
		// PostgreSQL refuses a data folder others can read.
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("folder for the cluster: %w", err)
		}
		if err := os.Chown(d, pg.uid, pg.gid); err != nil {
			return fmt.Errorf("folder for the cluster: %w", err)
		}
	}
	if err := server.CheckReachable(ctx, "PostgreSQL", osUser, dataDir, walDir); err != nil {
		return err
	}
	pgWAL := filepath.Join(dataDir, "pg_wal")
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		target, err := os.Readlink(pgWAL)
		if err != nil || filepath.Clean(target) != walDir {
			return fmt.Errorf("data folder %s holds a cluster whose pg_wal is not a symlink to the wal folder %s (%q, %v)", dataDir, walDir, target, err)
		}
		return nil
	}
	for _, d := range []string{dataDir, walDir} {
		ents, err := os.ReadDir(d)
		if err != nil {
			return fmt.Errorf("folder for the cluster: %w", err)
		}
		if len(ents) > 0 {
			return fmt.Errorf("folder %s is not empty and holds no PostgreSQL cluster; a run needs an empty folder", d)
		}
	}
	if err := copyTree(tmpl, dataDir, "pg_wal"); err != nil {
		return fmt.Errorf("copy the template to %s: %w", dataDir, err)
	}
	if err := copyTree(filepath.Join(tmpl, "pg_wal"), walDir, ""); err != nil {
		return fmt.Errorf("copy the template's WAL to %s: %w", walDir, err)
	}
	if err := os.Symlink(walDir, pgWAL); err != nil {
		return fmt.Errorf("link pg_wal to the wal folder: %w", err)
	}
	if err := server.ChownAll(osUser, dataDir, walDir); err != nil {
		return err
	}
	// Flush the copies now: their ~40MB of dirty pages would otherwise be
	// written back during the measurement, and a sync run's cluster must be
	// on stable storage from its first commit.
	for _, d := range []string{dataDir, walDir} {
		if err := syncFS(d); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies the folders, regular files and symlinks under src into the
// existing folder dst, keeping modes, skipping the top-level entry skip.
func copyTree(src, dst, skip string) error {
	return filepath.WalkDir(src, func(path string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if skip != "" && rel == skip {
			if de.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		info, err := de.Info()
		if err != nil {
			return err
		}
		switch {
		case de.IsDir():
			return os.Mkdir(target, info.Mode().Perm())
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return server.CopyFile(path, target, info.Mode().Perm())
		default:
			return fmt.Errorf("%s: unexpected file type %s in the template", path, info.Mode().Type())
		}
	})
}

// DB is a running PostgreSQL server: one Open started (proc), or a target
// server tierbench only connects to (target; proc is nil).
type DB struct {
	db         *sql.DB
	proc       *server.Process
	target     *engine.Endpoint
	untrack    func()
	version    string
	dataDir    string
	sockDir    string // the run's private socket folder, removed on Close
	port       int
	uid        int    // the postgres user's
	password   string // the run's, of the superuser role clients log in as
	tmpScratch string // removed on Close when Open made it
	closeOnce  sync.Once
	closeErr   error
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
	if d.proc == nil || err == nil {
		return err
	}
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
	return server.ConnLost(err)
}

// NewSession returns a session on its own connection.
func (d *DB) NewSession(ctx context.Context) (engine.Session, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: new connection: %w", d.explain(err))
	}
	return sqlrecords.NewSession(conn, engine.Postgres, "postgres: close connection", d.explainOp), nil
}

// Close shuts the server down (fast shutdown: SIGINT), kills it if it has
// not stopped within 30s, and leaves its folders to the caller. For a
// target server it only closes the connections.
func (d *DB) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.stop() })
	return d.closeErr
}

func (d *DB) stop() error {
	var errs []error
	if d.db != nil {
		if err := d.db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close postgres connections: %w", err))
		}
	}
	if d.proc == nil {
		return errors.Join(errs...)
	}
	if err := d.proc.Stop(stopGrace, syscall.SIGINT); err != nil {
		errs = append(errs, err)
	}
	// After a clean shutdown this finds nothing: the postmaster exits last.
	reapCrashed(d.dataDir, d.uid)
	d.untrack()
	// The socket and its lock file go with their folder, after a crash too.
	if err := os.RemoveAll(d.sockDir); err != nil {
		errs = append(errs, fmt.Errorf("remove postgres socket folder: %w", err))
	}
	if d.tmpScratch != "" {
		if err := os.RemoveAll(d.tmpScratch); err != nil {
			errs = append(errs, fmt.Errorf("remove postgres scratch folder: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Session is one client's connection. It serves the records data model and
// exposes the connection to SQL workloads. Not safe for concurrent use.
type Session = sqlrecords.Session
