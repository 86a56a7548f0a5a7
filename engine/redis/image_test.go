package redis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/images/imagestest"
)

// TestLabImage runs the server as the engine's pod does: uid 999, a
// configuration file that holds the password, the arguments after it;
// checks the readiness probe (redis-cli with REDISCLI_AUTH) and that
// the server refuses a client without the password.
func TestLabImage(t *testing.T) {
	r, err := Engine{}.LabImage()
	if err != nil {
		t.Fatal(err)
	}
	root := imagestest.UnpackRoot(t, imagestest.Build(t, r))
	password := imagestest.Secret()
	conf := filepath.Join(root, "etc/tierbench/redis.conf")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("requirepass %q\nsave \"\"\n", password)), 0o644); err != nil {
		t.Fatal(err)
	}
	imagestest.Volume(t, root, "/data/redis")
	port := fmt.Sprint(imagestest.FreePort(t))
	env := imagestest.Env(r)
	args := append(r.Config.Entrypoint, "redis-server", "/etc/tierbench/redis.conf", "--dir", "/data/redis", "--bind", "127.0.0.1", "--port", port)
	start := time.Now()
	s := imagestest.Start(t, root, env, args...)
	authed := append(env, "REDISCLI_AUTH="+password)
	imagestest.WaitReady(t, s, root, authed, "PONG", "redis-cli", "-p", port, "ping")
	t.Logf("ready in %s", time.Since(start).Round(time.Millisecond))

	ctx := context.Background()
	out, err := imagestest.Chroot(ctx, root, authed, "redis-cli", "-p", port, "set", "k", "v").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "OK" {
		t.Errorf("SET with the password: %v, %s", err, out)
	}
	out, _ = imagestest.Chroot(ctx, root, env, "redis-cli", "-p", port, "get", "k").CombinedOutput()
	if !strings.Contains(string(out), "NOAUTH") {
		t.Errorf("GET without the password: %s, want NOAUTH", out)
	}
	wrong := append(env, "REDISCLI_AUTH=wrong")
	out, _ = imagestest.Chroot(ctx, root, wrong, "redis-cli", "-p", port, "get", "k").CombinedOutput()
	if strings.TrimSpace(string(out)) == "v" {
		t.Errorf("GET with a wrong password: %s", out)
	}
	out, err = imagestest.Chroot(ctx, root, authed, "redis-cli", "-p", port, "config", "get", "dir").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "/data/redis") {
		t.Errorf("dir: %v, %s", err, out)
	}
	s.Stop(t, syscall.SIGTERM)
	if strings.Contains(s.Output(), password) {
		t.Errorf("the server printed the password")
	}
}

// TestLabImageImport imports a Debian image (hard links, setgid folders,
// a big layer) into a throwaway containerd and runs it there with runc,
// as the kubelet would: the config's user, PATH and entrypoint apply.
func TestLabImageImport(t *testing.T) {
	r, err := Engine{}.LabImage()
	if err != nil {
		t.Fatal(err)
	}
	tarball := imagestest.Build(t, r)
	ctr := imagestest.Containerd(t)
	if _, err := exec.LookPath("containerd-shim-runc-v2"); err != nil {
		t.Skip("no containerd-shim-runc-v2")
	}
	ctx := context.Background()
	start := time.Now()
	if err := ctr.Import(ctx, tarball); err != nil {
		t.Fatal(err)
	}
	t.Logf("imported in %s", time.Since(start).Round(time.Millisecond))
	if has, err := ctr.Has(ctx, r.Name); err != nil || !has {
		t.Fatalf("Has after Import: %v, %v", has, err)
	}
	id := fmt.Sprintf("tierbench-images-test-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := ctr.Run(ctx, "run", "--rm", "--snapshotter", "overlayfs", r.Name, id, "docker-entrypoint.sh", "sh", "-c", "id -u; id -g; pwd; redis-server --version")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(out)
	if len(lines) < 4 || lines[0] != "999" || lines[1] != "999" || lines[2] != "/data" || !strings.Contains(out, "v=7.") {
		t.Errorf("in the container: %q, want uid and gid 999 in /data and redis 7", out)
	}
}
