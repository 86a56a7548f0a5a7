package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestMargin(t *testing.T) {
	for _, tc := range []struct{ timeout, want time.Duration }{
		{25 * time.Minute, 5 * time.Minute},
		{10 * time.Minute, 2 * time.Minute},
		{time.Minute, 12 * time.Second},
		{30 * time.Second, 10 * time.Second},
		{4 * time.Second, 2 * time.Second},
		{2 * time.Hour, 5 * time.Minute},
	} {
		if got := Margin(tc.timeout); got != tc.want {
			t.Errorf("Margin(%v) = %v, want %v", tc.timeout, got, tc.want)
		}
	}
}

// TestTimeoutUndoes runs a child test that starts something (a file
// stands for it), registers its undo and waits past its binary's
// -timeout of 4 s: once on Context, so the test's own cleanup undoes it;
// once stuck where no context reaches, so Main's watchdog does. Either
// way the child fails and what it started is undone.
func TestTimeoutUndoes(t *testing.T) {
	if mode := os.Getenv("TESTENV_TIMEOUT_CHILD"); mode != "" {
		started := os.Getenv("TESTENV_STARTED")
		if err := os.WriteFile(started, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		undo := func() { os.Remove(started) }
		forget := OnTimeout("the child's file", undo)
		t.Cleanup(func() { undo(); forget() })
		if mode == "stuck" {
			select {}
		}
		<-Context(t).Done()
		t.Fatal("gave up at the test's deadline")
	}
	for _, tc := range []struct {
		mode, want string
		watchdog   bool
	}{
		{"context", "gave up at the test's deadline", false},
		{"stuck", "testenv: undid the child's file", true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			started := filepath.Join(t.TempDir(), "started")
			cmd := exec.Command(os.Args[0], "-test.run=^TestTimeoutUndoes$", "-test.timeout=4s", "-test.v")
			cmd.Env = append(os.Environ(), "TESTENV_TIMEOUT_CHILD="+tc.mode, "TESTENV_STARTED="+started)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("child: err %v, want a failure with %q:\n%s", err, tc.want, out)
			}
			if got := strings.Contains(string(out), "testenv: undid"); got != tc.watchdog {
				t.Errorf("the watchdog undid: %v, want %v:\n%s", got, tc.watchdog, out)
			}
			if _, err := os.Stat(started); err == nil {
				t.Errorf("what the child started is still there:\n%s", out)
			}
		})
	}
}
