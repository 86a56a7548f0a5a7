package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/platform/kube/node"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
)

// timeoutStudy runs PostgreSQL for far longer than the child test may
// wait.
const timeoutStudy = `name: timeout
engine: postgres
tiers:
  disk: {path: %q}
placements:
  p: {data: disk, wal: disk}
baseline: p
durability: [async]
workload: {name: tpcb, scale: 1}
clients: [1]
duration: 10m
probe: off
`

// timeoutChild is the variable that makes TestTimeoutUndoes the child:
// "context" or "stuck".
const timeoutChild = "TIERBENCH_TIMEOUT_CHILD"

// TestTimeoutUndoes runs, as a child test binary with a -timeout far
// shorter than its study, a test that starts tierbench run of a
// PostgreSQL study and waits: once on testenv.Context, so that the test
// ends itself before the -timeout and its cleanup interrupts the run;
// once stuck where no context reaches, so that the watchdog of
// testenv.Main interrupts it before the binary dies. Either way the child
// fails, no process of the run is left, and cleanup --check finds
// nothing in its state folder.
func TestTimeoutUndoes(t *testing.T) {
	if mode := os.Getenv(timeoutChild); mode != "" {
		timeoutChildTest(t, mode)
		return
	}
	if os.Geteuid() != 0 {
		testenv.Skip(t, "PostgreSQL runs as user postgres, which needs root")
	}
	for _, tc := range []struct{ mode, want string }{
		{"context", "gave up at the test's deadline"},
		{"stuck", "testenv: undid tierbench run"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel() // each waits out its child's -timeout
			work := serverWork(t, "tierbench-timeout-")
			state := filepath.Join(work, "state")
			cmd := exec.Command(os.Args[0], "-test.run=^TestTimeoutUndoes$", "-test.timeout=75s", "-test.v")
			cmd.Env = append(os.Environ(), timeoutChild+"="+tc.mode, testBinary+"="+binary,
				"TIERBENCH_STATE_DIR="+state, "TIERBENCH_TIMEOUT_WORK="+work)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("child: %v, want a failure saying %q:\n%s", err, tc.want, out)
			}
			t.Logf("child:\n%s", grepLines(string(out), "testenv:", "gave up", "run:", "server"))
			// The run ends on its interrupt; the child may be gone first.
			deadline := time.Now().Add(time.Minute)
			for len(enginetest.ProcessesNaming(work)) > 0 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			if left := enginetest.ProcessesNaming(work); len(left) > 0 {
				t.Errorf("processes of the run left a minute after the child ended:\n%s", strings.Join(left, "\n"))
			}
			r := tierbenchEnv(t, "", []string{"TIERBENCH_STATE_DIR=" + state}, "cleanup", "--check")
			if r.code != 0 || !strings.Contains(r.stdout, "nothing to clean up") {
				t.Errorf("cleanup --check after the child: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// timeoutChildTest is the child's half: start the run, register its
// interrupt, and wait past the deadline.
func timeoutChildTest(t *testing.T, mode string) {
	work := os.Getenv("TIERBENCH_TIMEOUT_WORK")
	st := writeStudy(t, work, fmt.Sprintf(timeoutStudy, filepath.Join(work, "disk")))
	cmd := exec.Command(binary, "run", st, "--results", filepath.Join(work, "results"))
	errb := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = errb, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { cmd.Wait(); close(ended) }()
	// tierbench run undoes what it made when interrupted.
	var once sync.Once
	interrupt := func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGINT)
			<-ended
			t.Logf("run: %s", grepLines(errb.String(), "measured", "interrupt", "FAILED", "ok:"))
		})
	}
	forget := testenv.OnTimeout("tierbench run", interrupt)
	t.Cleanup(func() { interrupt(); forget() })
	if mode == "stuck" {
		select {}
	}
	<-testenv.Context(t).Done()
	t.Fatalf("gave up at the test's deadline: the run (in %s) was still going", tier.StateDir())
}

// TestCleanupCheck checks what cleanup --check says and exits with: 0
// and nothing to clean up on an empty ledger; 1 when it undid what a dead
// process left, or found a record of a live one, which it leaves; plain
// cleanup exits 0 for both.
func TestCleanupCheck(t *testing.T) {
	if _, running := node.Running(); running {
		t.Skip("a node runs on this machine, which cleanup --check reports whatever the ledger")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		owner int // of the record of a folder; 0: no record
		check bool
		code  int
		want  string
		kept  bool
	}{
		{"empty ledger", 0, true, 0, "nothing to clean up", false},
		{"a dead process's folder", dead.Process.Pid, true, exitRunsFailed, "undone: dir ", false},
		{"a dead process's folder, no --check", dead.Process.Pid, false, 0, "undone: dir ", false},
		{"a live process's folder", os.Getpid(), true, exitRunsFailed, "still there: dir ", true},
		{"a live process's folder, no --check", os.Getpid(), false, 0, "nothing to clean up", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			state, made := filepath.Join(dir, "state"), filepath.Join(dir, "made")
			if tc.owner != 0 {
				if err := os.Mkdir(made, 0o755); err != nil {
					t.Fatal(err)
				}
				l, err := tier.OpenLedger(state)
				if err != nil {
					t.Fatal(err)
				}
				r, err := l.Intend(tier.Resource{Kind: tier.KindDir, Path: made})
				if err != nil {
					t.Fatal(err)
				}
				owned := r
				owned.Owner = tc.owner
				if err := l.Update(r, owned); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"cleanup"}
			if tc.check {
				args = append(args, "--check")
			}
			r := tierbenchEnv(t, "", []string{"TIERBENCH_STATE_DIR=" + state}, args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
			if tc.code != 0 && !strings.Contains(r.stderr, "cleanup --check: 1 left behind") {
				t.Errorf("stderr does not say what was left:\n%s", r.stderr)
			}
			if _, err := os.Stat(made); tc.owner != 0 && (err == nil) != tc.kept {
				t.Errorf("the folder kept: %v, want %v", err == nil, tc.kept)
			}
		})
	}
}
