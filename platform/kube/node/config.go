package node

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Addresses of the node's networks: pods get addresses from podSubnet on
// the bridge, Services from serviceRange (kube-proxy in nftables mode).
const (
	podSubnet    = "10.244.0.0/24"
	podCIDR      = "10.244.0.0/16"
	serviceRange = "10.96.0.0/24"
	bridgeName   = "tbcni0"
	// NodeName is the node's name (and kubernetes.io/hostname), which the
	// local volumes' node affinity names.
	NodeName = "tierbench-node"
	// PauseImage is the sandbox image containerd is told to use; cluster
	// up builds and imports it under exactly this name.
	PauseImage = "tierbench.local/pause:1"
	// The kubelet's fixed ports (the API server reaches it at the node's
	// address; they are closed to other local users like every port of
	// the node).
	kubeletPort        = 10250
	kubeletHealthzPort = 10248
)

// Version is the Kubernetes release setup builds (scripts/kube-build.sh).
const Version = "1.34.1"

// BinDir is where setup puts the Kubernetes binaries:
// $TIERBENCH_KUBE_BIN, else the machine's default state folder's
// k8s/<Version> (not $TIERBENCH_STATE_DIR, which tests point at folders
// of their own: the binaries are built once per machine).
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

// Etcd is the etcd a control plane runs: the one make setup builds into
// BinDir (etcd 3.6, whose watch progress notifications let the API server
// serve consistent lists and watch-list streams from its cache; a test's
// fake pods then show in seconds less), else Debian's etcd-server (3.4,
// which lacks them) on PATH.
func Etcd() (string, error) {
	built := filepath.Join(BinDir(), "etcd")
	if st, err := os.Stat(built); err == nil && st.Mode()&0o111 != 0 {
		return built, nil
	}
	path, err := exec.LookPath("etcd")
	if err != nil {
		return "", errors.New("etcd is not installed: run make setup (it builds etcd 3.6), or apt-get install etcd-server")
	}
	return path, nil
}

// ImageCacheDir is where the node's images are built and kept, once per
// machine: $TIERBENCH_IMAGE_CACHE, else images in the machine's default
// state folder (as BinDir, not $TIERBENCH_STATE_DIR).
func ImageCacheDir() string {
	if d := os.Getenv("TIERBENCH_IMAGE_CACHE"); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(filepath.Dir(BinDir())), "images")
}

// layout is where one node keeps its state: dir, a folder of its own
// under the state folder, and run, containerd's state (sockets, the
// tasks' bundles) under /run.
type layout struct{ dir, run string }

func (l layout) path(parts ...string) string {
	return filepath.Join(append([]string{l.dir}, parts...)...)
}
func (l layout) socket() string      { return filepath.Join(l.run, "containerd.sock") }
func (l layout) kubeconfig() string  { return l.path("kubeconfig") }
func (l layout) pki() string         { return l.path("pki") }
func (l layout) logs() string        { return l.path("logs") }
func (l layout) kubeletRoot() string { return l.path("kubelet") }
func (l layout) podLogs() string     { return l.path("pod-logs") }

// writeFile writes one of the node's configuration files (0600: some hold
// the token).
func writeFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// kubeconfigText reaches the API server at server with the admin token,
// trusting the node's authority.
func kubeconfigText(server, ca, tok string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: tierbench-node
  cluster: {server: %q, certificate-authority: %q}
users:
- name: admin
  user: {token: %q}
contexts:
- name: tierbench-node
  context: {cluster: tierbench-node, user: admin, namespace: default}
current-context: tierbench-node
`, server, ca, tok)
}

// containerdConfig is containerd's configuration: its own root, state and
// socket (never the machine's /var/lib/containerd or /run/containerd), the
// CRI plugin with cgroupfs, runc, the CNI configuration in conf, and the
// pause image. restrict_oom_score_adj is what lets runc start a sandbox as
// root without CAP_SYS_RESOURCE (otherwise every sandbox fails with
// "can't get final child's PID from pipe: EOF").
func containerdConfig(l layout, conf string) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
`, l.path("containerd"), l.run, l.socket(), PauseImage, conf)
}

// cniConfig is the pods' network: a bridge with host-local addresses and
// masquerading out, portmap for host ports, and loopback.
func cniConfig(ipamDir string) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "tierbench",
  "plugins": [
    {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, bridgeName, ipamDir, podSubnet)
}

// kubeletConfig is the kubelet's configuration. Authentication is the
// node's authority (the API server's client certificate) or a token the
// API server accepts; nothing is anonymous, and the read-only port is
// off. Image garbage collection is off (the images are imported, not
// pulled back), and eviction thresholds are low so that a full test disk
// does not evict the run's pods.
func kubeletConfig(l layout, nodeIP string, p *pki) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %q
port: %d
healthzBindAddress: 127.0.0.1
healthzPort: %d
readOnlyPort: 0
tlsCertFile: %q
tlsPrivateKeyFile: %q
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %q}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: %q
podLogsDir: %q
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
serializeImagePulls: false
volumeStatsAggPeriod: 10s
resolvConf: /etc/resolv.conf
clusterDNS: [%q]
clusterDomain: cluster.local
protectKernelDefaults: false
staticPodPath: ""
featureGates: {WatchListClient: false}
`, nodeIP, kubeletPort, kubeletHealthzPort, p.path(kubeletCert), p.path(kubeletKey), p.path(caCert),
		"unix://"+l.socket(), l.podLogs(), nodeIP)
}

// NoWatchListFlag keeps a Kubernetes component's clients from asking for
// watch-list streams: the API server serves them only from an etcd with
// progress notifications, which Debian's etcd 3.4 lacks ("RequestWatchProgress
// is disabled"), and a client that asks gets an error and lists again,
// after a back-off once it keeps failing (the controller manager logged
// 58 such errors in one kwok test). kwok asks regardless of the feature
// gate, so the tests' fake pods still lag by seconds.
const NoWatchListFlag = "--feature-gates=WatchListClient=false"

// joinCSV is a comma-separated flag value.
func joinCSV(s ...string) string { return strings.Join(s, ",") }
