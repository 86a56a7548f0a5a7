package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/tcpport"
	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/tier"
)

// Spec is the node to run.
type Spec struct {
	// StateDir is tierbench's state folder (its ledger, the node's
	// folder and the image cache).
	StateDir string
	// BinDir holds the Kubernetes binaries setup built.
	BinDir string
	// Tiers are the study's tiers, each provisioned and served as a
	// storage class of its name.
	Tiers []tier.Spec
	// Images are the images to build (cached) and import.
	Images []Image
	// VolumesPerClass is how many local volumes each class offers.
	VolumesPerClass int
}

// Image is an image the node imports: Build makes (or finds) its
// docker-archive tarball; scratch is a folder of the node's, removed with
// it, for images not worth keeping (tierbench's own, one per build).
type Image struct {
	Name  string // what it is for: "pause", "tierbench", "postgres"
	Ref   string // its reference
	Build func(ctx context.Context, scratch string) (tarball string, err error)
}

// Info is a running node, as node.json records it for cluster down and
// for users.
type Info struct {
	PID        int               `json:"pid"`
	Kubeconfig string            `json:"kubeconfig"`
	Server     string            `json:"server"`
	NodeIP     string            `json:"node_ip"`
	Classes    []Class           `json:"classes"`
	Images     map[string]string `json:"images"`
	Started    time.Time         `json:"started"`
}

// The machine's node lock and the running node's description: one node
// per machine, whatever state folder each tierbench uses (the kubelet's
// ports and fixed folders are the machine's). Under /run, so that a
// reboot, which ends the node, forgets it too.
const (
	lockPath = "/run/tierbench-node.lock"
	infoPath = "/run/tierbench-node.json"
)

// RunningError says a node already runs on this machine: one at a time
// (the kubelet's ports and fixed folders are the machine's).
type RunningError struct{ Info Info }

func (e *RunningError) Error() string {
	return fmt.Sprintf("a node already runs on this machine (pid %d, kubeconfig %s): run tierbench cluster down first", e.Info.PID, e.Info.Kubeconfig)
}

// Running returns the machine's running node, or false.
func Running() (Info, bool) {
	f, err := os.OpenFile(lockPath, os.O_RDONLY, 0)
	if err != nil {
		return Info{}, false
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return Info{}, false // nobody holds it
	}
	var info Info
	b, _ := os.ReadFile(infoPath)
	_ = json.Unmarshal(b, &info)
	return info, true
}

// lock takes the machine's node lock, held while Serve runs.
func lock() (*os.File, error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("node lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		info, _ := Running()
		return nil, &RunningError{Info: info}
	}
	return f, nil
}

// Serve runs the node until ctx ends, then undoes all of it. ready is
// called once the node is Ready, its classes and volumes made and its
// images imported. Everything is recorded in the ledger first, so a kill
// -9 of this process leaves what `tierbench cleanup` undoes in one pass.
func Serve(ctx context.Context, spec Spec, ready func(Info)) (err error) {
	lk, err := lock()
	if err != nil {
		return err
	}
	defer lk.Close()
	ledger, err := tier.OpenLedger(spec.StateDir)
	if err != nil {
		return err
	}
	ip, err := nodeIP()
	if err != nil {
		return err
	}
	l := layout{dir: filepath.Join(spec.StateDir, "cluster", "node"), run: "/run/tierbench-containerd"}
	rec := before(l.dir, l.run)
	extra, _ := json.Marshal(rec)
	r, err := ledger.Intend(tier.Resource{Kind: KindNode, Path: l.dir, Extra: extra})
	if err != nil {
		return err
	}
	ps := &procs{logs: l.logs(), died: make(chan *program, 16)}
	var ws *tier.Workspace
	n := &starting{spec: spec, l: l, ps: ps, ip: ip, ledger: ledger}
	defer func() {
		ps.stop(10 * time.Second)
		errs := []error{err, sweep(rec)}
		if n.unlock != nil {
			errs = append(errs, n.unlock())
		}
		for _, d := range n.made {
			if e := tier.Undo(d); e != nil {
				errs = append(errs, e)
			} else {
				_ = ledger.Done(d)
			}
		}
		if ws != nil {
			errs = append(errs, ws.Close())
		}
		if e := errors.Join(errs[1:]...); e == nil {
			_ = ledger.Done(r)
		}
		_ = os.Remove(infoPath)
		err = errors.Join(errs...)
	}()
	if err := sweep(rec); err != nil { // a folder left by an earlier node
		return err
	}
	if ws, err = tier.NewWorkspace(ctx, ledger, "cluster", spec.Tiers...); err != nil {
		return err
	}
	info, api, err := n.start(ctx, ws)
	if n.dns != nil {
		defer n.dns.stop()
	}
	if err != nil {
		return err
	}
	if err := writeInfo(info); err != nil {
		return err
	}
	ready(info)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case pr := <-ps.died:
			return fmt.Errorf("%s ended (%v); its log ends:\n%s", pr.name, pr.exit(), ps.logTail(pr.name))
		case <-tick.C:
			if err := recycle(ctx, api); err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "recycle volumes:", err)
			}
		}
	}
}

