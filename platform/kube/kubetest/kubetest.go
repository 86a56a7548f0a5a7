// Package kubetest starts a real Kubernetes control plane for tests: etcd
// (Debian's etcd-server) and kube-apiserver (built by make setup, see
// scripts/kube-build.sh) on 127.0.0.1, with a bearer token made per start
// and both ports closed to every local user but root (nftables). There is
// no kubelet or container runtime: objects are stored and admitted, pods
// never run. Nodes adds a scheduler, a controller manager and kwok's fake
// nodes, on which pods are scheduled and reported running.
package kubetest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/host/logtail"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/platform/kube/node"
	"github.com/tierbench/tierbench/testenv"
)

// Version is the Kubernetes release setup builds.
const Version = node.Version

// BinDir is where setup puts the control plane's binaries (node.BinDir).
func BinDir() string { return node.BinDir() }

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	// Kubeconfig is a kubeconfig file whose current context, "test",
	// reaches the API server as a cluster admin.
	Kubeconfig string
	// Server is the API server's URL.
	Server string
	token  string
	dir    string
	table  string // the nftables table that closes the ports
	ports  []int  // closed by table
	procs  []*process
}

// Start starts a control plane that stops when t ends. It skips t when
// not root (the port lock needs it) or when the binaries are missing.
func Start(t testing.TB) *ControlPlane {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "the control plane's ports are closed to other users with nftables, which needs root")
	}
	apiserver := filepath.Join(BinDir(), "kube-apiserver")
	if _, err := os.Stat(apiserver); err != nil {
		testenv.Skipf(t, "kube-apiserver is not built (%v): run make setup", err)
	}
	etcd, err := node.Etcd()
	if err != nil {
		testenv.Skip(t, err)
	}
	sweepLocks()
	dir := t.TempDir()
	ports, err := tcpport.FreeN(3) // etcd client, etcd peer, API server
	if err != nil {
		t.Fatal(err)
	}
	table := tcpport.LockTable(lockPrefix + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(ports[2]))
	if err := tcpport.Lock(table, ports, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcpport.Unlock(table) })

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	etcdProc := start(t, dir, "etcd", etcd, "--data-dir", filepath.Join(dir, "etcd"), "--name", "kubetest",
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
	cp := &ControlPlane{Server: fmt.Sprintf("https://127.0.0.1:%d", ports[2]), token: token, dir: dir, table: table, ports: ports, procs: []*process{etcdProc}}
	cp.procs = append(cp.procs, start(t, dir, "kube-apiserver", apiserver, "--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[2]),
		"--cert-dir", filepath.Join(dir, "certs"), "--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc", "--service-account-key-file", saKey,
		"--service-account-signing-key-file", saKey, "--service-cluster-ip-range", "10.96.0.0/24",
		"--disable-admission-plugins", "ServiceAccount", "--enable-priority-and-fairness=false"))
	cp.waitFor(t, "/readyz", "kube-apiserver ready", func([]byte) bool { return true })
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

// process is a running control-plane process.
type process struct {
	name, log string
	run       *proc.Running
}

// start runs a control-plane process in its own process group, logging to
// dir/name.log; it is killed when t ends.
func start(t testing.TB, dir, name, path string, args ...string) *process {
	t.Helper()
	p := &process{name: name, log: filepath.Join(dir, name+".log")}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	proc.OwnGroup(cmd)
	if p.run, err = proc.Start(cmd); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = proc.KillGroup(p.run.PID())
		<-p.run.Done()
		logf.Close()
	})
	return p
}

// exited names the first of the control plane's processes that has
// exited, with the end of its log; "" while all run.
func (cp *ControlPlane) exited() string {
	for _, p := range cp.procs {
		if exited, err := p.run.Exited(); exited {
			return fmt.Sprintf("%s exited (%v); the end of its log:\n%s", p.name, err, logtail.File(p.log, 20))
		}
	}
	return ""
}

// logTails is the end of every control-plane process's log, for a failure
// message: the test's folder is gone once it ends.
func (cp *ControlPlane) logTails() string {
	var b strings.Builder
	for _, p := range cp.procs {
		fmt.Fprintf(&b, "\n--- the end of %s's log:\n%s", p.name, logtail.File(p.log, 10))
	}
	return b.String()
}

