package postgres

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/testenv"
)

// The tests run a real PostgreSQL; they share one scratch folder, so
// initdb runs once for most of them, as in a study.
var shared struct {
	once    sync.Once
	root    string // 0755 folder under /var/tmp holding everything
	scratch string
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.root != "" {
		os.RemoveAll(shared.root)
	}
	os.Exit(code)
}

// needPostgres skips unless the test can run a server: root (to run it as
// user postgres) and an installed PostgreSQL.
func needPostgres(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to run PostgreSQL as user postgres")
	}
	if _, err := findBinaries(); err != nil {
		testenv.Skip(t, err)
	}
	if _, err := lookupOSUser(); err != nil {
		testenv.Skip(t, err)
	}
	shared.once.Do(func() {
		// /var/tmp rather than t.TempDir(): the postgres user must be able
		// to enter every parent folder, and t.TempDir()'s are 0700.
		if shared.root, shared.err = os.MkdirTemp("/var/tmp", "tierbench-pg-test-"); shared.err != nil {
			return
		}
		if shared.err = os.Chmod(shared.root, 0o755); shared.err != nil {
			return
		}
		shared.scratch = filepath.Join(shared.root, "scratch")
		shared.err = os.Mkdir(shared.scratch, 0o755)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
}

// folder makes a fresh 0755 folder under the shared root, as the runner
// makes run folders.
func folder(t *testing.T, name string) string {
	t.Helper()
	parent, err := os.MkdirTemp(shared.root, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	return dir
}

func testConfig(t *testing.T, d engine.Durability, opts map[string]string) engine.Config {
	t.Helper()
	return engine.Config{
		Dirs:       map[string]string{Data: folder(t, "data"), WAL: folder(t, "wal")},
		Durability: d,
		Options:    Engine{}.Spec().MustResolveOptions(opts),
		Scratch:    shared.scratch,
	}
}

// openTest opens a server and, at the end of the test, closes it and checks
// that none of its processes is left.
func openTest(t *testing.T, cfg engine.Config) *DB {
	t.Helper()
	tracked := 0
	cfg.Track = func(pid int) func() {
		tracked = pid
		return func() { tracked = 0 }
	}
	db, err := Engine{}.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := db.(*DB)
	if tracked != d.proc.PID() {
		t.Errorf("tracked pid %d, server pid %d", tracked, d.proc.PID())
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil && !strings.Contains(err.Error(), "exited") {
			t.Errorf("close: %v", err)
		}
		if tracked != 0 {
			t.Error("server still tracked after Close")
		}
		if left := leftovers(t, d); len(left) > 0 {
			t.Errorf("postgres processes left after Close: %v", left)
		}
	})
	return d
}

// leftovers lists processes of user postgres that belong to d's server: the
// postmaster's command line names the data folder, its children's name the
// cluster (cluster_name = tierbench-PORT).
func leftovers(t *testing.T, d *DB) []string {
	t.Helper()
	pg, err := lookupOSUser()
	if err != nil {
		t.Fatal(err)
	}
	cluster := fmt.Sprintf("tierbench-%d:", d.port)
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := os.Stat(filepath.Join("/proc", e.Name()))
		if err != nil || int(st.Sys().(*syscall.Stat_t).Uid) != pg.uid {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		line := string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if strings.Contains(line, d.dataDir) || strings.Contains(line, cluster) || cwd == d.dataDir {
			out = append(out, e.Name()+": "+line)
		}
	}
	return out
}

func show(t *testing.T, d *DB, name string) string {
	t.Helper()
	var v string
	if err := d.db.QueryRow("SHOW " + name).Scan(&v); err != nil {
		t.Fatalf("SHOW %s: %v", name, err)
	}
	return v
}

// exerciseRecords runs every records operation on a fresh session.
func exerciseRecords(t *testing.T, d *DB, n int) {
	t.Helper()
	ctx := context.Background()
	s, err := d.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := s.(engine.RecordsSetup).SetupRecords(ctx, 10); err != nil {
		t.Fatal(err)
	}
	r := s.(engine.Records)
	val := bytes.Repeat([]byte("v"), 100)
	keys := make([][]byte, n)
	fields := make([][][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("user%06d", i))
		fields[i] = make([][]byte, 10)
		for j := range fields[i] {
			fields[i][j] = val
		}
	}
	if err := r.InsertBatch(ctx, keys, fields); err != nil {
		t.Fatal(err)
	}
	if found, err := r.Read(ctx, keys[1]); err != nil || !found {
		t.Fatalf("read inserted record: found=%v err=%v", found, err)
	}
	if found, err := r.Read(ctx, []byte("absent")); err != nil || found {
		t.Fatalf("read absent record: found=%v err=%v", found, err)
	}
	if err := r.Update(ctx, keys[2], []engine.Field{{Index: 3, Value: []byte("updated")}}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := s.(engine.SQL).Conn().QueryRowContext(ctx, "SELECT field3 FROM usertable WHERE ycsb_key = $1", keys[2]).Scan(&got); err != nil || got != "updated" {
		t.Fatalf("field3 after update = %q, %v", got, err)
	}
	if got, err := r.Scan(ctx, keys[0], 5); err != nil || got != 5 {
		t.Fatalf("scan 5 = %d, %v", got, err)
	}
	if s.(engine.SQL).Dialect() != engine.Postgres {
		t.Error("dialect is not postgres")
	}
}

var walName = regexp.MustCompile(`^[0-9A-F]{24}$`)

// TestPlacement checks that the WAL lives in the wal folder, behind a
// pg_wal symlink, and the tables in the data folder.
func TestPlacement(t *testing.T) {
	needPostgres(t)
	cfg := testConfig(t, engine.Sync, nil)
	d := openTest(t, cfg)
	data, wal := cfg.Dirs[Data], cfg.Dirs[WAL]
	exerciseRecords(t, d, 2000)

	if got := show(t, d, "data_directory"); got != data {
		t.Errorf("data_directory = %s, want %s", got, data)
	}
	link, err := os.Readlink(filepath.Join(data, "pg_wal"))
	if err != nil || link != wal {
		t.Errorf("PGDATA/pg_wal -> %q (%v), want a symlink to %s", link, err, wal)
	}
	var segments []string
	ents, err := os.ReadDir(wal)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if walName.MatchString(e.Name()) {
			segments = append(segments, e.Name())
		}
	}
	if len(segments) == 0 {
		t.Errorf("no WAL segments in the wal folder %s: %v", wal, ents)
	}
	var current string
	if err := d.db.QueryRow("SELECT pg_walfile_name(pg_current_wal_lsn())").Scan(&current); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(filepath.Join(wal, current)); err != nil || !st.Mode().IsRegular() {
		t.Errorf("current WAL segment %s is not a file in the wal folder: %v", current, err)
	}
	if st, err := os.Stat(filepath.Join(data, "base")); err != nil || !st.IsDir() {
		t.Errorf("no base/ in the data folder: %v", err)
	}
	var table string
	if err := d.db.QueryRow("SELECT pg_relation_filepath('usertable')").Scan(&table); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(data, table)); err != nil || st.Size() == 0 {
		t.Errorf("usertable's file %s is not in the data folder: %v", table, err)
	}
	if _, err := os.Stat(filepath.Join(wal, "base")); err == nil {
		t.Error("table files in the wal folder")
	}
}

