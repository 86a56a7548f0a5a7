// Package imagestest is what the tests of the lab node's images share:
// the machine's image cache (Debian images are built once per machine),
// an image's root unpacked into a folder to chroot into, a server run
// there as its pod would run it, and a containerd of the test's own to
// import an image into. The engines' tests of their own images
// (LabImage) and package images' use it; it skips a test where images
// cannot be built (-short, not root, no mmdebstrap).
//
// Only tests import it: it calls t.Skip and t.Fatal.
package imagestest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/images"
)

// Cache is where the Debian images' tarballs are kept across test
// runs, so that only the first run pays for mmdebstrap. It skips the
// test where they cannot be built: -short, not root, no mmdebstrap.
func Cache(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a Debian image: not with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("builds a Debian image: needs root")
	}
	for _, tool := range []string{"mmdebstrap", "unshare", "chroot", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("builds a Debian image: no %s", tool)
		}
	}
	dir := os.Getenv("TIERBENCH_IMAGE_CACHE")
	if dir == "" {
		dir = "/var/lib/tierbench/images"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Build builds r into the cache, unless an earlier run did (same
// Recipe.Key), and logs how long it took and how big the tarball is.
func Build(t *testing.T, r images.Recipe) string {
	t.Helper()
	start := time.Now()
	path, err := images.Build(context.Background(), r, Cache(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s, %d MB, in %s", r.Name, filepath.Base(path), st.Size()>>20, time.Since(start).Round(time.Millisecond))
	return path
}

// UnpackRoot lays the image's layer out in a new folder, as the
// runtime's snapshot would hold it, with the few device nodes a
// container's /dev has (no mounts: nothing to undo), and returns it.
func UnpackRoot(t *testing.T, tarball string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s has no layer", tarball)
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(hdr.Name, "/layer.tar") {
			break
		}
	}
	cmd := exec.Command("tar", "-x", "--numeric-owner", "--same-owner", "--same-permissions", "-C", root, "-f", "-")
	cmd.Stdin = tr
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unpacking the layer: %v\n%s", err, out)
	}
	for _, d := range []struct {
		name         string
		major, minor uint32
	}{{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}} {
		p := filepath.Join(root, "dev", d.name)
		dev := int(d.major<<8 | d.minor)
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, dev); err != nil {
			t.Fatalf("mknod %s: %v", p, err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	// A container's /dev/shm is a tmpfs open to all.
	if err := os.Chmod(filepath.Join(root, "dev", "shm"), os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	return root
}

// Env is the environment the image's config gives, then env.
func Env(r images.Recipe, env ...string) []string {
	return append(append([]string{}, r.Config.Env...), env...)
}

// Volume makes a fresh folder in root owned by 999, as a pod's empty
// volume with fsGroup 999 is.
func Volume(t *testing.T, root, path string) {
	t.Helper()
	p := filepath.Join(root, path)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 999, 999); err != nil {
		t.Fatal(err)
	}
}

// Chroot runs args in root as uid and gid 999 with env, as the pod's
// container would.
func Chroot(ctx context.Context, root string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "chroot", append([]string{"--userspec=999:999", root}, args...)...)
	cmd.Env = env
	return cmd
}

// Server is a process started in a root, in a process group of its own
// so that the test stops it and all it forked.
type Server struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// Start starts args in root and stops it when the test ends.
func Start(t *testing.T, root string, env []string, args ...string) *Server {
	t.Helper()
	s := &Server{out: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = Chroot(context.Background(), root, env, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	proc.OwnGroupOutliving(s.cmd)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.Stop(t, syscall.SIGTERM) })
	return s
}

// Stop signals the server's process group, waits for its leader, and
// kills what is left.
func (s *Server) Stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	pgid := s.cmd.Process.Pid
	select {
	case <-s.done:
	default:
		_ = proc.SignalGroup(pgid, sig)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not stop on %v", s.cmd.Args[2:], sig)
		}
	}
	_ = proc.KillGroup(pgid) // its forks, if any are left
}

// Output is what the server wrote so far, on stdout and stderr.
func (s *Server) Output() string { return s.out.String() }

// exited tells whether the server has ended.
func (s *Server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// WaitReady runs probe (a readiness probe's command) in root until it
// succeeds and its output has want, as the kubelet would, and fails the
// test if the server ends or a minute goes by first.
func WaitReady(t *testing.T, s *Server, root string, env []string, want string, probe ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := Chroot(ctx, root, env, probe...).CombinedOutput()
		cancel()
		if err == nil && strings.Contains(string(out), want) {
			return
		}
		if s.exited() || time.Now().After(deadline) {
			t.Fatalf("%s never ready (%v: %s); server's output:\n%s", probe[0], err, out, s.Output())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// FreePort is a TCP port on 127.0.0.1 that nothing listens on now.
func FreePort(t *testing.T) int {
	t.Helper()
	port, err := tcpport.Free()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Secret is a password for one test: with quotes and a backslash, which
// an entrypoint must pass through intact.
func Secret() string {
	return fmt.Sprintf(`pw'"\%d`, time.Now().UnixNano())
}

// syncBuffer is a bytes.Buffer that the server's output and the test
// may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// URLEscape escapes a password for a URL's user information.
func URLEscape(s string) string {
	return url.UserPassword("u", s).String()[2:]
}
