package imagestest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/host/mountinfo"
	"github.com/tierbench/tierbench/images"
)

// Containerd starts a containerd of the test's own, with its
// root, state and socket under a temporary folder and no CRI plugin,
// and stops it, unmounting whatever it left under that folder, when the
// test ends. The system's containerd (/run/containerd,
// /var/lib/containerd) is not touched.
func Containerd(t *testing.T) images.Ctr {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("containerd needs root")
	}
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Skip("no containerd")
	}
	if _, err := exec.LookPath("ctr"); err != nil {
		t.Skip("no ctr")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "containerd.sock")
	cfg := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", filepath.Join(dir, "opt"))
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		unmountUnder(t, dir)
	})
	c := images.Ctr{Address: sock, Namespace: "k8s.io"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := c.Run(context.Background(), "version")
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("containerd did not answer: %v\n%s", err, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unmountUnder unmounts every mount point below dir, deepest first, so
// that removing dir removes only what is in it.
func unmountUnder(t *testing.T, dir string) {
	t.Helper()
	mounts, err := mountinfo.Read()
	if err != nil {
		t.Errorf("listing mounts: %v", err)
		return
	}
	var points []string
	for _, m := range mounts {
		if m.Point == dir || strings.HasPrefix(m.Point, dir+"/") {
			points = append(points, m.Point)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", p, err)
		}
	}
}