// TestDurabilityModes checks each mode serves records with its settings.
func TestDurabilityModes(t *testing.T) {
	needPostgres(t)
	for _, tc := range []struct {
		d                engine.Durability
		syncCommit, sync string
	}{
		{engine.Sync, "on", "on"},
		{engine.Async, "off", "on"},
		{engine.NoSync, "off", "off"},
	} {
		t.Run(string(tc.d), func(t *testing.T) {
			d := openTest(t, testConfig(t, tc.d, nil))
			exerciseRecords(t, d, 100)
			if got := show(t, d, "synchronous_commit"); got != tc.syncCommit {
				t.Errorf("synchronous_commit = %s, want %s", got, tc.syncCommit)
			}
			if got := show(t, d, "fsync"); got != tc.sync {
				t.Errorf("fsync = %s, want %s", got, tc.sync)
			}
			if got := show(t, d, "listen_addresses"); got != "127.0.0.1" {
				t.Errorf("listen_addresses = %s", got)
			}
			if got := show(t, d, "max_connections"); got != strconv.Itoa(maxConnections) {
				t.Errorf("max_connections = %s", got)
			}
			if v := d.Version(); !strings.HasPrefix(v, "PostgreSQL ") {
				t.Errorf("version %q", v)
			}
			if err := d.Check(); err != nil {
				t.Errorf("check on a running server: %v", err)
			}
		})
	}
	if _, err := (Engine{}).Open(context.Background(), engine.Config{Dirs: map[string]string{Data: "/x", WAL: "/y"}, Durability: engine.NoWAL, Options: Engine{}.Spec().MustResolveOptions(nil)}); err == nil ||
		!strings.Contains(err.Error(), "not supported") {
		t.Errorf("nowal: %v", err)
	}
}

