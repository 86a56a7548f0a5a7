package node

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestServeUndoes starts a node without images (no pod runs), checks it
// becomes Ready with its classes and volumes, and that stopping it puts
// the machine back: no process, mount, bridge, chain, cgroup, sysctl
// change or folder of it remains.
func TestServeUndoes(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "a node needs root")
	}
	if _, err := os.Stat(filepath.Join(BinDir(), "kubelet")); err != nil {
		testenv.Skipf(t, "the kubelet is not built (%v): run make setup", err)
	}
	if _, err := exec.LookPath("containerd"); err != nil {
		testenv.Skip(t, "containerd is not installed: run make setup")
	}
	state := t.TempDir()
	was := before(filepath.Join(state, "cluster", "node"), "/run/tierbench-containerd")
	// The node ends, and undoes itself, at the test's deadline, before
	// the binary's -timeout; stuck, the watchdog ends it (testenv.Main).
	ctx, cancel := context.WithCancel(testenv.Context(t))
	done := make(chan error, 1)
	served := make(chan struct{})
	var info Info
	readyc := make(chan struct{})
	go func() {
		done <- Serve(ctx, Spec{StateDir: state, BinDir: BinDir(), VolumesPerClass: 2,
			Tiers: []tier.Spec{{Name: "ram", Kind: tier.TmpfsSpec{Size: 64 << 20}}}},
			func(i Info) { info = i; close(readyc) })
		close(served)
	}()
	defer testenv.OnTimeout("the node", func() { cancel(); <-served })()
	select {
	case <-readyc:
	case err := <-done:
		t.Fatalf("node did not start: %v", err)
	case <-time.After(5 * time.Minute):
		cancel()
		t.Fatalf("node not ready after 5 minutes: %v", <-done)
	}
	if got, ok := Running(); !ok || got.PID != os.Getpid() {
		t.Errorf("Running = %+v, %v; want this process", got, ok)
	}
	if len(info.Classes) != 1 || info.Classes[0].Name != "ram" {
		t.Errorf("classes = %+v", info.Classes)
	}
	out, err := exec.Command(filepath.Join(BinDir(), "kubectl"), "--kubeconfig", info.Kubeconfig, "get", "pv,storageclass,nodes", "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl: %v: %s", err, out)
	}
	for _, want := range []string{"persistentvolume/ram-pv-0", "persistentvolume/ram-pv-1", "storageclass.storage.k8s.io/ram", "node/" + NodeName} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl get: no %s in\n%s", want, out)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	assertUndone(t, was, state)
}

// assertUndone checks that nothing of a node is left.
func assertUndone(t *testing.T, was record, state string) {
	t.Helper()
	if pids := nodeProcesses(was); len(pids) > 0 {
		t.Errorf("node processes left: %v", pids)
	}
	mounts, _ := tier.Mounts()
	for _, m := range mounts {
		if strings.HasPrefix(m.Point, state) || strings.HasPrefix(m.Point, "/run/tierbench-containerd") || strings.Contains(m.Point, "/netns/cni-") {
			t.Errorf("mount left: %s", m.Point)
		}
	}
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
		t.Errorf("bridge %s left", bridgeName)
	}
	now := before(was.Dir, was.Run)
	for name, v := range was.Sysctls {
		if now.Sysctls[name] != v {
			t.Errorf("sysctl %s = %s, was %s", name, now.Sysctls[name], v)
		}
	}
	for _, c := range now.Chains {
		if !slices.Contains(was.Chains, c) {
			t.Errorf("iptables chain left: %s", c)
		}
	}
	for _, tb := range now.NftTables {
		if !slices.Contains(was.NftTables, tb) && !strings.Contains(tb, "tierbench") {
			t.Errorf("nftables table left: %s", tb)
		}
	}
	if was.Cgroups && len(kubepods()) > 0 {
		t.Errorf("cgroups left: %v", kubepods())
	}
	for _, d := range append([]string{was.Dir, was.Run}, was.MadeDirs...) {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("folder left: %s", d)
		}
	}
	if l, err := tier.OpenLedger(state); err == nil {
		if rs, _ := l.All(); len(rs) > 0 {
			t.Errorf("ledger not empty: %v", rs)
		}
	}
}
