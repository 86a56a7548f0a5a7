package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/host/procfs"
)

// helperParentEnv makes this test binary a parent that starts `sleep`
// in a group of its own (OwnGroup, or OwnGroupOutliving when the
// variable says "outliving"), prints its pid and exits: what happens to
// a program when tierbench dies.
const helperParentEnv = "TIERBENCH_PROC_TEST_PARENT"

func TestMain(m *testing.M) {
	if how := os.Getenv(helperParentEnv); how != "" {
		cmd := exec.Command("sleep", "300")
		if how == "outliving" {
			OwnGroupOutliving(cmd)
		} else {
			OwnGroup(cmd)
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// alive reports whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	st, err := procfs.Of(pid)
	return err == nil && st.State != 'Z'
}

// waitGone waits until pid is no live process; false if it still is
// after a minute, which only a process that was never going to die takes.
func waitGone(pid int) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return false
}

// TestParentDeath runs a parent that starts a child and exits at once, as
// a killed tierbench does: a child in OwnGroup dies with it, one in
// OwnGroupOutliving lives on (and is killed here).
func TestParentDeath(t *testing.T) {
	for _, c := range []struct {
		how      string
		survives bool
	}{
		{"own", false},
		{"outliving", true},
	} {
		t.Run(c.how, func(t *testing.T) {
			parent := exec.Command(os.Args[0], "-test.run=^$")
			parent.Env = append(os.Environ(), helperParentEnv+"="+c.how)
			out, err := parent.Output()
			if err != nil {
				t.Fatalf("parent: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
			if err != nil {
				t.Fatalf("parent said %q", out)
			}
			defer KillGroup(pid)
			if c.survives {
				if !alive(pid) {
					t.Errorf("the child of a dead parent is gone; it should outlive it")
				}
				return
			}
			if !waitGone(pid) {
				t.Errorf("the child %d outlived its parent", pid)
			}
		})
	}
}

// startForking starts a shell in a group of its own that runs before,
// forks a sleep, then runs after, and returns the shell's Running and the
// sleep's pid once the shell has run before.
func startForking(t *testing.T, before, after string) (*Running, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", before+" sleep 300 & echo $!; "+after)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	OwnGroup(cmd)
	r, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("shell said %q", line)
	}
	t.Cleanup(func() { _ = KillGroup(r.PID()) })
	return r, child
}

// TestRunningStopAndKill stops and kills groups whose leader forked: the
// signal reaches the fork too, and a leader that ignores SIGTERM is
// killed after the grace.
func TestRunningStopAndKill(t *testing.T) {
	for _, c := range []struct {
		name, before, after string
		stop                func(r *Running) (killed bool, err error)
		wantKilled          bool
	}{
		{"stop, obeyed", "", "wait", func(r *Running) (bool, error) { return r.Stop(time.Minute, syscall.SIGTERM), nil }, false},
		{"stop, ignored", "trap '' TERM;", "while :; do sleep 1; done", func(r *Running) (bool, error) {
			return r.Stop(100*time.Millisecond, syscall.SIGTERM), nil
		}, true},
		{"kill", "", "wait", func(r *Running) (bool, error) { return true, r.Kill(10 * time.Second) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, child := startForking(t, c.before, c.after)
			killed, err := c.stop(r)
			if err != nil || killed != c.wantKilled {
				t.Errorf("killed %v, err %v; want killed %v", killed, err, c.wantKilled)
			}
			if exited, _ := r.Exited(); !exited {
				t.Error("the leader has not exited")
			}
			if !waitGone(child) {
				t.Errorf("the leader's fork %d outlived its group's stop", child)
			}
			if c.name == "kill" && GroupAlive(r.PID()) {
				t.Error("Kill returned with the group alive")
			}
			if again := r.Stop(time.Second, syscall.SIGTERM); again {
				t.Error("a second Stop had to kill")
			}
		})
	}
}

// TestCancelKillsTheGroup cancels a command made with CommandContext:
// its fork dies with it.
func TestCancelKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "sleep 300 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer KillGroup(cmd.Process.Pid)
	line, _ := bufio.NewReader(out).ReadString('\n')
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("shell said %q", line)
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Error("a cancelled command succeeded")
	}
	if !waitGone(child) {
		t.Errorf("the fork %d outlived the cancel", child)
	}
}

func TestStartRefusesNoGroup(t *testing.T) {
	if _, err := Start(exec.Command("true")); err == nil {
		t.Error("Start ran a command in tierbench's own group")
	}
}

func TestKillGroupGone(t *testing.T) {
	cmd := exec.Command("true")
	OwnGroup(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := KillGroup(cmd.Process.Pid); err != nil {
		t.Errorf("KillGroup of a group already gone: %v", err)
	}
	if GroupAlive(cmd.Process.Pid) {
		t.Error("a group whose only process was reaped is alive")
	}
	if err := SignalGroup(cmd.Process.Pid, syscall.SIGTERM); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("SignalGroup of a group gone: %v, want ESRCH", err)
	}
}
