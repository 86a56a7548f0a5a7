package syncdelay

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
)

// run runs path with args under rules as uid:gid (-1: this user) and
// returns its output and how long it took.
func run(t *testing.T, rules Rules, uid, gid int, path string, args ...string) (string, time.Duration) {
	t.Helper()
	cmd := exec.Command(path, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	c, err := Wrap(cmd, rules, uid, gid)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		c.Abandon()
		t.Fatal(err)
	}
	s, err := c.Started(cmd.Process.Pid)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%v; output: %s", err, out.String())
	}
	defer s.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s %v: %v; output: %s", path, args, err, out.String())
	}
	return out.String(), time.Since(start)
}

func TestDelaysSyncsUnderItsFolders(t *testing.T) {
	if err := Supported(); err != nil {
		testenv.Skip(t, err)
	}
	slow, other := t.TempDir(), t.TempDir()
	for _, d := range []string{slow, other} {
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const delay = 300 * time.Millisecond
	rules := Rules{{Dir: slow, Latency: emulate.Latency{Fsync: delay}}}
	// coreutils sync: a file argument is fsync'ed, -d fdatasync'ed, -f
	// its filesystem syncfs'ed; through a shell, the filter is inherited.
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"fsync", []string{"/bin/sync", filepath.Join(slow, "f")}},
		{"fdatasync", []string{"/bin/sync", "-d", filepath.Join(slow, "f")}},
		{"syncfs", []string{"/bin/sync", "-f", filepath.Join(slow, "f")}},
		{"forked", []string{"/bin/sh", "-c", "/bin/sync " + filepath.Join(slow, "f")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The whole call lasts the delay, less the layer's own
			// cost, which is far below this margin.
			if _, took := run(t, rules, -1, -1, tc.args[0], tc.args[1:]...); took < delay*3/4 {
				t.Errorf("took %s, want at least about %s", took, delay)
			}
		})
	}
	t.Run("elsewhere", func(t *testing.T) {
		// An hour under the rule's folder, and a sync elsewhere still
		// returns: it is not delayed.
		hour := Rules{{Dir: slow, Latency: emulate.Latency{Fsync: time.Hour}}}
		run(t, hour, -1, -1, "/bin/sync", filepath.Join(other, "f"))
	})
}

func TestRunsTheProgramAsItsUser(t *testing.T) {
	if err := Supported(); err != nil {
		testenv.Skip(t, err)
	}
	uid, gid, err := proc.LookupUser("nobody")
	if err != nil {
		testenv.Skip(t, err)
	}
	out, _ := run(t, Rules{{Dir: t.TempDir(), Latency: emulate.Latency{Fsync: time.Millisecond}}}, uid, gid, "/usr/bin/id", "-u")
	if got := strings.TrimSpace(out); got != strconv.Itoa(uid) {
		t.Errorf("id -u printed %q, want %d", got, uid)
	}
}
