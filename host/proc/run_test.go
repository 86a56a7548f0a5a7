package proc

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	for _, c := range []struct {
		name       string
		candidates []string
		want       string
		missing    bool
	}{
		{"a path", []string{"/nonexistent/sh", "/bin/sh"}, "/bin/sh", false},
		{"a name in PATH", []string{"no-such-program-here", "sh"}, "sh", false},
		{"none", []string{"no-such-program-here", "/nonexistent/x"}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Find("the-package", c.candidates...)
			if c.missing {
				if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install the-package") {
					t.Errorf("Find = %q, %v; want ErrNotInstalled naming the package", got, err)
				}
				return
			}
			if err != nil || !strings.HasSuffix(got, c.want) {
				t.Errorf("Find = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestRunInput runs a helper as the server's user (nobody, as root) with
// input it must not see on its command line, and one that fails, whose
// output is quoted.
func TestRunInput(t *testing.T) {
	user, uid := "", os.Getuid()
	if os.Geteuid() == 0 {
		var err error
		user = "nobody"
		if uid, _, err = LookupUser(user); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	check := `test "$(id -u)" = "$1" && read -r line && test "$line" = s3cret`
	if err := RunInput(ctx, user, "s3cret\n", "/bin/sh", "-c", check, "sh", strconv.Itoa(uid)); err != nil {
		t.Errorf("RunInput: %v", err)
	}
	err := Run(ctx, user, "/bin/sh", "-c", "echo one; echo two >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "one\ntwo") {
		t.Errorf("Run of a failing helper = %v", err)
	}
}

// TestOutput keeps the connection arguments out of its error, which
// quotes the end of the tool's standard error.
func TestOutput(t *testing.T) {
	ctx := context.Background()
	conn := []string{"-c", `echo "out $1"; [ "$1" = ok ] || { echo "bad: $1" >&2; exit 2; }`, "sh"}
	out, err := Output(ctx, "/bin/sh", conn, "ok")
	if err != nil || string(out) != "out ok\n" {
		t.Errorf("Output = %q, %v", out, err)
	}
	_, err = Output(ctx, "/bin/sh", conn, "wrong")
	if err == nil || !strings.Contains(err.Error(), "sh wrong: exit status 2: bad: wrong") || strings.Contains(err.Error(), "echo") {
		t.Errorf("Output of a failing tool = %v", err)
	}
}

func TestRunAs(t *testing.T) {
	got, err := RunAs("server", "the-package", "no-such-user-here", "nobody")
	switch {
	case os.Geteuid() != 0:
		if got != "" || err != nil {
			t.Errorf("RunAs as a user = %q, %v; want tierbench's own user", got, err)
		}
	case err != nil || got != "nobody":
		t.Errorf("RunAs as root = %q, %v; want nobody", got, err)
	}
	if os.Geteuid() == 0 {
		if _, err := RunAs("server", "the-package", "no-such-user-here"); err == nil || !strings.Contains(err.Error(), "apt-get install the-package") {
			t.Errorf("RunAs with no user = %v", err)
		}
	}
}
