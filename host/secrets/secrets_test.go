package secrets

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/testenv"
)

func TestNew(t *testing.T) {
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(a) || a == b {
		t.Errorf("secrets %q, %q: want two different 32-digit hex strings", a, b)
	}
}

// TestPrivateFiles checks the private folder and secret file modes and
// owners, and that a secret file is never written through something that
// is already there (a planted symlink).
func TestPrivateFiles(t *testing.T) {
	userName, uid := "", os.Geteuid()
	if os.Geteuid() == 0 {
		var err error
		if uid, _, err = proc.LookupUser("nobody"); err != nil {
			testenv.Skip(t, err)
		}
		userName = "nobody"
	}
	dir, err := PrivateDir(t.TempDir(), "p-", userName)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "secret")
	if err := WriteFile(path, []byte("s3cret\n"), userName); err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode || int(st.Sys().(*syscall.Stat_t).Uid) != uid {
			t.Errorf("%s: mode %v uid %d, want %v uid %d", p, st.Mode().Perm(), st.Sys().(*syscall.Stat_t).Uid, mode, uid)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "s3cret\n" {
		t.Errorf("secret file holds %q", b)
	}

	victim := filepath.Join(t.TempDir(), "victim")
	link := filepath.Join(dir, "planted")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("x"), userName); err == nil {
		t.Error("wrote a secret through a planted symlink")
	}
	if _, err := os.Stat(victim); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink's target was created: %v", err)
	}
}

// TestProcessesShowing checks that a secret on a command line is found and
// shown redacted.
func TestProcessesShowing(t *testing.T) {
	secret, _ := New()
	// The shell waits in its read builtin on a pipe kept open: a shell that
	// forked a child (sleep) would show the secret twice while the child
	// has not yet exec'd.
	cmd := exec.Command("/bin/sh", "-c", "read x", "sh", secret)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	shown := ProcessesShowing(secret, false)
	if len(shown) != 1 || strings.Contains(shown[0], secret) || !strings.Contains(shown[0], "xxxxx") {
		t.Errorf("ProcessesShowing = %q", shown)
	}
}