// TestOptions checks the options reach the server.
func TestOptions(t *testing.T) {
	needPostgres(t)
	d := openTest(t, testConfig(t, engine.Async, map[string]string{
		"cache": strconv.Itoa(64 << 20), "max_wal_size": strconv.Itoa(256 << 20), "checkpoint_timeout": "60"}))
	for name, want := range map[string]string{"shared_buffers": "64MB", "max_wal_size": "256MB", "checkpoint_timeout": "1min"} {
		if got := show(t, d, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}

// TestBadOptions: values outside their range are refused where a run's
// Config is built (engine.Spec.ResolveOptions), before any server starts.
func TestBadOptions(t *testing.T) {
	for _, opts := range []map[string]string{
		{"cache": "1024"}, {"cache": "x"}, {"max_wal_size": "1048576"}, {"checkpoint_timeout": "5"},
	} {
		if _, err := (Engine{}).Spec().ResolveOptions(opts); err == nil {
			t.Errorf("options %v accepted", opts)
		}
	}
}

// TestTemplateOnce checks that runs sharing a scratch folder, one after
// the other or at the same time, share one initdb.
func TestTemplateOnce(t *testing.T) {
	needPostgres(t)
	scratch := folder(t, "scratch")
	initdbRuns.Lock()
	before := initdbRuns.n
	initdbRuns.Unlock()
	var marker time.Time
	for i := 0; i < 2; i++ {
		cfg := testConfig(t, engine.Sync, nil)
		cfg.Scratch = scratch
		d := openTest(t, cfg)
		st, err := os.Stat(filepath.Join(scratch, templateName+".done"))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			marker = st.ModTime()
		} else if !st.ModTime().Equal(marker) {
			t.Error("template marker rewritten by the second run")
		}
		if b, _ := os.ReadFile(filepath.Join(scratch, templateName+".done")); !strings.Contains(string(b), "PostgreSQL") {
			t.Errorf("template marker %q does not record the version", b)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Concurrent runs wait for the template rather than make their own.
	scratch2 := folder(t, "scratch")
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		cfg := testConfig(t, engine.Sync, nil)
		cfg.Scratch = scratch2
		go func() {
			db, err := Engine{}.Open(context.Background(), cfg)
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	initdbRuns.Lock()
	defer initdbRuns.Unlock()
	if got := initdbRuns.n - before; got != 2 {
		t.Errorf("initdb ran %d times for two scratch folders, want 2", got)
	}
}

// TestNoScratch checks that without a scratch folder Open makes its own
// and Close removes it.
func TestNoScratch(t *testing.T) {
	needPostgres(t)
	cfg := testConfig(t, engine.Sync, nil)
	cfg.Scratch = ""
	d := openTest(t, cfg)
	if d.tmpScratch == "" {
		t.Fatal("no temporary scratch folder")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.tmpScratch); !os.IsNotExist(err) {
		t.Errorf("temporary scratch %s left after Close: %v", d.tmpScratch, err)
	}
}

// TestReopen checks that opening the same folders again restarts the
// cluster with its data, as the runner's cache: cold restart does.
func TestReopen(t *testing.T) {
	needPostgres(t)
	cfg := testConfig(t, engine.Sync, nil)
	d := openTest(t, cfg)
	exerciseRecords(t, d, 50)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := openTest(t, cfg)
	s, err := d2.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if found, err := s.(engine.Records).Read(context.Background(), []byte("user000001")); err != nil || !found {
		t.Errorf("record after reopen: found=%v err=%v", found, err)
	}
}

// TestKilledServer checks that a server killed mid-run fails Check with its
// log, and that Close still returns and leaves nothing running.
func TestKilledServer(t *testing.T) {
	needPostgres(t)
	d := openTest(t, testConfig(t, engine.Async, nil))
	s, err := d.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lock := socketPath(d.sockDir, d.port) + ".lock"
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("no socket lock file of a running server: %v", err)
	}
	if err := syscall.Kill(d.proc.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.proc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit after kill -9")
	}
	err = d.Check()
	if err == nil {
		t.Fatal("Check passed on a killed server")
	}
	if !strings.Contains(err.Error(), "ready to accept connections") {
		t.Errorf("Check error has no log tail: %v", err)
	}
	if _, err := d.NewSession(context.Background()); err == nil || !strings.Contains(err.Error(), "exited") {
		// The pool may hand out the idle connection of the closed session;
		// a new one must explain the death.
		t.Logf("new session on a killed server: %v", err)
	}
	s.Close()
	done := make(chan error, 1)
	go func() { done <- d.Close() }()
	select {
	case err := <-done:
		t.Logf("close after a crash: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("Close hangs after a crash")
	}
	if left := leftovers(t, d); len(left) > 0 {
		t.Errorf("processes left after Close: %v", left)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Errorf("stale socket lock file %s left", lock)
	}
}

// TestUnreachableFolder checks the error when user postgres cannot enter a
// parent of the run's folders.
func TestUnreachableFolder(t *testing.T) {
	needPostgres(t)
	private := folder(t, "private")
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{Data: filepath.Join(private, "data"), WAL: filepath.Join(private, "wal")}
	for _, dir := range dirs {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Engine{}.Open(context.Background(), engine.Config{Dirs: dirs, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(nil), Scratch: shared.scratch})
	if err == nil {
		db.Close()
		t.Fatal("opened a cluster user postgres cannot reach")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "chmod o+x "+private) {
		t.Errorf("error does not name the folder and the fix: %v", err)
	}
}

// TestFailedStart checks that a server that cannot start fails Open with
// its log, not with connection errors.
func TestFailedStart(t *testing.T) {
	needPostgres(t)
	cfg := testConfig(t, engine.Sync, map[string]string{"cache": strconv.Itoa(1 << 50)})
	db, err := Engine{}.Open(context.Background(), cfg)
	if err == nil {
		db.Close()
		t.Fatal("opened with 1PiB of shared_buffers")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "did not start") || !strings.Contains(err.Error(), "shared_buffers") {
		t.Errorf("error does not explain the failed start with the server's log: %v", err)
	}
}
