package redis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/testenv"
)

const nFields = 10

func needRedis(t *testing.T) {
	t.Helper()
	if _, err := proc.Find("redis-server", binaries...); err != nil {
		testenv.Skip(t, "redis-server is not installed (apt-get install redis-server)")
	}
}

// reachable makes a 0755 folder under /var/tmp, removed when t ends: as
// root the server runs as user redis, which cannot enter t.TempDir()'s 0700
// parents, as the runner's tier folders let it.
func reachable(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "tierbench-redis-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type testDB struct {
	*DB
	data, scratch string
	cfg           engine.Config
}

// openTest starts a server on a fresh data folder, closed at cleanup, and
// checks then that no server for that folder is left.
func openTest(t *testing.T, d engine.Durability, opts map[string]string) *testDB {
	t.Helper()
	needRedis(t)
	root := reachable(t)
	data, scratch := filepath.Join(root, "data"), filepath.Join(root, "scratch")
	for _, p := range []string{data, scratch} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tracked := map[int]bool{}
	cfg := engine.Config{Dirs: map[string]string{Data: data}, Durability: d, Options: Engine{}.Spec().MustResolveOptions(opts), Scratch: scratch,
		Track: func(pid int) func() {
			tracked[pid] = true
			return func() { delete(tracked, pid) }
		}}
	db, err := Engine{}.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tb := &testDB{DB: db.(*DB), data: data, scratch: scratch, cfg: cfg}
	if !tracked[tb.PID()] {
		t.Errorf("server pid %d was not tracked", tb.PID())
	}
	t.Cleanup(func() {
		_ = tb.Close()
		if len(tracked) != 0 {
			t.Errorf("still tracked after Close: %v", tracked)
		}
		if pids := serversFor(data); len(pids) != 0 {
			t.Errorf("redis-server still running for %s after Close: pids %v", data, pids)
		}
	})
	return tb
}

// serversFor lists processes whose command line names dir (the server
// keeps its arguments: set-proc-title no) or whose working folder is dir.
func serversFor(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if (bytes.Contains(cmd, []byte("redis-server")) && bytes.Contains(cmd, []byte(dir))) || cwd == dir {
			// A zombie has exited; only its entry is left.
			if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); bytes.Contains(st, []byte(") Z ")) {
				continue
			}
			out = append(out, pid)
		}
	}
	return out
}

