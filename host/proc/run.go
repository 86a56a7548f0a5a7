package proc

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/host/logtail"
)

// Run runs a helper command (initdb, mysql_install_db) as user, in a
// process group of its own, returning its output in the error when it
// fails.
func Run(ctx context.Context, userName, path string, args ...string) error {
	return RunInput(ctx, userName, "", path, args...)
}

// RunInput is Run with input on the command's standard input: what a
// helper must be told but other local users must not see, which a command
// line would show them (SQL that sets a password).
func RunInput(ctx context.Context, userName, input, path string, args ...string) error {
	cmd := exec.CommandContext(ctx, path, args...)
	if input != "" {
		cmd.Stdin = strings.NewReader(input)
	}
	if err := OwnGroupAs(cmd, userName); err != nil {
		return err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v:\n%s", path, strings.Join(args, " "), err, logtail.Lines(out, 15))
	}
	return nil
}

// stderrKept is how much of a tool's standard error Output keeps for its
// error.
const stderrKept = 4096

// Output runs a client tool (ceph, rbd) in its own process group, killed
// with it, with its connection arguments conn (kept out of errors: they
// name keyrings) and args, and returns its standard output; a failure
// quotes the last lines of its standard error.
func Output(ctx context.Context, path string, conn []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, append(slices.Clip(conn), args...)...)
	var out bytes.Buffer
	errs := &logtail.Writer{Max: stderrKept}
	cmd.Stdout, cmd.Stderr = &out, errs
	OwnGroup(cmd)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if tail := errs.Last(5); tail != "" {
			err = fmt.Errorf("%w: %s", err, tail)
		}
		return nil, fmt.Errorf("%s %s: %w", filepath.Base(path), strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}
