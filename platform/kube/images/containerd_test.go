package images

import (
	"bufio"
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
)

// throwawayContainerd starts a containerd of the test's own, with its
// root, state and socket under a temporary folder and no CRI plugin,
// and stops it, unmounting whatever it left under that folder, when the
// test ends. The system's containerd (/run/containerd,
// /var/lib/containerd) is not touched.
func throwawayContainerd(t *testing.T) Ctr {
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
	c := Ctr{Address: sock, Namespace: "k8s.io"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := c.run(context.Background(), "version")
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
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Errorf("listing mounts: %v", err)
		return
	}
	defer f.Close()
	var points []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 {
			p := unescapeMount(fields[4])
			if p == dir || strings.HasPrefix(p, dir+"/") {
				points = append(points, p)
			}
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", p, err)
		}
	}
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var n int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%o", &n); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
