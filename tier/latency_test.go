package tier

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/procfs"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
)

// k9Env, when set to a state folder, makes the test binary the owner in
// TestKill9LatencyTier: it provisions a latency tier there the way
// tierbench does, fsyncs through it, and waits to be killed.
const k9Env = "TIERBENCH_TIER_TEST_K9_STATE"

// k9Owner provisions the tier (tmpfs with fsync 1 ms and write
// 20 µs) through the Provisioner, as `tierbench run` does, then writes and
// fdatasyncs two files in it (an engine's data and WAL) until killed.
func k9Owner(state string) {
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	l, err := OpenLedger(state)
	if err != nil {
		fail(err)
	}
	p := &Provisioner{Ledger: l, Tag: "k9"}
	base, err := p.Tmpfs("slow", TmpfsSpec{Size: 64 << 20})
	if err != nil {
		fail(err)
	}
	dir, err := p.Latency("slow", base, LatencySpec{Fsync: time.Millisecond, Write: 20 * time.Microsecond}, false)
	if err != nil {
		fail(err)
	}
	synced := make(chan struct{}, 2)
	for _, name := range []string{"data", "wal"} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			fail(err)
		}
		go func() {
			buf := make([]byte, 4096)
			for i := int64(0); ; i++ {
				if _, err := f.WriteAt(buf, i%1024*4096); err != nil {
					fail(err)
				}
				if err := unix.Fdatasync(int(f.Fd())); err != nil {
					fail(err)
				}
				if i == 0 {
					synced <- struct{}{}
				}
			}
		}()
	}
	<-synced
	<-synced
	fmt.Println("ready")
	// Bounded, so an owner its test forgot cannot run for ever.
	time.Sleep(2 * time.Minute)
	os.Exit(3)
}

// TestKill9LatencyTier kills (-9) a process that provisioned a latency tier
// and fsyncs through it, as `kill -9` of tierbench in a study's measured
// window does, then runs the ledger's Cleanup once. With the FUSE server
// inside the owner, the owner stayed a zombie for ever (a thread in D state
// in request_wait_answer, waiting on its own mount) and cleanup found
// nothing to do. The second case stops the latency server before the kill,
// so the owner cannot finish dying either (it waits for FUSE answers that
// do not come): cleanup must see it as dead and free it.
//
// After the one Cleanup: the owner is reaped, and no mount, no latency
// server, no folder and no ledger record is left.
func TestKill9LatencyTier(t *testing.T) {
	if state := os.Getenv(k9Env); state != "" {
		k9Owner(state)
		return
	}
	needRoot(t)
	if err := emulate.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	for _, tc := range []struct {
		name       string
		stopServer bool
	}{
		{"owner killed", false},
		{"owner killed while its latency server is stopped", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			owner, reaped := startK9Owner(t, state)
			l, err := OpenLedger(state)
			if err != nil {
				t.Fatal(err)
			}
			server := fuseServerOf(t, l)
			if tc.stopServer {
				if err := syscall.Kill(server.PID, syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				for deadline := time.Now().Add(30 * time.Second); !allStopped(server.PID); time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the latency server did not stop")
					}
				}
			}
			if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if tc.stopServer {
				select {
				case <-reaped:
					t.Fatal("the killed owner exited although its latency server was stopped: the hang was not reproduced")
				case <-time.After(time.Second):
				}
				t.Logf("killed owner: state %c, stuck on its latency mount", procState(owner.Process.Pid))
			} else {
				waitReaped(t, reaped, "the killed owner")
			}
			if left, err := l.Leftovers(); err != nil || len(left) == 0 {
				t.Fatalf("leftovers of the killed owner: %v %v; want its tier's records (a stuck or zombie owner is dead)", left, err)
			}
			done, err := l.Cleanup()
			if err != nil {
				t.Fatalf("one Cleanup: %v (undid %v)", err, done)
			}
			t.Logf("cleanup undid: %v", done)
			waitReaped(t, reaped, "the killed owner after cleanup")
			nothingLeft(t, l, state, server)
		})
	}
}

// startK9Owner starts the owner child and returns once it fsyncs through
// its latency tier; reaped is closed once the child has been waited for.
func startK9Owner(t *testing.T, state string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9LatencyTier$")
	cmd.Env = append(os.Environ(), k9Env+"="+state)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	line, _ := bufio.NewReader(out).ReadString('\n')
	go func() { cmd.Wait(); close(reaped) }()
	t.Cleanup(func() {
		// Whatever the test did, free everything it made.
		cmd.Process.Kill()
		if l, err := OpenLedger(state); err == nil {
			for _, r := range mustAll(l) {
				if r.Kind == KindFuseServer {
					syscall.Kill(r.PID, syscall.SIGKILL)
				}
			}
			l.Cleanup()
		}
		<-reaped
	})
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("owner child: %q", line)
	}
	return cmd, reaped
}

