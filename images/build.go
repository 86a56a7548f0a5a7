package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
)

// Build makes r's docker-archive tarball in cacheDir, once:
// cacheDir/<name with / and : replaced>-<key>.tar. A tarball already
// there is returned at once. It builds in a temporary folder under
// cacheDir, removed at the end whatever happens, and renames the
// finished tarball into place, so that a killed build leaves no half
// tarball that looks done. Processes that build the same recipe at once
// take turns on a lock file beside it, and the later ones find the
// tarball made. A recipe with a Suite needs root and mmdebstrap.
func Build(ctx context.Context, r Recipe, cacheDir string) (string, error) {
	if r.Name == "" {
		return "", errors.New("image recipe without a name")
	}
	if r.Suite == "" && (len(r.Packages) > 0 || len(r.Hooks) > 0) {
		return "", fmt.Errorf("image %s: packages or hooks without a Debian suite", r.Name)
	}
	if err := checkFiles(r.Files); err != nil {
		return "", fmt.Errorf("image %s: %w", r.Name, err)
	}
	key := r.Key()
	final := filepath.Join(cacheDir, r.baseName(key)+".tar")
	if st, err := os.Stat(final); err == nil && st.Mode().IsRegular() {
		return final, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("image %s: cache folder: %w", r.Name, err)
	}
	unlock, err := lock(ctx, filepath.Join(cacheDir, "."+r.baseName(key)+".lock"))
	if err != nil {
		return "", fmt.Errorf("image %s: %w", r.Name, err)
	}
	defer unlock()
	// Another process may have built it while this one waited.
	if st, err := os.Stat(final); err == nil && st.Mode().IsRegular() {
		return final, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, ".build-"+safeName(r.Name)+"-")
	if err != nil {
		return "", fmt.Errorf("image %s: %w", r.Name, err)
	}
	defer os.RemoveAll(tmp)
	// Open to apt's _apt user, that it may download into mmdebstrap's
	// chroot in its sandbox.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("image %s: %w", r.Name, err)
	}
	layer := filepath.Join(tmp, "layer.tar")
	layerSum, err := buildLayer(ctx, r, tmp, layer)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", r.Name, err)
	}
	config, err := configJSON(r, key, layerSum)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", r.Name, err)
	}
	out := filepath.Join(tmp, "image.tar")
	if err := writeArchive(out, r.Name, config, layer, layerSum); err != nil {
		return "", fmt.Errorf("image %s: %w", r.Name, err)
	}
	if err := os.Rename(out, final); err != nil {
		return "", fmt.Errorf("image %s: %w", r.Name, err)
	}
	pruneOthers(cacheDir, r.Name, final)
	return final, nil
}

// pruneOthers removes the cache's tarballs of the same image made from
// an earlier recipe (another key): a changed recipe would otherwise
// leave hundreds of megabytes behind each time. Their lock files go too.
func pruneOthers(cacheDir, name, keep string) {
	prefix := safeName(name) + "-"
	old, _ := filepath.Glob(filepath.Join(cacheDir, prefix+"*.tar"))
	for _, o := range old {
		key := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(o), prefix), ".tar")
		if o == keep || !isKey(key) {
			continue // another image whose name starts the same
		}
		_ = os.Remove(o)
		_ = os.Remove(filepath.Join(cacheDir, "."+prefix+key+".lock"))
	}
}

