package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tierbench/tierbench/host/reach"
)

// Template is a folder a server engine makes once per study, in the
// study's scratch folder, and every run copies (an initdb cluster, an
// installed MariaDB datadir): making it takes a bootstrap, copying it is
// just I/O.
type Template struct {
	// Dir is the template's absolute path. Beside it live Dir.lock, which
	// serialises its making, and Dir.done, its marker.
	Dir string
	// User is the OS user the server (and Build's helper) runs as, which
	// must be able to pass through the scratch folder; empty for
	// tierbench's own user. Label names the server in errors.
	User, Label string
	// Build makes the template in Dir, which does not exist, and returns
	// what the marker records (the version of the server that made it).
	Build func(ctx context.Context, dir string) (version string, err error)
}

// Ensure returns the version recorded in the template's marker, making
// the template first unless it is complete. A flock on Dir.lock serialises
// Opens of one study, goroutines and processes alike (each Ensure opens
// the lock file anew, and flock locks belong to the open file); the marker
// is written only after Build succeeded, so a template without it is from
// an interrupted build and is made again.
func (t Template) Ensure(ctx context.Context) (string, error) {
	scratch := filepath.Dir(t.Dir)
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return "", fmt.Errorf("template: %w", err)
	}
	lockPath, marker := t.Dir+".lock", t.Dir+".done"
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("template lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("template lock %s: %w", lockPath, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if b, err := os.ReadFile(marker); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if err := os.RemoveAll(t.Dir); err != nil {
		return "", fmt.Errorf("remove incomplete template %s: %w", t.Dir, err)
	}
	if t.User != "" {
		// tierbench made the scratch folder (os.MkdirTemp makes it 0700),
		// so letting the server's user pass through it is ours to do; its
		// parents are checked.
		if err := addSearch(scratch); err != nil {
			return "", fmt.Errorf("let user %s enter the scratch folder: %w", t.User, err)
		}
		if err := reach.CheckEnterable(ctx, t.Label, t.User, scratch); err != nil {
			return "", err
		}
	}
	version, err := t.Build(ctx, t.Dir)
	if err != nil {
		os.RemoveAll(t.Dir)
		return "", err
	}
	if err := os.WriteFile(marker, []byte(version+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("template marker: %w", err)
	}
	return version, nil
}

// addSearch lets others enter dir (o+x, not o+r).
func addSearch(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o001 == 0 {
		return os.Chmod(dir, st.Mode().Perm()|0o001)
	}
	return nil
}

// Version runs program --version, for a template's marker.
func Version(ctx context.Context, program string) (string, error) {
	out, err := exec.CommandContext(ctx, program, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", program, err)
	}
	return strings.TrimSpace(string(out)), nil
}
