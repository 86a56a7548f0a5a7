package mariadb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/testenv"
)

// needServer skips unless the test can run a real mariadbd as mysql.
func needServer(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root (runs mariadbd as user mysql)")
	}
	if _, err := proc.Find("mariadb-server", "mariadbd", "/usr/sbin/mariadbd"); err != nil {
		testenv.Skip(t, err)
	}
}

// base makes a 0755 folder in /var/tmp: t.TempDir lives under a 0700
// folder, which the mysql user cannot enter.
func base(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "tierbench-mariadb-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

type run struct {
	db              *DB
	data, redo, tag string
}

// open starts a server with fresh run folders under root, closing it (and
// checking that no server is left) when the test ends.
func open(t *testing.T, root, scratch string, d engine.Durability, opts map[string]string) run {
	t.Helper()
	tag := fmt.Sprintf("%s-%d", d, time.Now().UnixNano())
	r := run{data: filepath.Join(root, tag, "data"), redo: filepath.Join(root, tag, "redo"), tag: tag}
	for _, p := range []string{r.data, r.redo} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Engine{}.Open(context.Background(), engine.Config{
		Dirs: map[string]string{Data: r.data, Redo: r.redo}, Durability: d, Options: Engine{}.Spec().MustResolveOptions(opts), Scratch: scratch})
	if err != nil {
		t.Fatal(err)
	}
	r.db = db.(*DB)
	t.Cleanup(func() {
		if err := r.db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if pids := serverPIDs(t, r.data); len(pids) > 0 {
			t.Errorf("mariadbd %v still runs on %s after Close", pids, r.data)
		}
	})
	return r
}

// serverPIDs lists mariadbd processes whose command line names datadir.
func serverPIDs(t *testing.T, datadir string) []string {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []string
	for _, c := range cmdlines {
		b, err := os.ReadFile(c)
		if err != nil {
			continue // exited meanwhile
		}
		if bytes.Contains(b, []byte("--datadir="+datadir+"\x00")) {
			pids = append(pids, filepath.Base(filepath.Dir(c)))
		}
	}
	return pids
}

func variable(t *testing.T, db *DB, name string) string {
	t.Helper()
	var v sql.NullString
	if err := db.db.QueryRow("SELECT @@" + name).Scan(&v); err != nil {
		t.Fatalf("@@%s: %v", name, err)
	}
	return v.String
}

func session(t *testing.T, db *DB) *Session {
	t.Helper()
	s, err := db.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*Session)
}

func records(n, fields int) (keys [][]byte, vals [][][]byte) {
	for i := 0; i < n; i++ {
		keys = append(keys, []byte(fmt.Sprintf("user%06d", i)))
		row := make([][]byte, fields)
		for j := range row {
			row[j] = bytes.Repeat([]byte{byte('a' + j)}, 100)
		}
		vals = append(vals, row)
	}
	return keys, vals
}

// checkRecords runs every records operation, the reads on a second session
// that never inserted (its statements come from information_schema).
func checkRecords(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	w := session(t, db)
	if err := w.SetupRecords(ctx, 10); err != nil {
		t.Fatal(err)
	}
	keys, vals := records(20, 10)
	if err := w.InsertBatch(ctx, keys, vals); err != nil {
		t.Fatal(err)
	}
	r := session(t, db)
	if found, err := r.Read(ctx, keys[7]); err != nil || !found {
		t.Fatalf("read %s: found=%v err=%v", keys[7], found, err)
	}
	if found, err := r.Read(ctx, []byte("nobody")); err != nil || found {
		t.Fatalf("read of a missing key: found=%v err=%v", found, err)
	}
	if err := r.Update(ctx, keys[7], []engine.Field{{Index: 3, Value: []byte("updated")}}); err != nil {
		t.Fatal(err)
	}
	var f3, f4 string
	if err := r.Conn().QueryRowContext(ctx, "SELECT field3, field4 FROM usertable WHERE ycsb_key = ?", keys[7]).Scan(&f3, &f4); err != nil {
		t.Fatal(err)
	}
	if f3 != "updated" || f4 != strings.Repeat("e", 100) {
		t.Errorf("after the update field3=%q field4=%q", f3, f4)
	}
	if n, err := r.Scan(ctx, keys[15], 10); err != nil || n != 5 {
		t.Errorf("scan from %s: %d records, %v; want 5", keys[15], n, err)
	}
	if n, err := r.Scan(ctx, []byte("user"), 100); err != nil || n != 20 {
		t.Errorf("scan of all: %d records, %v; want 20", n, err)
	}
	if r.Dialect() != engine.MySQL {
		t.Errorf("dialect %s", r.Dialect())
	}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// TestPlacement checks that the redo log is in the redo folder and the
// tablespaces in the data folder.
func TestPlacement(t *testing.T) {
	needServer(t)
	root := base(t)
	r := open(t, root, filepath.Join(root, "scratch"), engine.Sync, nil)
	ctx := context.Background()
	s := session(t, r.db)
	if err := s.SetupRecords(ctx, 10); err != nil {
		t.Fatal(err)
	}
	keys, vals := records(2000, 10)
	if err := s.InsertBatch(ctx, keys, vals); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(r.redo, redoFile)) {
		t.Errorf("no %s in the redo folder %s", redoFile, r.redo)
	}
	if exists(filepath.Join(r.data, redoFile)) {
		t.Errorf("%s is in the data folder %s", redoFile, r.data)
	}
	for _, f := range []string{"ibdata1", "tierbench/usertable.ibd"} {
		if !exists(filepath.Join(r.data, f)) {
			t.Errorf("no %s in the data folder %s", f, r.data)
		}
		if exists(filepath.Join(r.redo, f)) {
			t.Errorf("%s is in the redo folder %s", f, r.redo)
		}
	}
	if got := variable(t, r.db, "innodb_log_group_home_dir"); filepath.Clean(got) != r.redo {
		t.Errorf("innodb_log_group_home_dir = %s, want %s", got, r.redo)
	}
	// The 2000 × 1 KB records went through the redo log.
	var lsn int64
	if err := r.db.db.QueryRow("SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'INNODB_LSN_CURRENT'").Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	if lsn < 2_000_000 {
		t.Errorf("redo LSN %d after 2 MB of inserts", lsn)
	}
}