// isKey reports whether s looks like Recipe.Key's output.
func isKey(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// lock takes an exclusive lock on the file path, so that two processes
// (two tests, or cluster up run twice) that want the same image build it
// once. The lock goes with the process if it dies; the empty file
// stays.
func lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another build: %w", context.Cause(ctx))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// buildLayer writes r's layer to the file layer and returns its sha256
// in hex: the layer's diff id.
func buildLayer(ctx context.Context, r Recipe, tmp, layer string) (sum string, err error) {
	f, err := os.Create(layer)
	if err != nil {
		return "", fmt.Errorf("layer: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("layer: %w", cerr)
		}
	}()
	h := sha256.New()
	w := io.MultiWriter(f, h)
	if r.Suite == "" {
		if err := writeLayer(w, nil, r.Files); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	if err := debianLayer(ctx, r, tmp, w); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// debianLayer writes r's layer to w: mmdebstrap writes the Debian root
// as a tarball to a pipe and writeLayer copies it, with Files, as it
// comes.
func debianLayer(ctx context.Context, r Recipe, tmp string, w io.Writer) error {
	if os.Geteuid() != 0 {
		return errors.New("a Debian root needs root: mmdebstrap runs in its root mode")
	}
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := mmdebstrap(mctx, r, tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("mmdebstrap: %w", err)
	}
	log := &logtail.Writer{Max: 16 << 10}
	cmd.Stderr = log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("mmdebstrap: %w", err)
	}
	// Whatever the end, nothing of the build runs on: the processes
	// mmdebstrap left would write into tmp while it is removed.
	defer func() { _ = proc.KillGroup(cmd.Process.Pid) }()
	werr := writeLayer(w, out, r.Files)
	if werr != nil {
		cancel() // mmdebstrap would block on a pipe no one reads
	}
	_, _ = io.Copy(io.Discard, out) // the tarball's padding after its end
	err = cmd.Wait()
	took := time.Since(start).Round(time.Second)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("mmdebstrap %s stopped after %s: %w", r.Suite, took, context.Cause(ctx))
	case err != nil && werr != nil:
		// Which came first? Both, and the log, say.
		return fmt.Errorf("mmdebstrap %s after %s: %w (layer: %v)\n%s", r.Suite, took, err, werr, log.Last(30))
	case err != nil:
		return fmt.Errorf("mmdebstrap %s after %s: %w\n%s", r.Suite, took, err, log.Last(30))
	}
	return werr
}

// Dpkg leaves these out of every Debian root: nothing in a container
// reads manuals or translated messages. Copyright files stay.
var dpkgExcludes = []string{
	"path-exclude=/usr/share/doc/*",
	"path-include=/usr/share/doc/*/copyright",
	"path-exclude=/usr/share/man/*",
	"path-exclude=/usr/share/info/*",
	"path-exclude=/usr/share/locale/*",
	"path-exclude=/usr/share/i18n/locales/*",
	"path-exclude=/usr/share/lintian/*",
}

// manFolderHook makes the manual pages' folder that dpkgExcludes leaves
// out: update-alternatives links the pages of a program it installs
// (Java's) and fails without it.
const manFolderHook = `mkdir -p "$1/usr/share/man/man1"`

// hostFilesHook drops what mmdebstrap copied from the build machine for
// apt's sake: its name and name server. The runtime gives a container
// its own.
const hostFilesHook = `rm -f "$1/etc/hostname" && : >"$1/etc/resolv.conf" && chmod 0644 "$1/etc/resolv.conf"`

// mmdebstrap is the command that writes r's Debian root, as a tarball,
// to its standard output. It runs in a mount namespace of its own: the
// /proc, /sys and /dev that root mode mounts into the chroot under tmp
// go away with it even if it is killed, so removing tmp never reaches
// into them. Cancelling ctx sends SIGTERM to its process group.
func mmdebstrap(ctx context.Context, r Recipe, tmp string) *exec.Cmd {
	args := []string{"--mount", "--propagation", "private", "mmdebstrap",
		"--mode=root", "--variant=essential", "--format=tar"}
	if len(r.Packages) > 0 {
		args = append(args, "--include="+strings.Join(r.Packages, ","))
	}
	for _, o := range dpkgExcludes {
		args = append(args, "--dpkgopt="+o)
	}
	args = append(args, "--essential-hook="+manFolderHook)
	for _, hook := range r.Hooks {
		args = append(args, "--customize-hook="+hook)
	}
	args = append(args, "--customize-hook="+hostFilesHook)
	args = append(args, r.Suite, "-")
	cmd := exec.CommandContext(ctx, "unshare", args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	// Its own process group, so that a cancel stops apt, dpkg and the
	// maintainer scripts too: mmdebstrap alone would wait for them to
	// end their step first.
	proc.OwnGroupOutliving(cmd)
	cmd.Cancel = func() error { return proc.SignalGroup(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	return cmd
}