func writeInfo(info Info) error {
	b, _ := json.MarshalIndent(info, "", "  ")
	tmp := infoPath + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write node info: %w", err)
	}
	return os.Rename(tmp, infoPath)
}

// Stop ends the running node (SIGTERM to the process that serves it) and
// waits up to timeout for it to have undone everything.
func Stop(timeout time.Duration) (bool, error) {
	info, ok := Running()
	if !ok {
		return false, nil
	}
	if info.PID <= 0 {
		return true, fmt.Errorf("a node is starting (node.json not yet written): wait for cluster up, then run cluster down")
	}
	if err := syscall.Kill(info.PID, syscall.SIGTERM); err != nil {
		return true, fmt.Errorf("stop node process %d: %w", info.PID, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, ok := Running(); !ok {
			return true, nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return true, fmt.Errorf("node process %d still running after %s; see serve.log in the cluster folder of its state folder", info.PID, timeout)
}

// nodeIP is the machine's first global IPv4 address: the kubelet needs an
// address pods can reach, not loopback.
func nodeIP() (net.IP, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("node address: %w", err)
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 || ifc.Name == bridgeName {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return n.IP.To4(), nil
			}
		}
	}
	return nil, errors.New("node address: no interface has a global IPv4 address (the kubelet needs one pods can reach)")
}

// starting is a node on its way up.
type starting struct {
	spec   Spec
	l      layout
	ps     *procs
	ip     net.IP
	ledger *tier.Ledger
	// made are the volumes' folders on the tiers, recorded in the ledger.
	made []tier.Resource
	// unlock opens the node's ports again.
	unlock func() error
	dns    *clusterDNS
}

func (n *starting) bin(name string) string { return filepath.Join(n.spec.BinDir, name) }

// start starts every program, in order, each once the one it needs is
// ready, and makes the classes and volumes.
func (n *starting) start(ctx context.Context, ws *tier.Workspace) (Info, *kube.Cluster, error) {
	l, ps := n.l, n.ps
	for _, d := range []string{l.dir, l.run} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Info{}, nil, fmt.Errorf("node folder: %w", err)
		}
	}
	p, err := newPKI(l.pki(), n.ip, NodeName)
	if err != nil {
		return Info{}, nil, err
	}
	tok, err := token()
	if err != nil {
		return Info{}, nil, err
	}
	names := []string{"etcd", "etcd-peer", "apiserver", "scheduler", "controller-manager", "proxy-metrics", "proxy-healthz"}
	free, err := tcpport.FreeN(len(names))
	if err != nil {
		return Info{}, nil, err
	}
	ports := map[string]int{}
	for i, name := range names {
		ports[name] = free[i]
	}
	locked := append(free, kubeletPort, kubeletHealthzPort)
	if n.unlock, err = ws.LockPorts("cluster-node", locked, nil); err != nil {
		return Info{}, nil, err
	}
	tokens := l.path("tokens.csv")
	if err := writeFile(tokens, tok+`,admin,admin,"system:masters"`+"\n"); err != nil {
		return Info{}, nil, err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", ports["apiserver"])
	if err := writeFile(l.kubeconfig(), kubeconfigText(server, p.path(caCert), tok)); err != nil {
		return Info{}, nil, err
	}
	kc := l.kubeconfig()

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports["etcd"])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports["etcd-peer"])
	etcdPath, err := Etcd()
	if err != nil {
		return Info{}, nil, err
	}
	etcd, err := ps.start("etcd", etcdPath, "--data-dir", l.path("etcd"), "--name", "node",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "node="+peerURL, "--log-level", "warn")
	if err != nil {
		return Info{}, nil, err
	}
	if err := ps.waitUntil(ctx, etcd, "etcd", time.Minute, listening(loopback(ports["etcd"]))); err != nil {
		return Info{}, nil, err
	}
	apiserver, err := ps.start("kube-apiserver", n.bin("kube-apiserver"), "--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", n.ip.String(), "--secure-port", strconv.Itoa(ports["apiserver"]),
		"--tls-cert-file", p.path(apiserverCert), "--tls-private-key-file", p.path(apiserverKey),
		"--client-ca-file", p.path(caCert), "--token-auth-file", tokens, "--authorization-mode", "Node,RBAC",
		"--kubelet-client-certificate", p.path(kubeletClientCert), "--kubelet-client-key", p.path(kubeletClientKey),
		"--kubelet-preferred-address-types", "InternalIP",
		"--service-account-issuer", "https://kubernetes.default.svc", "--service-account-key-file", p.path(serviceAccountKey),
		"--service-account-signing-key-file", p.path(serviceAccountKey), "--service-cluster-ip-range", serviceRange,
		"--disable-admission-plugins", "ServiceAccount", "--enable-priority-and-fairness=false", "--endpoint-reconciler-type", "none")
	if err != nil {
		return Info{}, nil, err
	}
	api, err := kube.Connect(kc, "")
	if err != nil {
		return Info{}, nil, err
	}
	if err := ps.waitUntil(ctx, apiserver, "kube-apiserver ready", 2*time.Minute, func() bool {
		return api.Do(ctx, http.MethodGet, "/readyz", nil, nil) == nil
	}); err != nil {
		return Info{}, nil, err
	}
	if _, err := ps.start("kube-scheduler", n.bin("kube-scheduler"), "--kubeconfig", kc,
		"--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports["scheduler"]), NoWatchListFlag); err != nil {
		return Info{}, nil, err
	}
	if _, err := ps.start("kube-controller-manager", n.bin("kube-controller-manager"), "--kubeconfig", kc,
		"--authentication-kubeconfig", kc, "--authorization-kubeconfig", kc,
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports["controller-manager"]),
		"--service-account-private-key-file", p.path(serviceAccountKey), "--root-ca-file", p.path(caCert),
		"--use-service-account-credentials=false", "--controllers", "*,-serviceaccount-token-controller,-node-ipam-controller", NoWatchListFlag); err != nil {
		return Info{}, nil, err
	}

	cniConf := l.path("cni", "net.d")
	if err := writeFile(filepath.Join(cniConf, "10-tierbench.conflist"), cniConfig(l.path("cni", "ipam"))); err != nil {
		return Info{}, nil, err
	}
	ctrConf := l.path("containerd.toml")
	if err := writeFile(ctrConf, containerdConfig(l, cniConf)); err != nil {
		return Info{}, nil, err
	}
	containerd, err := ps.start("containerd", "containerd", "--config", ctrConf)
	if err != nil {
		return Info{}, nil, err
	}
	if err := ps.waitUntil(ctx, containerd, "containerd", time.Minute, exists(l.socket())); err != nil {
		return Info{}, nil, err
	}
	images := map[string]string{}
	for _, img := range n.spec.Images {
		tarball, err := img.Build(ctx, l.path("images"))
		if err != nil {
			return Info{}, nil, fmt.Errorf("image %s: %w", img.Name, err)
		}
		if err := importImage(ctx, l.socket(), tarball); err != nil {
			return Info{}, nil, fmt.Errorf("image %s: %w", img.Name, err)
		}
		images[img.Name] = img.Ref
	}

	// The pods' DNS, at the node's address, before the kubelet that
	// names it in every pod's resolv.conf.
	if n.dns, err = serveDNS(api, net.JoinHostPort(n.ip.String(), "53")); err != nil {
		return Info{}, nil, err
	}
	kubeletConf := l.path("kubelet.yaml")
	if err := writeFile(kubeletConf, kubeletConfig(l, n.ip.String(), p)); err != nil {
		return Info{}, nil, err
	}
	// Pods' CPU figures (the summary API's, from cAdvisor) refresh every
	// 2 s rather than the default 10 s, which a study's window of 12 s did
	// not always span twice for every pod: "the kubelet did not refresh
	// it within the window".
	kubelet, err := ps.start("kubelet", n.bin("kubelet"), "--config", kubeletConf, "--kubeconfig", kc,
		"--root-dir", l.kubeletRoot(), "--cert-dir", l.path("kubelet-certs"), "--node-ip", n.ip.String(),
		"--hostname-override", NodeName, "--housekeeping-interval", "2s", "--v", "1")
	if err != nil {
		return Info{}, nil, err
	}
	if err := ps.waitUntil(ctx, kubelet, "node Ready", 3*time.Minute, func() bool { return nodeReady(ctx, api) }); err != nil {
		return Info{}, nil, err
	}
	if _, err := ps.start("kube-proxy", n.bin("kube-proxy"), "--kubeconfig", kc, "--proxy-mode", "nftables",
		"--hostname-override", NodeName, "--cluster-cidr", podCIDR,
		"--metrics-bind-address", loopback(ports["proxy-metrics"]), "--healthz-bind-address", loopback(ports["proxy-healthz"]),
		"--conntrack-max-per-core", "0", "--conntrack-tcp-timeout-established", "0", "--conntrack-tcp-timeout-close-wait", "0", NoWatchListFlag); err != nil {
		return Info{}, nil, err
	}

	var classes []Class
	for _, t := range n.spec.Tiers {
		ti := ws.Tiers()[t.Name]
		// The volumes live in a folder of the node's own on the tier, so
		// that a folder tier the user gave keeps only what was there.
		c := Class{Name: t.Name, Path: filepath.Join(ti.Path, "tierbench-node-volumes"), Durable: ti.Durable, Note: ti.Note}
		d, err := n.ledger.Mkdir(c.Path, 0o755)
		if err != nil {
			return Info{}, nil, fmt.Errorf("tier %s: %w", t.Name, err)
		}
		n.made = append(n.made, d)
		var st unix.Statfs_t
		if err := unix.Statfs(ti.Path, &st); err != nil {
			return Info{}, nil, fmt.Errorf("tier %s: %w", t.Name, err)
		}
		c.Capacity = int64(st.Blocks) * st.Bsize
		if err := createClass(ctx, api, c, n.spec.VolumesPerClass); err != nil {
			return Info{}, nil, err
		}
		classes = append(classes, c)
	}
	return Info{PID: os.Getpid(), Kubeconfig: kc, Server: server, NodeIP: n.ip.String(), Classes: classes,
		Images: images, Started: time.Now().UTC()}, api, nil
}

// loopback is port on 127.0.0.1, as host:port.
func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// nodeReady reports whether the node is registered and Ready.
func nodeReady(ctx context.Context, api *kube.Cluster) bool {
	var node struct {
		Status struct {
			Conditions []struct{ Type, Status string }
		}
	}
	if api.Do(ctx, http.MethodGet, "/api/v1/nodes/"+NodeName, nil, &node) != nil {
		return false
	}
	for _, c := range node.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}