// TestDurabilityModes starts each mode and checks its settings, the
// defaults and the records data model.
func TestDurabilityModes(t *testing.T) {
	needServer(t)
	root := base(t)
	scratch := filepath.Join(root, "scratch")
	for _, tc := range []struct {
		d     engine.Durability
		flush string
	}{{engine.Sync, "1"}, {engine.Async, "2"}, {engine.NoSync, "0"}} {
		t.Run(string(tc.d), func(t *testing.T) {
			r := open(t, root, scratch, tc.d, nil)
			for name, want := range map[string]string{
				"innodb_flush_log_at_trx_commit": tc.flush,
				"bind_address":                   "127.0.0.1",
				"log_bin":                        "0",
				"innodb_buffer_pool_size":        "134217728",
				"innodb_log_file_size":           "100663296",
				"max_connections":                "500",
				"character_set_server":           "utf8mb4",
			} {
				if got := variable(t, r.db, name); got != want {
					t.Errorf("@@%s = %s, want %s", name, got, want)
				}
			}
			if v := r.db.Version(); !strings.HasPrefix(v, "MariaDB 1") || strings.Contains(v, "-MariaDB") {
				t.Errorf("version %q", v)
			}
			checkRecords(t, r.db)
		})
	}
	t.Run("sync+binlog", func(t *testing.T) {
		r := open(t, root, scratch, engine.Sync, map[string]string{"binlog": "true", "redo_log_size": "50331648"})
		for name, want := range map[string]string{"log_bin": "1", "sync_binlog": "1", "innodb_log_file_size": "50331648"} {
			if got := variable(t, r.db, name); got != want {
				t.Errorf("@@%s = %s, want %s", name, got, want)
			}
		}
		checkRecords(t, r.db)
		if logs, _ := filepath.Glob(filepath.Join(r.data, "mariadb-bin.0*")); len(logs) == 0 {
			t.Errorf("no binary log in the data folder %s", r.data)
		}
	})
}

// TestTemplateOnceAndCache opens twice on one scratch folder: one install;
// the second run's cache option sets the buffer pool. It also checks that
// only the client account can log in over TCP.
func TestTemplateOnceAndCache(t *testing.T) {
	needServer(t)
	root := base(t)
	scratch := filepath.Join(root, "scratch")
	if err := os.Mkdir(scratch, 0o700); err != nil { // as os.MkdirTemp makes it
		t.Fatal(err)
	}
	before := installs.Load()
	r1 := open(t, root, scratch, engine.Sync, nil)
	if err := r1.db.Close(); err != nil {
		t.Fatal(err)
	}
	r2 := open(t, root, scratch, engine.Async, map[string]string{"cache": "67108864"})
	if n := installs.Load() - before; n != 1 {
		t.Errorf("%d template installs for two runs, want 1", n)
	}
	if got := variable(t, r2.db, "innodb_buffer_pool_size"); got != "67108864" {
		t.Errorf("innodb_buffer_pool_size = %s with cache 64MiB", got)
	}
	if r2.db.templateVersion == "" {
		t.Error("template version not recorded")
	}

	// Accounts: root only through the socket, tierbench over TCP.
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", filepath.Join(r2.data, "mariadbd.sock")
	admin, _ := mysql.NewConnector(cfg)
	adb := sql.OpenDB(admin)
	defer adb.Close()
	rows, err := adb.Query("SELECT CONCAT(user, '@', host) FROM mysql.user ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var accounts []string
	for rows.Next() {
		var a string
		rows.Scan(&a)
		accounts = append(accounts, a)
	}
	rows.Close()
	if got, want := strings.Join(accounts, " "), "mariadb.sys@localhost root@localhost tierbench@127.0.0.1"; got != want {
		t.Errorf("accounts %q, want %q", got, want)
	}
	cfg = mysql.NewConfig()
	cfg.User, cfg.Addr, cfg.Logger = "root", r2.db.Addr(), quietLogger{}
	tcp, _ := mysql.NewConnector(cfg)
	tdb := sql.OpenDB(tcp)
	defer tdb.Close()
	if err := tdb.Ping(); err == nil {
		t.Error("root logged in over TCP without a password")
	}
}

// TestKilledServer kills the server: Check fails with the log's tail and
// Close still returns, leaving no server.
func TestKilledServer(t *testing.T) {
	needServer(t)
	root := base(t)
	r := open(t, root, "", engine.NoSync, nil) // no scratch: a private template
	if err := r.db.Check(); err != nil {
		t.Fatalf("check of a running server: %v", err)
	}
	if err := syscall.Kill(r.db.proc.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.db.proc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("mariadbd survived kill -9")
	}
	err := r.db.Check()
	if err == nil {
		t.Fatal("check passed after kill -9")
	}
	if !strings.Contains(err.Error(), "ready for connections") {
		t.Errorf("check error lacks the log tail: %v", err)
	}
	if _, err := r.db.NewSession(context.Background()); err == nil {
		t.Error("new session on a killed server")
	}
	done := make(chan error, 1)
	go func() { done <- r.db.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("close after kill: %v", err)
		}
	case <-time.After(70 * time.Second):
		t.Fatal("close did not return")
	}
	if pids := serverPIDs(t, r.data); len(pids) > 0 {
		t.Errorf("mariadbd %v still runs", pids)
	}
	for _, dir := range r.db.tempDirs {
		if exists(dir) {
			t.Errorf("temporary folder %s left after close", dir)
		}
	}
}

