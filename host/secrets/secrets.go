// Package secrets keeps a run's password from other local users: a random
// secret per run, private folders and files that hold it (or a server's
// Unix socket) owned by the user a server runs as, and, for tests, the
// processes that show it (ProcessesShowing). A server that cannot require
// a secret has its ports locked instead (host/tcpport).
package secrets

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/procfs"
)

// New returns a random password for one run: 32 hex digits (128
// bits). Hex needs no quoting in any configuration syntax (redis.conf,
// .pgpass, SQL string literals, sysbench options), so it is never mangled
// on its way to the server or a tool.
func New() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a run password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// PrivateDir makes a new folder under parent (os.TempDir() when empty),
// named pattern with a random suffix as os.MkdirTemp names it, that only
// userName may enter: mode 0700, owned by userName (kept by tierbench's own
// user when userName is empty). It holds files with a run's secret and
// servers' Unix sockets, which other local users must not reach. The
// caller removes it.
func PrivateDir(parent, pattern, userName string) (string, error) {
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", fmt.Errorf("private folder: %w", err)
	}
	if err := own(dir, userName); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("private folder %s: %w", dir, err)
	}
	return dir, nil
}

// WriteFile writes data to path, a new file (O_EXCL: never through a
// file or symlink someone put there) of mode 0600 owned by userName
// (tierbench's own user when empty): a password file for a server or a
// tool. Put it in a PrivateDir.
func WriteFile(path string, data []byte, userName string) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write secret file: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write secret file %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if err := own(path, userName); err != nil {
		return fmt.Errorf("write secret file %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write secret file %s: %w", path, err)
	}
	return nil
}

// own gives path to userName (no change when empty); the mode stays what
// it was made with (0700, 0600), not widened by a umask.
func own(path, userName string) error {
	if userName == "" {
		return nil
	}
	uid, gid, err := proc.LookupUser(userName)
	if err != nil {
		return err
	}
	return os.Chown(path, uid, gid)
}

// ProcessesShowing lists the processes ("PID: command line") whose command
// line, which every local user can read in ps and /proc, holds secret; and
// with environ also those whose environment holds it (readable by the
// process's owner and root only, but inherited by everything the process
// starts). Tests use it to check that a run's password reaches neither.
func ProcessesShowing(secret string, environ bool) []string {
	if secret == "" {
		return nil
	}
	pids, err := procfs.PIDs()
	if err != nil {
		return nil
	}
	var out []string
	for _, pid := range pids {
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		files := []string{"cmdline"}
		if environ {
			files = append(files, "environ")
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil || !bytes.Contains(b, []byte(secret)) {
				continue
			}
			cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
			cmd = bytes.ReplaceAll(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}), []byte(secret), []byte("xxxxx"))
			out = append(out, fmt.Sprintf("%d (%s): %s", pid, f, cmd))
		}
	}
	return out
}
