package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/images"
	"github.com/tierbench/tierbench/platform/kube/node"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/tier"
)

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "A single-node Kubernetes cluster on this machine, for cluster studies (up, down)",
	}
	var timeout time.Duration
	up := &cobra.Command{
		Use:   "up STUDY.yaml",
		Short: "Start a one-node cluster whose storage classes are the study's tiers",
		Long: `cluster up starts a single-node Kubernetes cluster on this machine from
real parts (etcd, the control plane, containerd, the kubelet, kube-proxy,
a CNI bridge), provisions every tier of the study's tiers: as a local run
would, and serves each as a StorageClass of the tier's name with local
volumes on it. It builds (once per machine) and imports the engines'
images made from Debian packages, and tierbench's own. It prints the
kubeconfig and what a cluster study names. One node per machine; cluster
down (or cleanup after a kill -9) undoes all of it.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error { return clusterUp(cmd.Context(), a[0], timeout) },
	}
	up.Flags().DurationVar(&timeout, "timeout", 15*time.Minute, "how long to wait for the node (image builds included)")
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the node and undo everything cluster up made",
		Args:  args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			start := time.Now()
			ran, err := node.Stop(3 * time.Minute)
			if err != nil {
				return err
			}
			if !ran {
				// A node whose serve process was killed leaves its
				// processes running and its records in the ledger.
				done, err := undoDeadNode()
				for _, r := range done {
					fmt.Println("undone: " + r.String())
				}
				if err != nil {
					return fmt.Errorf("the node's process was gone and undoing what it left failed: %w; run tierbench cleanup", err)
				}
				if len(done) > 0 {
					fmt.Printf("the node's process was gone (killed?): what it left was undone in %s\n", time.Since(start).Round(100*time.Millisecond))
					return nil
				}
				fmt.Println("no node runs on this machine")
				return nil
			}
			// The node's process undoes everything and forgets its ledger
			// record; a record left means part of it could not be undone.
			if left := nodeLeftovers(); len(left) > 0 {
				return fmt.Errorf("the node stopped, but not all of it was undone (%s): see cluster/serve.log in %s, then run tierbench cleanup", strings.Join(left, "; "), tier.StateDir())
			}
			fmt.Printf("node stopped and undone in %s\n", time.Since(start).Round(100*time.Millisecond))
			return nil
		},
	}
	serve := &cobra.Command{
		Use:    "serve STUDY.yaml",
		Short:  "Run the node in this process (what cluster up starts)",
		Hidden: true,
		Args:   args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			spec, err := nodeSpec(a[0])
			if err != nil {
				return badInput(err)
			}
			return node.Serve(cmd.Context(), spec, func(node.Info) { fmt.Println("ready") })
		},
	}
	cmd.AddCommand(up, down, serve)
	return cmd
}

// nodeLeftovers names the node records left in the ledger.
func nodeLeftovers() []string {
	ledger, err := tier.OpenLedger(tier.StateDir())
	if err != nil {
		return nil
	}
	left, _ := ledger.Leftovers()
	var out []string
	for _, r := range left {
		if r.Kind == node.KindNode {
			out = append(out, r.String())
		}
	}
	return out
}

// undoDeadNode undoes, newest first, what a node's serve process left in
// the ledger when it was killed (every record it owned, the node's own
// among them), as cleanup would; nothing when no dead node is recorded.
func undoDeadNode() ([]tier.Resource, error) {
	ledger, err := tier.OpenLedger(tier.StateDir())
	if err != nil {
		return nil, err
	}
	left, err := ledger.Leftovers()
	if err != nil {
		return nil, err
	}
	for _, r := range left {
		if r.Kind == node.KindNode {
			return ledger.CleanupOwnedBy(r.Owner)
		}
	}
	return nil, nil
}

// newPauseCmd is the pods' sandbox program (the pause image runs
// tierbench pause): it waits for SIGTERM or SIGINT.
func newPauseCmd() *cobra.Command {
	return &cobra.Command{
		Use: "pause", Hidden: true, Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			<-cmd.Context().Done()
			return nil
		},
	}
}

// nodeTools are the programs a node needs, with the Debian package that
// has each.
var nodeTools = [][2]string{
	{"containerd", "containerd"}, {"runc", "runc"}, {"ctr", "containerd"},
	{"/usr/lib/cni/bridge", "containernetworking-plugins"}, {"/usr/lib/cni/host-local", "containernetworking-plugins"},
	{"/usr/lib/cni/portmap", "containernetworking-plugins"}, {"mmdebstrap", "mmdebstrap"}, {"etcd", "etcd-server"},
	{"nft", "nftables"}, {"iptables", "iptables"}, {"ip", "iproute2"},
}

// checkNode checks everything cluster up needs and returns the study's
// tiers; every error is the user's to fix. It reads no image's files:
// cluster up runs it before starting the process that builds them.
func checkNode(path string) ([]tier.Spec, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("cluster up needs root: it mounts the tiers and runs containerd and the kubelet; run it as root")
	}
	// The study first: a study cluster up cannot serve is refused on any
	// machine.
	cat := catalog.Default()
	st, err := study.ParseFile(path, cat)
	if err != nil {
		return nil, err
	}
	switch {
	case st.Kubernetes != nil:
		return nil, fmt.Errorf("%s runs on a cluster (platform: kubernetes): cluster up takes a study whose tiers: are on this machine (tmpfs, loop, folders), and serves each as a storage class", path)
	case st.Target != "":
		// A target study's tiers are the folders of the user's own
		// server, which tierbench inspects and never writes; a storage
		// class would put volumes in them.
		return nil, fmt.Errorf("%s measures a target server (target:), whose tiers are your server's folders, which tierbench never writes, and cluster up would make volumes in them; give cluster up a study without target, whose tiers tierbench provisions or owns", path)
	case len(st.Tiers) == 0:
		return nil, fmt.Errorf("%s has no tiers: cluster up serves each of the study's tiers as a storage class", path)
	}
	var missing, pkgs []string
	for _, t := range nodeTools {
		if _, err := exec.LookPath(t[0]); err != nil {
			missing = append(missing, t[0])
			if !slices.Contains(pkgs, t[1]) {
				pkgs = append(pkgs, t[1])
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cluster up needs %s: apt-get install %s (make setup installs them)", strings.Join(missing, ", "), strings.Join(pkgs, " "))
	}
	for _, b := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"} {
		if _, err := os.Stat(filepath.Join(node.BinDir(), b)); err != nil {
			return nil, fmt.Errorf("cluster up needs %s in %s: run make setup (scripts/kube-build.sh builds it)", b, node.BinDir())
		}
	}
	// The images hold this binary alone: a dynamically linked one could
	// not start in a pod.
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find tierbench's own binary for its image: %w", err)
	}
	if err := images.CheckStatic(exe); err != nil {
		return nil, err
	}
	if info, ok := node.Running(); ok {
		return nil, &node.RunningError{Info: info}
	}
	return st.TierSpecs(), nil
}

// nodeSpec is the node to serve: the checked study's tiers and the
// images, built from this binary and this machine's builds.
func nodeSpec(path string) (node.Spec, error) {
	tiers, err := checkNode(path)
	if err != nil {
		return node.Spec{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return node.Spec{}, fmt.Errorf("find tierbench's own binary for its image: %w", err)
	}
	spec := node.Spec{StateDir: tier.StateDir(), BinDir: node.BinDir(), VolumesPerClass: 6, Tiers: tiers}
	cache := node.ImageCacheDir()
	pause, err := images.Pause(exe)
	if err != nil {
		return node.Spec{}, err
	}
	self, err := images.Tierbench(exe)
	if err != nil {
		return node.Spec{}, err
	}
	recipes, err := engineImages(catalog.Default())
	if err != nil {
		return node.Spec{}, err
	}
	recipes["pause"], recipes["tierbench"] = pause, self
	for _, name := range slices.Sorted(maps.Keys(recipes)) {
		r := recipes[name]
		spec.Images = append(spec.Images, node.Image{Name: name, Ref: r.Name, Build: func(ctx context.Context, scratch string) (string, error) {
			if r.Suite == "" {
				// Files only: made in seconds, and tierbench's own
				// changes with every build; not kept.
				return images.Build(ctx, r, scratch)
			}
			return images.Build(ctx, r, cache)
		}})
	}
	return spec, nil
}

// engineImages are the images of cat's engines on the node, by engine
// name (a study on the node runs its engine's): each engine that runs on
// the node declares its own. One this machine cannot make (Ignite's and
// OpenSearch's hold this machine's Java builds) is left out, and up says
// which images the node has.
func engineImages(cat *catalog.Catalog) (map[string]images.Recipe, error) {
	recipes := map[string]images.Recipe{}
	for _, name := range cat.EngineNames() {
		e, _ := cat.Engine(name)
		li, ok := e.(images.LabImager)
		if !ok {
			continue
		}
		r, err := li.LabImage()
		if errors.Is(err, images.ErrNoLabImage) {
			continue
		}
		if err != nil {
			return nil, err
		}
		recipes[name] = r
	}
	return recipes, nil
}

// clusterUp checks, then starts `tierbench cluster serve` in a session of
// its own (it outlives this command) and waits until the node is ready.
func clusterUp(ctx context.Context, path string, timeout time.Duration) error {
	// The flags first: nothing starts on a wait that cannot succeed.
	if timeout <= 0 {
		return badInput(fmt.Errorf("--timeout %s must be more than 0: it is how long to wait for the node, image builds included; write e.g. --timeout 15m", timeout))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return badInput(err)
	}
	if _, err := checkNode(abs); err != nil {
		return badInput(err)
	}
	state := tier.StateDir()
	if err := os.MkdirAll(filepath.Join(state, "cluster"), 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(state, "cluster", "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	exe, _ := os.Executable()
	serve := exec.Command(exe, "cluster", "serve", abs)
	serve.Stdout, serve.Stderr = logf, logf
	proc.OwnSession(serve)
	start := time.Now()
	if err := serve.Start(); err != nil {
		return fmt.Errorf("start the node: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- serve.Wait() }()
	fmt.Printf("starting a node (log: %s)\n", logPath)
	deadline := time.After(timeout)
	for {
		select {
		case err := <-ended:
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("the node did not start (%v):\n%s", err, tail(string(b), 15))
		case <-ctx.Done():
			_ = serve.Process.Signal(syscall.SIGTERM)
			<-ended
			return &exitError{code: exitInterrupt, err: errors.New("interrupted: the node was stopped and undone")}
		case <-deadline:
			_ = serve.Process.Signal(syscall.SIGTERM)
			<-ended
			return fmt.Errorf("the node was not ready after %s; it was stopped and undone (see %s)", timeout, logPath)
		case <-time.After(500 * time.Millisecond):
		}
		info, ok := node.Running()
		if !ok || info.PID != serve.Process.Pid {
			continue
		}
		_ = serve.Process.Release()
		printNode(info, time.Since(start))
		return nil
	}
}

func printNode(info node.Info, took time.Duration) {
	fmt.Printf("node %s ready in %s (node address %s)\n", node.NodeName, took.Round(100*time.Millisecond), info.NodeIP)
	fmt.Printf("kubeconfig: %s\n", info.Kubeconfig)
	fmt.Println("storage classes:")
	for _, c := range info.Classes {
		label := "durable"
		if !c.Durable {
			label = "not durable"
		}
		fmt.Printf("  %s: %s (%s)\n", c.Name, c.Path, label)
	}
	fmt.Println("images (imagePullPolicy IfNotPresent finds them; nothing is pulled):")
	for name, ref := range info.Images {
		fmt.Printf("  %s: %s\n", name, ref)
	}
	fmt.Printf("in a study: platform: {kubernetes: {kubeconfig: %s, image: %s, engine_image: <the engine's above>}}\n", info.Kubeconfig, info.Images["tierbench"])
	fmt.Println("stop it with: tierbench cluster down")
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
