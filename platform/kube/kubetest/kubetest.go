// Package kubetest starts a real Kubernetes control plane for tests: etcd
// (Debian's etcd-server) and kube-apiserver (built by make setup, see
// scripts/kube-build.sh) on 127.0.0.1, with a bearer token made per start
// and both ports closed to every local user but root (nftables). There is
// no kubelet or container runtime: objects are stored and admitted, pods
// never run.
package kubetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine/server"
	"github.com/tierbench/tierbench/tier"
)

// Version is the Kubernetes release setup builds.
const Version = "1.34.1"

// BinDir is where setup puts the control plane's binaries:
// $TIERBENCH_KUBE_BIN, else tierbench's default state folder's k8s/<Version>
// (not $TIERBENCH_STATE_DIR, which tests point at folders of their own).
func BinDir() string {
	if d := os.Getenv("TIERBENCH_KUBE_BIN"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return filepath.Join("/var/lib/tierbench/k8s", Version)
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local/state/tierbench/k8s", Version)
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	// Kubeconfig is a kubeconfig file whose current context, "test",
	// reaches the API server as a cluster admin.
	Kubeconfig string
	// Server is the API server's URL.
	Server string
	token  string
}

// Start starts a control plane that stops when t ends. It skips t when
// not root (the port lock needs it) or when the binaries are missing.
func Start(t testing.TB) *ControlPlane {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the control plane's ports are closed to other users with nftables, which needs root")
	}
	apiserver := filepath.Join(BinDir(), "kube-apiserver")
	if _, err := os.Stat(apiserver); err != nil {
		t.Skipf("kube-apiserver is not built (%v): run make setup", err)
	}
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not installed: apt-get install etcd-server (make setup)")
	}
	dir := t.TempDir()
	ports := make([]int, 3) // etcd client, etcd peer, API server
	for i := range ports {
		if ports[i], err = server.FreePort(); err != nil {
			t.Fatal(err)
		}
	}
	table := tier.PortLockTable("kubetest-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(ports[2]))
	if err := tier.LockPorts(table, ports, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tier.UnlockPorts(table) })

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	start(t, dir, "etcd", etcd, "--data-dir", filepath.Join(dir, "etcd"), "--name", "kubetest",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "kubetest="+peerURL, "--log-level", "warn")

	token := secret(t)
	saKey := filepath.Join(dir, "sa.key")
	writeKey(t, saKey)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+`,admin,admin,"system:masters"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cp := &ControlPlane{Server: fmt.Sprintf("https://127.0.0.1:%d", ports[2]), token: token}
	start(t, dir, "kube-apiserver", apiserver, "--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[2]),
		"--cert-dir", filepath.Join(dir, "certs"), "--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc", "--service-account-key-file", saKey,
		"--service-account-signing-key-file", saKey, "--service-cluster-ip-range", "10.96.0.0/24",
		"--disable-admission-plugins", "ServiceAccount", "--enable-priority-and-fairness=false")
	cp.waitReady(t)
	cp.Kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %q}
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
`, cp.Server, token)
	if err := os.WriteFile(cp.Kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return cp
}

// start runs a control-plane process in its own process group, logging to
// dir/name.log; it is killed when t ends.
func start(t testing.TB, dir, name, path string, args ...string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		logf.Close()
	})
}

// client reaches the API server, whose certificate the server made for
// itself at start (the test trusts it as it trusts the process it ran).
func (cp *ControlPlane) client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

// waitReady waits until the API server answers /readyz.
func (cp *ControlPlane) waitReady(t testing.TB) {
	t.Helper()
	client := cp.client(2 * time.Second)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, cp.Server+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+cp.token)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver not ready after 2 minutes (last: %v); see its log in the test's folder", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Apply creates the objects of a YAML or JSON manifest through the API
// server, as kubectl create -f does, with the admin's token.
func (cp *ControlPlane) Apply(t testing.TB, path string, body []byte) {
	t.Helper()
	client := cp.client(10 * time.Second)
	req, _ := http.NewRequest(http.MethodPost, cp.Server+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+cp.token)
	req.Header.Set("Content-Type", "application/yaml")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
}

// StorageClass creates a storage class named name with no provisioner.
func (cp *ControlPlane) StorageClass(t testing.TB, name string) {
	t.Helper()
	cp.Apply(t, "/apis/storage.k8s.io/v1/storageclasses", []byte(fmt.Sprintf(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: %s}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
`, name)))
}

func secret(t testing.TB) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// writeKey writes an RSA key for the API server's service account tokens.
func writeKey(t testing.TB, path string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