func mustAll(l *Ledger) []Resource {
	rs, _ := l.All()
	return rs
}

// fuseServerOf finds the latency server's record in the ledger.
func fuseServerOf(t *testing.T, l *Ledger) Resource {
	t.Helper()
	for _, r := range mustAll(l) {
		if r.Kind == KindFuseServer {
			if r.PID <= 0 || r.StartTicks == 0 {
				t.Fatalf("latency server record without its process: %+v", r)
			}
			return r
		}
	}
	t.Fatalf("no latency server in the ledger: %v", mustAll(l))
	return Resource{}
}

// waitReaped waits for the child to have been reaped; the limit only keeps
// a hang from hanging the test.
func waitReaped(t *testing.T, reaped <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-reaped:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s was not reaped: it hangs", what)
	}
}

// nothingLeft checks that no mount, no latency server, no folder and no
// ledger record is left under state.
func nothingLeft(t *testing.T, l *Ledger, state string, server Resource) {
	t.Helper()
	if rs := mustAll(l); len(rs) != 0 {
		t.Errorf("ledger still lists %v", rs)
	}
	ms, err := Mounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if within(m.Point, state) || m.FSType == emulate.FSName && strings.Contains(m.Point, state) {
			t.Errorf("left mounted: %s (%s)", m.Point, m.FSType)
		}
	}
	if startTicks(server.PID) == server.StartTicks && procState(server.PID) != 'Z' {
		t.Errorf("latency server %d still runs (state %c)", server.PID, procState(server.PID))
	}
	if ents, _ := os.ReadDir(filepath.Join(state, "mnt")); len(ents) != 0 {
		t.Errorf("mount point folders left: %v", ents)
	}
}

// TestAlive checks which owners count as alive for Leftovers: only a
// process that can still undo what it recorded.
func TestAlive(t *testing.T) {
	cases := []struct {
		name  string
		owner func(t *testing.T) int
		alive bool
	}{
		{"this process", func(*testing.T) int { return os.Getpid() }, true},
		{"no pid", func(*testing.T) int { return 0 }, false},
		{"a process that exited and was reaped", func(t *testing.T) int {
			cmd := exec.Command("true")
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			return cmd.Process.Pid
		}, false},
		{"a zombie", zombie, false},
		{"a killed process stuck in D state on a latency mount", stuckOnFUSE, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pid := tc.owner(t)
			if got := alive(pid); got != tc.alive {
				t.Errorf("alive(%d) = %v (state %c), want %v", pid, got, procState(pid), tc.alive)
			}
		})
	}
}

// zombie starts a process that exits at once and is not waited for until
// the test ends.
func zombie(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Wait() })
	for procState(cmd.Process.Pid) != 'Z' {
		time.Sleep(10 * time.Millisecond)
	}
	return cmd.Process.Pid
}

// stuckOnFUSE makes a single-threaded process that holds a file open in a
// latency mount whose server is stopped, and kills it: its exit closes the
// file, and the kernel waits, uninterruptibly, for the server to answer
// the FLUSH. Its state is D, not Z, and no SIGKILL is pending any more.
func stuckOnFUSE(t *testing.T) int {
	needRoot(t)
	if err := emulate.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	backing, mnt := t.TempDir(), t.TempDir()
	srv, err := emulate.Start(backing, mnt, emulate.Latency{Fsync: time.Millisecond}, emulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `exec 3>"$1/held"; echo ok; exec sleep 600`, "sh", mnt)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ok\n" {
		t.Fatalf("child: %q", line)
	}
	t.Cleanup(func() {
		syscall.Kill(srv.PID(), syscall.SIGKILL) // frees the child
		cmd.Wait()
		srv.Close()
		Undo(Resource{Kind: KindMount, Path: mnt})
	})
	if err := syscall.Kill(srv.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// SIGSTOP takes effect thread by thread: a server thread still running
	// would answer the child's FLUSH and let it exit. Wait for all.
	for deadline := time.Now().Add(30 * time.Second); !allStopped(srv.PID()); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the latency server did not stop")
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); procState(cmd.Process.Pid) != 'D'; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the killed child is in state %c, not stuck in D", procState(cmd.Process.Pid))
		}
	}
	return cmd.Process.Pid
}

// allStopped reports whether every thread of process pid is stopped (state
// T), as after SIGSTOP has reached them all.
func allStopped(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		if st, err := procfs.Read(filepath.Join(task, "stat")); err != nil || st.State != 'T' {
			return false
		}
	}
	return len(tasks) > 0
}
