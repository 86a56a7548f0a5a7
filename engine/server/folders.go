package server

import (
	"context"
	"fmt"
	"os"

	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/reach"
	"github.com/tierbench/tierbench/host/secrets"
)

// OwnFolders gives a server's component folders to its OS user, closed to
// every other user (0700), and checks that the user can reach them
// through their parents; with no user (the server runs as tierbench)
// only their mode is set. label names the server in errors ("Ceph").
func OwnFolders(ctx context.Context, label, user string, dirs ...string) error {
	for _, d := range dirs {
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("component folder: %w", err)
		}
	}
	if user == "" {
		return nil
	}
	if err := proc.ChownAll(user, dirs...); err != nil {
		return fmt.Errorf("component folder: %w", err)
	}
	return reach.Check(ctx, label, user, dirs...)
}

// PrivateFolder makes a run's private folder (0700, the user's), named
// after prefix, in the study's scratch folder, or in the system's
// temporary folder when the user cannot reach scratch (or there is none):
// where a server's keys and configuration live. The caller removes it.
func PrivateFolder(ctx context.Context, label, scratch, prefix, user string) (string, error) {
	if scratch != "" {
		dir, err := secrets.PrivateDir(scratch, prefix+"-", user)
		if err == nil && reach.Check(ctx, label, user, dir) == nil {
			return dir, nil
		}
		if err == nil {
			os.Remove(dir)
		}
	}
	dir, err := secrets.PrivateDir("", "tierbench-"+prefix+"-", user)
	if err != nil {
		return "", fmt.Errorf("run folder: %w", err)
	}
	return dir, nil
}