func session(t *testing.T, db engine.DB) engine.Records {
	t.Helper()
	s, err := db.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r, err := engine.NeedRecords(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func key(i int) []byte { return []byte(fmt.Sprintf("user%06d", i)) }

func record(i int) [][]byte {
	f := make([][]byte, nFields)
	for j := range f {
		f[j] = bytes.Repeat([]byte{byte('a' + (i+j)%26)}, 100)
	}
	return f
}

func load(t *testing.T, r engine.Records, from, n int) {
	t.Helper()
	keys, recs := make([][]byte, n), make([][][]byte, n)
	for i := range keys {
		keys[i], recs[i] = key(from+i), record(from+i)
	}
	if err := r.InsertBatch(context.Background(), keys, recs); err != nil {
		t.Fatal(err)
	}
}

func configGet(t *testing.T, db *DB, name string) string {
	t.Helper()
	m, err := db.client.ConfigGet(context.Background(), name).Result()
	if err != nil {
		t.Fatalf("CONFIG GET %s: %v", name, err)
	}
	return m[name]
}

// filesUnder lists the regular files under dir with their sizes.
func filesUnder(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPlacement checks that the AOF lands in the data folder under sync and
// is absent under nowal, and that the server has no file open elsewhere.
func TestPlacement(t *testing.T) {
	for _, tc := range []struct {
		d       engine.Durability
		wantAOF bool
	}{{engine.Sync, true}, {engine.NoWAL, false}} {
		t.Run(string(tc.d), func(t *testing.T) {
			db := openTest(t, tc.d, nil)
			r := session(t, db)
			ctx := context.Background()
			load(t, r, 0, 500)
			for i := 500; i < 1000; i++ {
				if err := r.Insert(ctx, key(i), record(i)); err != nil {
					t.Fatal(err)
				}
			}
			files := filesUnder(t, db.data)
			var aof int64
			for name, size := range files {
				if strings.Contains(name, ".aof") || strings.HasPrefix(name, "appendonlydir") {
					aof += size
				}
			}
			// 1000 records of 10 x 100 bytes: an AOF holding them is > 1 MB.
			if tc.wantAOF && (aof < 1_000_000 || files["appendonlydir/appendonly.aof.manifest"] == 0) {
				t.Errorf("data folder holds %d bytes of AOF, want > 1 MB in appendonlydir/: %v", aof, files)
			}
			if !tc.wantAOF && aof != 0 {
				t.Errorf("nowal wrote an AOF: %v", files)
			}
			if _, ok := files[LogName]; !ok {
				t.Errorf("no %s in the data folder: %v", LogName, files)
			}
			if got := filesUnder(t, db.scratch); len(got) != 0 {
				t.Errorf("scratch folder was written: %v", got)
			}
			if got := configGet(t, db.DB, "dir"); got != db.data {
				t.Errorf("dir = %q, want %q", got, db.data)
			}
			for _, name := range []string{"pidfile", "unixsocket", "logfile"} {
				if got := configGet(t, db.DB, name); got != "" {
					t.Errorf("%s = %q, want none", name, got)
				}
			}
			if cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", db.PID())); cwd != db.data {
				t.Errorf("server works in %q, want %q", cwd, db.data)
			}
			// Every regular file the server has open is in the data folder
			// (its log arrives on stdout, opened by tierbench there too).
			fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", db.PID()))
			if err != nil {
				t.Fatal(err)
			}
			for _, fd := range fds {
				target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", db.PID(), fd.Name()))
				if err != nil || !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "/dev/") {
					continue
				}
				if !strings.HasPrefix(target, db.data+"/") {
					t.Errorf("server has %s open, outside the data folder", target)
				}
			}
		})
	}
}

// TestModes starts each durability mode, checks the server's settings and
// exercises every records operation.
func TestModes(t *testing.T) {
	for _, tc := range []struct {
		d                     engine.Durability
		appendonly, appendfsy string
	}{
		{engine.Sync, "yes", "always"},
		{engine.Async, "yes", "everysec"},
		{engine.NoSync, "yes", "no"},
		{engine.NoWAL, "no", ""},
	} {
		t.Run(string(tc.d), func(t *testing.T) {
			db := openTest(t, tc.d, nil)
			ctx := context.Background()
			if got := configGet(t, db.DB, "appendonly"); got != tc.appendonly {
				t.Errorf("appendonly = %q, want %q", got, tc.appendonly)
			}
			if tc.appendfsy != "" {
				if got := configGet(t, db.DB, "appendfsync"); got != tc.appendfsy {
					t.Errorf("appendfsync = %q, want %q", got, tc.appendfsy)
				}
			}
			for name, want := range map[string]string{"bind": "127.0.0.1", "protected-mode": "yes", "save": "", "maxmemory": "0"} {
				if got := configGet(t, db.DB, name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			if v := db.Version(); !strings.HasPrefix(v, "Redis 7.") && !strings.HasPrefix(v, "Redis ") {
				t.Errorf("Version() = %q", v)
			} else {
				t.Logf("Version() = %q", v)
			}
			if err := db.Check(); err != nil {
				t.Fatalf("Check on a running server: %v", err)
			}

			r := session(t, db)
			load(t, r, 0, 100)
			for _, i := range []int{0, 57, 99} {
				if found, err := r.Read(ctx, key(i)); err != nil || !found {
					t.Errorf("Read(%s) = %v, %v; want found", key(i), found, err)
				}
			}
			if found, err := r.Read(ctx, []byte("nosuchkey")); err != nil || found {
				t.Errorf("Read(missing) = %v, %v; want not found", found, err)
			}
			all, err := db.client.HGetAll(ctx, string(key(57))).Result()
			if err != nil || len(all) != nFields || all["field9"] != string(record(57)[9]) {
				t.Errorf("HGETALL after InsertBatch: %d fields, %v", len(all), err)
			}
			if score, err := db.client.ZScore(ctx, IndexKey, string(key(57))).Result(); err != nil || score != float64(JavaHash(key(57))) {
				t.Errorf("ZSCORE %s = %v, %v; want %d", key(57), score, err, JavaHash(key(57)))
			}

			if err := r.Update(ctx, key(7), []engine.Field{{Index: 3, Value: []byte("updated")}}); err != nil {
				t.Fatal(err)
			}
			if got, err := db.client.HGet(ctx, string(key(7)), "field3").Result(); err != nil || got != "updated" {
				t.Errorf("HGET field3 after Update = %q, %v", got, err)
			}
			if got, _ := db.client.HGet(ctx, string(key(7)), "field4").Result(); got != string(record(7)[4]) {
				t.Errorf("Update changed field4 too: %q", got)
			}
			if found, err := r.Read(ctx, key(7)); err != nil || !found {
				t.Errorf("Read after Update = %v, %v", found, err)
			}

			if err := r.Insert(ctx, key(100), record(100)); err != nil {
				t.Fatal(err)
			}
			if n, _ := db.client.ZCard(ctx, IndexKey).Result(); n != 101 {
				t.Errorf("index holds %d keys, want 101", n)
			}
			// From the lowest hash, a scan sees every record.
			lowest := key(0)
			for i := range 101 {
				if JavaHash(key(i)) < JavaHash(lowest) {
					lowest = key(i)
				}
			}
			for _, c := range []struct{ count, want int }{{10, 10}, {1, 1}, {101, 101}, {500, 101}} {
				if n, err := r.Scan(ctx, lowest, c.count); err != nil || n != c.want {
					t.Errorf("Scan(%s, %d) = %d, %v; want %d", lowest, c.count, n, err, c.want)
				}
			}
			if n, err := r.Scan(ctx, []byte("\x7f\x7f\x7f\x7f\x7f\x7f\x7f"), 10); err != nil || n > 10 {
				t.Errorf("Scan from a high hash = %d, %v", n, err)
			}
		})
	}
}

// TestOptions checks that cache sets maxmemory (with noeviction) and
// io_threads sets io-threads.
func TestOptions(t *testing.T) {
	db := openTest(t, engine.Async, map[string]string{"cache": strconv.Itoa(64 << 20), "io_threads": "2"})
	for name, want := range map[string]string{
		"maxmemory": strconv.Itoa(64 << 20), "maxmemory-policy": "noeviction",
		"io-threads": "2", "io-threads-do-reads": "yes",
	} {
		if got := configGet(t, db.DB, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	load(t, session(t, db), 0, 10)

	needRedis(t)
	// Bad values are refused where a run's Config is built.
	for _, opts := range []map[string]string{{"cache": "lots"}, {"io_threads": "0"}, {"io_threads": "x"}} {
		if _, err := (Engine{}).Spec().ResolveOptions(opts); err == nil {
			t.Errorf("options %v accepted", opts)
		}
	}
	_, err := Engine{}.Open(context.Background(), engine.Config{Dirs: map[string]string{Data: t.TempDir()}, Durability: "fsync", Options: Engine{}.Spec().MustResolveOptions(nil)})
	if err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("Open with an unknown durability: %v", err)
	}
}

// TestFullCacheFailsLoudly checks that writes past maxmemory are errors,
// not evictions.
func TestFullCacheFailsLoudly(t *testing.T) {
	db := openTest(t, engine.NoWAL, map[string]string{"cache": strconv.Itoa(4 << 20)})
	r := session(t, db)
	var err error
	for i := 0; i < 20000 && err == nil; i++ {
		err = r.Insert(context.Background(), key(i), record(i))
	}
	if err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("inserting 20 MB into a 4 MiB cache: %v, want an OOM error", err)
	}
	if n, _ := db.client.DBSize(context.Background()).Result(); n == 0 {
		t.Error("no records kept")
	}
	if found, err := r.Read(context.Background(), key(0)); err != nil || !found {
		t.Errorf("the first record was evicted: %v, %v", found, err)
	}
}

// TestReadWrongType checks that an error reply to HGETALL is an error, not
// a record.
func TestReadWrongType(t *testing.T) {
	db := openTest(t, engine.NoWAL, nil)
	if err := db.client.Set(context.Background(), "plain", "string", 0).Err(); err != nil {
		t.Fatal(err)
	}
	r := session(t, db)
	if found, err := r.Read(context.Background(), []byte("plain")); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("Read of a string key = %v, %v; want WRONGTYPE", found, err)
	}
	// The connection is still in step: the next read is right.
	load(t, r, 0, 1)
	if found, err := r.Read(context.Background(), key(0)); err != nil || !found {
		t.Errorf("Read after an error reply = %v, %v", found, err)
	}
}

// TestRestart reopens the same folder, as cache: cold does: the AOF (sync)
// or the RDB written at a clean stop (nowal) brings the records back.
func TestRestart(t *testing.T) {
	for _, d := range []engine.Durability{engine.Sync, engine.NoWAL} {
		t.Run(string(d), func(t *testing.T) {
			db := openTest(t, d, nil)
			s, err := db.NewSession(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			load(t, s.(engine.Records), 0, 50)
			// Close closes the session left open.
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("closing a session after its DB: %v", err)
			}
			db2, err := Engine{}.Open(context.Background(), db.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer db2.Close()
			r := session(t, db2)
			for _, i := range []int{0, 49} {
				if found, err := r.Read(context.Background(), key(i)); err != nil || !found {
					t.Errorf("after restart Read(%s) = %v, %v", key(i), found, err)
				}
			}
		})
	}
}

// TestKilledServer checks that a server killed under the engine fails
// Check with its log, and that Close still returns and leaves nothing
// running.
func TestKilledServer(t *testing.T) {
	db := openTest(t, engine.Sync, nil)
	r := session(t, db)
	load(t, r, 0, 10)
	if err := syscall.Kill(db.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-db.proc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("server did not die")
	}
	err := db.Check()
	if err == nil || !strings.Contains(err.Error(), "Ready to accept connections") {
		t.Fatalf("Check after kill -9 = %v; want the log tail", err)
	}
	t.Logf("Check: %v", err)
	if _, err := r.Read(context.Background(), key(0)); err == nil {
		t.Error("Read on a dead server succeeded")
	}
	if _, err := db.NewSession(context.Background()); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("NewSession on a dead server = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "already stopped") {
			t.Errorf("Close after a crash = %v; want the crash reported", err)
		}
		t.Logf("Close: %.120s...", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if pids := serversFor(db.data); len(pids) != 0 {
		t.Errorf("redis-server still running: %v", pids)
	}
}

// TestMissingBinary checks the message that says what to install.
func TestMissingBinary(t *testing.T) {
	saved := binaries
	binaries = []string{"/nonexistent/redis-server"}
	defer func() { binaries = saved }()
	_, err := Engine{}.Open(context.Background(), engine.Config{Dirs: map[string]string{Data: t.TempDir()}, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(nil)})
	if err == nil || !strings.Contains(err.Error(), "apt-get install redis-server") || !errors.Is(err, proc.ErrNotInstalled) {
		t.Errorf("Open without redis-server = %v", err)
	}
	t.Logf("Open: %v", err)
}

// TestBadStartShowsLog checks that a server that cannot start fails Open
// with its log.
func TestBadStartShowsLog(t *testing.T) {
	needRedis(t)
	// An AOF manifest that is garbage makes redis-server refuse to start.
	dir := reachable(t)
	if err := os.MkdirAll(filepath.Join(dir, "appendonlydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Engine{}.Open(context.Background(), engine.Config{Dirs: map[string]string{Data: dir}, Durability: engine.Sync, Options: Engine{}.Spec().MustResolveOptions(nil)})
	if err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("Open on a bad AOF = %v; want the log naming the manifest", err)
	}
	t.Logf("Open: %v", err)
	if pids := serversFor(dir); len(pids) != 0 {
		t.Errorf("redis-server still running: %v", pids)
	}
}

func TestJavaHash(t *testing.T) {
	// Values from Java's "...".hashCode().
	for s, want := range map[string]int32{"": 0, "a": 97, "hello": 99162322, "user1000": -267579734} {
		if got := JavaHash([]byte(s)); got != want {
			t.Errorf("JavaHash(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestSessionAllocs keeps the hot path lean: a Read, Update or Insert costs
// go-redis's command and the boxing of arguments, not per-field copies.
func TestSessionAllocs(t *testing.T) {
	db := openTest(t, engine.NoWAL, nil)
	r := session(t, db)
	ctx := context.Background()
	load(t, r, 0, 1)
	k, rec := key(0), record(0)
	upd := []engine.Field{{Index: 2, Value: rec[2]}}
	for name, fn := range map[string]func(){
		"read":   func() { _, _ = r.Read(ctx, k) },
		"update": func() { _ = r.Update(ctx, k, upd) },
		"insert": func() { _ = r.Insert(ctx, k, rec) },
	} {
		allocs := testing.AllocsPerRun(200, fn)
		t.Logf("%s: %.0f allocs/op", name, allocs)
		if limit := 40.0; allocs > limit {
			t.Errorf("%s allocates %.0f times per op, want <= %.0f", name, allocs, limit)
		}
	}
}

// TestConcurrentSessions runs sessions side by side (run with -race): each
// has its own connection, and all see each other's records.
func TestConcurrentSessions(t *testing.T) {
	db := openTest(t, engine.Async, nil)
	const clients, per = 8, 200
	errs := make(chan error, clients)
	for c := range clients {
		s, err := db.NewSession(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer s.Close()
			r := s.(engine.Records)
			ctx := context.Background()
			for i := c * per; i < (c+1)*per; i++ {
				if err := r.Insert(ctx, key(i), record(i)); err != nil {
					errs <- err
					return
				}
				if found, err := r.Read(ctx, key(i)); err != nil || !found {
					errs <- fmt.Errorf("read own %s: %v %v", key(i), found, err)
					return
				}
				if _, err := r.Scan(ctx, key(i), 5); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n, _ := db.client.ZCard(context.Background(), IndexKey).Result(); n != clients*per {
		t.Errorf("index holds %d keys, want %d", n, clients*per)
	}
}

// TestOneConnectionPerSession checks that a session's commands and its
// pipelines (Insert, Scan) share its one connection.
func TestOneConnectionPerSession(t *testing.T) {
	db := openTest(t, engine.NoWAL, nil)
	ctx := context.Background()
	const sessions = 4
	for i := range sessions {
		r := session(t, db)
		load(t, r, 10*i, 10)
		if err := r.Insert(ctx, key(1000+i), record(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Scan(ctx, key(0), 5); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Read(ctx, key(i)); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.client.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The sessions' connections and the one this CLIENT LIST came on.
	if n := strings.Count(strings.TrimSpace(list), "\n") + 1; n != sessions+1 {
		t.Errorf("server has %d clients for %d sessions (+1 for the test):\n%s", n, sessions, list)
	}
}
