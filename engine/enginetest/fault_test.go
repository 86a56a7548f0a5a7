package enginetest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
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
	for _, e := range Servers(t) {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			dirs := Folders(t, e, "")
			db, err := OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			t.Cleanup(func() {
				if !closed {
					db.Close()
				}
			})
			w := ycsbA(t, 1000)
			if _, err := w.Load(ctx, e.Name, db, 2); err != nil {
				t.Fatal(err)
			}
			pid := db.(interface{ PID() int }).PID()
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
					c, err := w.NewClient(e.Name, i, s)
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
			closed = true
			done := make(chan error, 1)
			go func() { done <- db.Close() }()
			select {
			case err := <-done:
				t.Logf("Close after the kill (%s): %.200v", time.Since(start).Round(time.Millisecond), err)
			case <-time.After(30 * time.Second):
				t.Fatal("Close hangs after the server was killed")
			}
			if left := processesIn(dirs); len(left) > 0 {
				t.Errorf("processes left in the run folders after Close: %v", left)
			}
		})
	}
}

// processesIn lists live processes whose working folder is one of dirs or
// under them: every server runs in its data folder (PostgreSQL's
// backends inherit the postmaster's).
func processesIn(dirs map[string]string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil {
			continue
		}
		if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); strings.Contains(string(st), ") Z ") {
			continue // exited; only its entry is left
		}
		for _, d := range dirs {
			if cwd == d || strings.HasPrefix(cwd, d+"/") {
				comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
				out = append(out, e.Name()+" "+strings.TrimSpace(string(comm)))
			}
		}
	}
	return out
}

// tierFull is what runner.tierFull looks for in a failed run's error to
// name the tier that filled up.
func tierFull(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"no space left", "enospc", "disk full", "could not extend file"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// needRootForTiers skips t unless it may mount tiers (and run servers).
func needRootForTiers(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts tmpfs tiers and runs the servers as their own OS users")
	}
}

// mountTmpfs mounts a tmpfs of size (mount's size=, "24m") on a new 0755
// folder under the shared folder, unmounted when t ends.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir, err := os.MkdirTemp(root(t), "tier-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0755", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s)", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
			exec.Command("umount", "-l", dir).Run()
		}
		os.Remove(dir)
	})
	return dir
}

// fill writes a file in dir until the filesystem is full, then frees keep
// bytes of it.
func fill(t *testing.T, dir string, keep int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		m, err := f.Write(buf)
		n += int64(m)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(max(n-keep, 0)); err != nil {
		t.Fatal(err)
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
	needRootForTiers(t)
	// Each tier holds the engine's template (PostgreSQL's cluster ~40MB
	// with its first 16MB WAL segment; MariaDB's datadir ~18MB, its 96MiB
	// redo log and the 12MiB ibtmp1 it makes at start) and a few MiB more;
	// Redis's holds its AOF only.
	sizes := map[string]string{"postgres": "64m", "mariadb": "136m", "redis": "24m"}
	for _, e := range Servers(t) {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			tier := mountTmpfs(t, sizes[e.Name])
			dirs := Folders(t, e, tier)
			db, err := OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			t.Cleanup(func() {
				if !closed {
					db.Close()
				}
			})
			start := time.Now()
			st, err := ycsbA(t, 200000).Load(ctx, e.Name, db, 2)
			t.Logf("load: %d records in %s: %v", st.Records, time.Since(start).Round(time.Millisecond), err)
			if err == nil {
				t.Fatal("200k records loaded onto a tier too small for them")
			}
			if !tierFull(err) {
				t.Errorf("the load's error does not say the storage is full: %v", err)
			}
			closed = true
			if err := db.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			if left := processesIn(dirs); len(left) > 0 {
				t.Errorf("processes left after Close: %v", left)
			}
			if e.Name != "postgres" {
				return // a MariaDB run folder is not opened twice
			}

			// Reopen the cluster (as cache: cold does) on the tier, now full.
			log := filepath.Join(dirs["data"], "tierbench-postgres.log")
			roomInLastPage(t, log)
			fill(t, tier, 0)
			db, err = OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync})
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
			if left := processesIn(dirs); len(left) > 0 {
				t.Errorf("processes left after a failed start: %v", left)
			}
		})
	}
}

// TestFullTierAtStart opens each SQL engine on a tier too full for it: one
// too full for the run's copy of the template fails Open with the copy's
// ENOSPC; MariaDB's data on a tier that holds its datadir but not the
// temporary tablespace it makes at start fails Open with the server's log,
// noted "disk full". Both are errors runner.tierFull recognises.
func TestFullTierAtStart(t *testing.T) {
	needRootForTiers(t)
	for _, e := range SQLEngines(t) {
		t.Run(e.Name+"/copy", func(t *testing.T) {
			tier := mountTmpfs(t, "24m")
			dirs := Folders(t, e, tier)
			fill(t, tier, 1<<20)
			db, err := OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync})
			if err == nil {
				db.Close()
				t.Fatal("opened on a full tier")
			}
			t.Logf("open: %v", err)
			if !tierFull(err) {
				t.Errorf("Open's error does not say the storage is full: %v", err)
			}
			if left := processesIn(dirs); len(left) > 0 {
				t.Errorf("processes left after a failed Open: %v", left)
			}
		})
	}
	t.Run("mariadb/start", func(t *testing.T) {
		e := sqlEngines[1]
		tier := mountTmpfs(t, "24m")
		dirs := Folders(t, e, "")
		dirs[e.Components[0]] = Folders(t, e, tier)[e.Components[0]]
		db, err := OpenConfig(t, e, engine.Config{Dirs: dirs, Durability: engine.Sync})
		if err == nil {
			db.Close()
			t.Fatal("mariadbd started with no room for its temporary tablespace")
		}
		t.Logf("open: %v", err)
		for _, want := range []string{"did not start", "last lines of its log", "./ibtmp1", "disk full"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Open's error lacks %q", want)
			}
		}
		if !tierFull(err) {
			t.Errorf("Open's error does not say the storage is full: %v", err)
		}
		if left := processesIn(dirs); len(left) > 0 {
			t.Errorf("processes left after a failed start: %v", left)
		}
	})
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
