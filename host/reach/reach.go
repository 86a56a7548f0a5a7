// Package reach checks, as the OS user a server runs as, that it can
// reach the folders it works in (tiers, run folders, the study's scratch
// folder), and names the folder that blocks it and the fix when it cannot:
// the engines check before they start a server, and a study's preflight
// before it runs.
package reach

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tierbench/tierbench/host/proc"
)

// ErrUnreachable marks a folder the server's OS user cannot reach: the
// fix is the user's (open a parent folder), not a retry.
var ErrUnreachable = errors.New("folder not reachable by the server's OS user")

// Check checks, as OS user userName, that it can enter and write
// in each folder: the folders a server works in. When it cannot, the error
// names the parent folder that blocks it and the fix, rather than leaving
// the server (labelled label: "PostgreSQL", "Redis") to fail with a bare
// "Permission denied". Checking as the user (not from mode bits) gets
// ACLs, supplementary groups and mount options right. An empty userName is
// tierbench's own user, which made the folders: nothing to check.
func Check(ctx context.Context, label, userName string, dirs ...string) error {
	return checkAccess(ctx, `test -w "$1" && test -x "$1"`, label, userName, dirs)
}

// CheckEnterable is Check for folders the server's user only
// passes through or reads (a study's scratch folder, on the way to its
// template): it checks that the user can enter them.
func CheckEnterable(ctx context.Context, label, userName string, dirs ...string) error {
	return checkAccess(ctx, `test -x "$1"`, label, userName, dirs)
}

func checkAccess(ctx context.Context, test, label, userName string, dirs []string) error {
	if userName == "" {
		return nil
	}
	for _, d := range dirs {
		if err := proc.Run(ctx, userName, "/bin/sh", "-c", test, "sh", d); err == nil {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if blocker := firstClosed(ctx, d, userName); blocker != "" {
			mode := "?"
			if st, err := os.Stat(blocker); err == nil {
				mode = st.Mode().String()
			}
			return fmt.Errorf("%s runs as OS user %s, which cannot reach %s: folder %s is closed to it (mode %s): run chmod o+x %s, or put the tier or scratch folder under a folder others can enter: %w",
				label, userName, d, blocker, mode, blocker, ErrUnreachable)
		}
		return fmt.Errorf("%s runs as OS user %s, which cannot write in %s: check the permissions, ACLs and mount options of it and its parent folders: %w",
			label, userName, d, ErrUnreachable)
	}
	return nil
}

// firstClosed returns the outermost of dir and its parents that userName
// cannot enter, checked as the user, or "" if it can enter them all.
func firstClosed(ctx context.Context, dir, userName string) string {
	var parents []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		parents = append(parents, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for i := len(parents) - 1; i >= 0; i-- {
		if proc.Run(ctx, userName, "/bin/sh", "-c", `test -x "$1"`, "sh", parents[i]) != nil {
			return parents[i]
		}
	}
	return ""
}