// client reaches the API server, whose certificate the server made for
// itself at start (the test trusts it as it trusts the process it ran).
func (cp *ControlPlane) client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
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
	writeKeyPEM(t, path, k)
}

func writeKeyPEM(t testing.TB, path string, k *rsa.PrivateKey) {
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Nodes makes the control plane a cluster whose pods are scheduled and
// "run" without a kubelet: it starts kube-scheduler and
// kube-controller-manager (Jobs make pods, claims bind to volumes, a
// deleted pod's claim is released) and kwok, which plays the kubelet of
// the fake nodes it creates: their pods become Running and Ready, and
// nothing runs in them. It skips t when those binaries are missing.
func (cp *ControlPlane) Nodes(t testing.TB, names ...string) {
	t.Helper()
	bins := map[string]string{}
	for _, b := range []string{"kube-scheduler", "kube-controller-manager", "kwok"} {
		bins[b] = filepath.Join(BinDir(), b)
		if _, err := os.Stat(bins[b]); err != nil {
			testenv.Skipf(t, "%s is not built (%v): run make setup", b, err)
		}
	}
	ports, err := tcpport.FreeN(3)
	if err != nil {
		t.Fatal(err)
	}
	cp.ports = append(cp.ports, ports...)
	if err := tcpport.Lock(cp.table, cp.ports, nil); err != nil {
		t.Fatal(err)
	}
	saKey := filepath.Join(cp.dir, "sa.key")
	cp.procs = append(cp.procs, start(t, cp.dir, "kube-scheduler", bins["kube-scheduler"], "--kubeconfig", cp.Kubeconfig,
		"--authentication-kubeconfig", cp.Kubeconfig, "--authorization-kubeconfig", cp.Kubeconfig,
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[0]),
		"--cert-dir", filepath.Join(cp.dir, "scheduler-certs"), node.NoWatchListFlag))
	cp.procs = append(cp.procs, start(t, cp.dir, "kube-controller-manager", bins["kube-controller-manager"], "--kubeconfig", cp.Kubeconfig,
		"--authentication-kubeconfig", cp.Kubeconfig, "--authorization-kubeconfig", cp.Kubeconfig,
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[1]),
		"--cert-dir", filepath.Join(cp.dir, "kcm-certs"), "--service-account-private-key-file", saKey,
		"--use-service-account-credentials=false", "--controllers", "*,-serviceaccount-token-controller,-node-ipam-controller", node.NoWatchListFlag))
	cert, key := writeServingCert(t, cp.dir)
	cp.procs = append(cp.procs, start(t, cp.dir, "kwok", bins["kwok"], "--kubeconfig", cp.Kubeconfig, "--manage-all-nodes=true",
		"--node-ip", "127.0.0.1", "--node-port", strconv.Itoa(ports[2]), "--server-address", fmt.Sprintf("127.0.0.1:%d", ports[2]),
		"--tls-cert-file", cert, "--tls-private-key-file", key, "--config", cp.kwokConfig(t)))
	for _, n := range names {
		cp.Apply(t, "/api/v1/nodes", []byte(fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: %s
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: %s, type: kwok}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
`, n, n)))
	}
	// Pods made before the nodes are ready would wait out the
	// scheduler's backoff.
	for _, n := range names {
		cp.waitFor(t, "/api/v1/nodes/"+n, "node "+n+" ready and untainted", func(raw []byte) bool {
			var node struct {
				Spec   struct{ Taints []any }
				Status struct {
					Conditions []struct{ Type, Status string }
				}
			}
			json.Unmarshal(raw, &node)
			for _, c := range node.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					return len(node.Spec.Taints) == 0
				}
			}
			return false
		})
	}
}

// waitFor polls an API path until ok says its JSON is what the test
// needs, for at most 5 minutes: a bound for a stuck control plane, which a
// busy 2-core machine (kwok's node leases and heartbeats) must not reach.
func (cp *ControlPlane) waitFor(t testing.TB, path, what string, ok func([]byte) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		req, _ := http.NewRequest(http.MethodGet, cp.Server+path, nil)
		req.Header.Set("Authorization", "Bearer "+cp.token)
		if resp, err := cp.client(10 * time.Second).Do(req); err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && ok(raw) {
				return
			}
		}
		if msg := cp.exited(); msg != "" {
			t.Fatalf("%s: %s", what, msg)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 5 minutes%s", what, cp.logTails())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// PodLog is the file kwok serves as the log of every pod's container
// named "drive" (a Job's load generator), in the CRI log format a
// kubelet writes; a test fills it with WritePodLog.
func (cp *ControlPlane) PodLog() string { return filepath.Join(cp.dir, "drive.log") }

// WritePodLog writes lines as a container's log in the CRI format
// ("TIME stdout F LINE"), which kwok, as a kubelet, serves through the
// API server's pods/log.
func (cp *ControlPlane) WritePodLog(t testing.TB, lines []string) {
	t.Helper()
	var b bytes.Buffer
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", now, l)
	}
	if err := os.WriteFile(cp.PodLog(), b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// kwokConfig writes kwok's configuration: kwok's own stages (setup copies
// them next to the binary) and the log every "drive" container serves.
func (cp *ControlPlane) kwokConfig(t testing.TB) string {
	t.Helper()
	stages, err := filepath.Glob(filepath.Join(BinDir(), "kwok-stages", "*.yaml"))
	if err != nil || len(stages) == 0 {
		testenv.Skipf(t, "kwok's stages are not next to it (%v): run make setup", err)
	}
	var b bytes.Buffer
	for _, f := range stages {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(text)
		b.WriteString("\n---\n")
	}
	fmt.Fprintf(&b, `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: drive}
spec:
  selector: {}
  logs:
  - containers: [drive]
    logsFile: %s
    follow: false
`, cp.PodLog())
	path := filepath.Join(cp.dir, "kwok.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp.PodLog(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Classes creates each storage class with n volumes of it.
func (cp *ControlPlane) Classes(t testing.TB, n int, classes ...string) {
	t.Helper()
	for _, class := range classes {
		cp.StorageClass(t, class)
		cp.Volumes(t, class, n)
	}
}

// Volumes creates n volumes of storage class class (hostPath, never
// written: no pod runs) for the controller manager to bind claims to.
func (cp *ControlPlane) Volumes(t testing.TB, class string, n int) {
	t.Helper()
	for i := range n {
		cp.Apply(t, "/api/v1/persistentvolumes", []byte(fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %s-%d}
spec:
  storageClassName: %s
  capacity: {storage: 1Ti}
  accessModes: [ReadWriteOnce]
  volumeMode: Filesystem
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: /nonexistent/kubetest/%s-%d}
`, class, i, class, class, i)))
		cp.waitFor(t, fmt.Sprintf("/api/v1/persistentvolumes/%s-%d", class, i), "volume available", func(raw []byte) bool {
			var pv struct{ Status struct{ Phase string } }
			json.Unmarshal(raw, &pv)
			return pv.Status.Phase == "Available"
		})
	}
}

// writeServingCert writes a self-signed certificate for 127.0.0.1, which
// kwok serves its kubelet API with (the API server does not check a
// kubelet's certificate unless told to).
func writeServingCert(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kwok"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "kwok.crt"), filepath.Join(dir, "kwok.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	writeKeyPEM(t, keyFile, k)
	return certFile, keyFile
}

// Namespace creates namespace name.
func (cp *ControlPlane) Namespace(t testing.TB, name string) {
	t.Helper()
	cp.Apply(t, "/api/v1/namespaces", []byte(fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", name)))
}

// lockPrefix starts the name of a control plane's port lock, followed by
// the test process's pid.
const lockPrefix = "kubetest-"

// sweepLocks removes the port locks of test processes that are gone: a
// test binary killed before its cleanup (a -timeout panic, a kill) leaves
// its nftables table behind.
func sweepLocks() {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return
	}
	prefix := tcpport.LockTable(lockPrefix)
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "table" || f[1] != "inet" || !strings.HasPrefix(f[2], prefix) {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(f[2], prefix), "_", 2)[0])
		if err == nil && syscall.Kill(pid, 0) == syscall.ESRCH {
			tcpport.Unlock(f[2])
		}
	}
}
