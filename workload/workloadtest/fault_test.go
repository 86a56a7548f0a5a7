package workloadtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
)

// readyLines are what each server logs once it accepts connections: a log
// tail holding it is the server's own log.
var readyLines = map[string]string{
	"postgres": "ready to accept connections",
	"mariadb":  "ready for connections",
	"redis":    "Ready to accept connections",
}

// TestServerKilledMidRun kills each server (kill -9) while clients run
// ycsb-a: every client's operation fails rather than hangs, Check reports
// the death with the server's log, and Close returns and leaves no process.
func TestServerKilledMidRun(t *testing.T) {
	for _, e := range enginetest.Servers(t) {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			dirs := enginetest.Folders(t, e, "")
			db, closeDB := enginetest.OpenClosedByTest(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync, Options: e.Engine.Spec().MustResolveOptions(nil)})
			w := ycsbA(t, 1000)
			if _, err := w.Load(ctx, db, 2); err != nil {
				t.Fatal(err)
			}
			pid := db.(engine.PIDer).PID()
			if pid <= 0 {
				t.Fatalf("server pid %d", pid)
			}

			// Clients issue operations until one fails.
			const clients = 4
			var (
				started sync.WaitGroup
				ops     [clients]int
			)
			failed := make(chan error, clients)
			started.Add(clients)
			for i := range clients {
				go func() {
					s, err := db.NewSession(ctx)
					if err != nil {
						started.Done()
						failed <- err
						return
					}
					defer s.Close()
					c, err := w.NewClient(i, s)
					if err != nil {
						started.Done()
						failed <- err
						return
					}
					for n := 0; ; n++ {
						if n == 10 {
							started.Done()
						}
						if _, err := c.Do(ctx); err != nil {
							if n < 10 {
								started.Done()
							}
							ops[i] = n
							failed <- err
							return
						}
					}
				}()
			}
			started.Wait()
			time.Sleep(100 * time.Millisecond)
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			deadline := time.After(20 * time.Second)
			for range clients {
				select {
				case err := <-failed:
					t.Logf("client error %s after the kill: %v", time.Since(killed).Round(time.Millisecond), err)
				case <-deadline:
					t.Fatalf("clients still running 20s after the server was killed: operations hang")
				}
			}
			t.Logf("operations per client before the kill: %v", ops)

			// The exit is noticed asynchronously; it cannot take long.
			var cerr error
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if cerr = db.(engine.Checker).Check(); cerr != nil {
					break
				}
			}
			if cerr == nil {
				t.Fatal("Check passed 10s after the server was killed")
			}
			t.Logf("Check: %v", cerr)
			for _, want := range []string{"exited", "signal: killed", "last lines of its log", readyLines[e.Name]} {
				if !strings.Contains(cerr.Error(), want) {
					t.Errorf("Check's error lacks %q", want)
				}
			}

			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- closeDB() }()
			select {
			case err := <-done:
				t.Logf("Close after the kill (%s): %.200v", time.Since(start).Round(time.Millisecond), err)
			case <-time.After(30 * time.Second):
				t.Fatal("Close hangs after the server was killed")
			}
			if left := enginetest.ProcessesIn(dirs); len(left) > 0 {
				t.Errorf("processes left in the run folders after Close: %v", left)
			}
		})
	}
}

// TestTierTooSmall loads a data set that does not fit on a tmpfs holding
// all of a server's components: the load fails with an error that names
// the full storage as runner.tierFull recognises it. MariaDB answers error
// 1114 ("The table 'usertable' is full"), which the engine notes as "disk
// full"; Redis logs a short AOF write and exits, which the engine reads in
// its log. PostgreSQL fails
// either way a full tier shows: a table that cannot grow ("could not extend
// file", an ERROR) or a WAL segment that cannot be made (a PANIC and a crash
// restart; the client reads "unexpected EOF", and the reason comes from the
// server's log). Then, the tier full, its cluster cannot start again, and
// Open's error has the log line that says why.
func TestTierTooSmall(t *testing.T) {
	enginetest.NeedRootForTiers(t)
	// Each tier holds the engine's template (PostgreSQL's cluster ~40MB
	// with its first 16MB WAL segment; MariaDB's datadir ~18MB, its 96MiB
	// redo log and the 12MiB ibtmp1 it makes at start) and a few MiB more;
	// Redis's holds its AOF only.
	sizes := map[string]string{"postgres": "64m", "mariadb": "136m", "redis": "24m"}
	for _, e := range enginetest.Servers(t) {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			tier := enginetest.MountTmpfs(t, sizes[e.Name])
			dirs := enginetest.Folders(t, e, tier)
			db, closeDB := enginetest.OpenClosedByTest(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync, Options: e.Engine.Spec().MustResolveOptions(nil)})
			start := time.Now()
			st, err := ycsbA(t, 200000).Load(ctx, db, 2)
			t.Logf("load: %d records in %s: %v", st.Records, time.Since(start).Round(time.Millisecond), err)
			if err == nil {
				t.Fatal("200k records loaded onto a tier too small for them")
			}
			if !engine.IsDiskFull(err) {
				t.Errorf("the load's error does not say the storage is full: %v", err)
			}
			if err := closeDB(); err != nil {
				t.Logf("close: %v", err)
			}
			if left := enginetest.ProcessesIn(dirs); len(left) > 0 {
				t.Errorf("processes left after Close: %v", left)
			}
			if e.Name != "postgres" {
				return // a MariaDB run folder is not opened twice
			}

			// Reopen the cluster (as cache: cold does) on the tier, now full.
			log := filepath.Join(dirs["data"], "tierbench-postgres.log")
			roomInLastPage(t, log)
			enginetest.Fill(t, tier, 0)
			db, err = enginetest.OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync, Options: e.Engine.Spec().MustResolveOptions(nil)})
			if err == nil {
				db.Close()
				t.Fatal("a cluster started on a full tier")
			}
			t.Logf("reopen on the full tier: %v", err)
			for _, want := range []string{"did not start", "last lines of its log", `could not write lock file "postmaster.pid": No space left on device`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Open's error lacks %q", want)
				}
			}
			if left := enginetest.ProcessesIn(dirs); len(left) > 0 {
				t.Errorf("processes left after a failed start: %v", left)
			}
		})
	}
}

// roomInLastPage pads a log with a line so that its last page (tmpfs
// allocates whole pages) has room for a few more lines: the server can then
// still log why it fails on a full tier, as it could with its log on
// another tier, and the test does not depend on where the log happened to
// end.
func roomInLastPage(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	pad := 4096 - st.Size()%4096 + 64
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := []byte("tierbench test: padding to the log's next page")
	line = append(line, bytes.Repeat([]byte{' '}, int(max(pad-int64(len(line))-1, 0)))...)
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
}