// TestLongPath puts the run folders so deep that a socket in the datadir
// would not fit in sun_path: the socket moves to a temporary folder, which
// Close removes.
func TestLongPath(t *testing.T) {
	needServer(t)
	root := base(t)
	deep := filepath.Join(root, strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	r := open(t, deep, filepath.Join(root, "scratch"), engine.Sync, nil)
	if len(r.db.tempDirs) != 1 {
		t.Fatalf("temporary folders %v, want one for the socket", r.db.tempDirs)
	}
	sock := variable(t, r.db, "socket")
	if !strings.HasPrefix(sock, r.db.tempDirs[0]) {
		t.Errorf("socket %s is not in %s", sock, r.db.tempDirs[0])
	}
	checkRecords(t, r.db)
	if err := r.db.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(r.db.tempDirs[0]) {
		t.Errorf("socket folder %s left after close", r.db.tempDirs[0])
	}
}

// TestUnreachableFolder fails clearly when the mysql user cannot enter the
// run folders.
func TestUnreachableFolder(t *testing.T) {
	needServer(t)
	root := base(t)
	closed := filepath.Join(root, "closed")
	for _, p := range []string{filepath.Join(closed, "data"), filepath.Join(closed, "redo")} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Engine{}.Open(context.Background(), engine.Config{
		Dirs:       map[string]string{Data: filepath.Join(closed, "data"), Redo: filepath.Join(closed, "redo")},
		Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(nil), Scratch: filepath.Join(root, "scratch")})
	if err == nil || !strings.Contains(err.Error(), "folder "+closed+" is closed") {
		t.Fatalf("open under a 0700 folder: %v", err)
	}
}

// TestSpecAndOptions needs no server.
func TestSpecAndOptions(t *testing.T) {
	s := Engine{}.Spec()
	if s.Name != "mariadb" || !s.HasComponent(Data) || !s.HasComponent(Redo) || s.Supports(engine.NoWAL) {
		t.Errorf("spec %+v", s)
	}
	for _, m := range s.Modes {
		if _, err := flushAtCommit(m.Durability); err != nil {
			t.Error(err)
		}
	}
	if _, err := flushAtCommit(engine.NoWAL); err == nil {
		t.Error("nowal accepted")
	}
	if o := parseOptions(s.MustResolveOptions(nil)); o.cache != 128<<20 || o.redoLogSize != 96<<20 || o.binlog {
		t.Errorf("defaults %+v", o)
	}
	if o := parseOptions(s.MustResolveOptions(map[string]string{"cache": "64MiB"})); o.cache != 64<<20 {
		t.Errorf("cache 64MiB: %+v", o)
	}
	if _, err := s.ResolveOptions(map[string]string{"redo_log_size": "1MiB"}); err == nil || !strings.Contains(err.Error(), "at least 4MiB") {
		t.Errorf("a redo log below MariaDB's least: %v", err)
	}
}

// TestReopen checks that opening the same folders again restarts the server
// on its data, as the runner's cache: cold restart does.
func TestReopen(t *testing.T) {
	needServer(t)
	root := base(t)
	r := open(t, root, filepath.Join(root, "scratch"), engine.Sync, nil)
	checkRecords(t, r.db)
	if err := r.db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Engine{}.Open(context.Background(), engine.Config{
		Dirs: map[string]string{Data: r.data, Redo: r.redo}, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(nil), Scratch: filepath.Join(root, "scratch")})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if found, err := session(t, db.(*DB)).Read(context.Background(), []byte("user000007")); err != nil || !found {
		t.Errorf("record after reopen: found=%v err=%v", found, err)
	}
}
