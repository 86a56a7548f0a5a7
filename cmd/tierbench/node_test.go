package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/platform/kube/node"
	"github.com/tierbench/tierbench/testenv"
)

// nodeStudy is what cluster up takes: a local study whose tiers become
// the node's storage classes.
const nodeStudy = `name: node
engine: postgres
tiers:
  fast: {tmpfs: {size: 1GiB}}
  slow: {loop: {size: 1GiB, fs: ext4}}
placements:
  all-slow: {data: slow, wal: slow}
baseline: all-slow
durability: [sync]
workload: {name: ycsb-a, records: 1000}
clients: [2]
duration: 1s
`

// podStudy runs on the node: engine %s with the placements given, in
// the images cluster up built from Debian's packages.
const podStudy = `name: real-pods
engine: %s
platform: {kubernetes: {kubeconfig: %s, image: %s, engine_image: %s, volume_size: 256MiB}}
tiers:
  fast: {storage_class: fast}
  slow: {storage_class: slow}
placements:
%s
baseline: all-slow
durability: [sync]
workload: %s
clients: [2]
warmup: 1s
duration: %s
`

// labStudy runs on the node without naming an image: cluster up's.
const labStudy = `name: lab-images
engine: %s
platform: {kubernetes: {kubeconfig: %s, volume_size: 256MiB}}
tiers:
  slow: {storage_class: slow}
placements:
%s
baseline: all-slow
durability: [sync]
workload: %s
clients: [2]
duration: %s
`

// ycsbSmall is the workload of the server engines' runs on the node.
const ycsbSmall = "{name: ycsb-a, records: 2000}"

// TestRealNode starts a node with cluster up and runs real pods on it:
// PostgreSQL (its WAL on a second class, long enough a window for the
// kubelet's CPU figures), MariaDB, Redis, Ignite (3 pods) and OpenSearch,
// each from an image made here from Debian's packages, driven by
// tierbench drive in an image of this build (Redis's study names no
// image: cluster up's are run); pods that cannot start (an image that
// cannot be pulled, an engine that exits at once), each run failed by
// name; render's objects applied and removed by their run label; then
// faults under a run: a kill -9 of tierbench then cleanup, the kubelet
// killed (the node goes down and is restarted under the run's objects),
// cluster serve killed. cluster down must then leave nothing: no
// process, mount, volume folder or ledger record.
func TestRealNode(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "a node needs root")
	}
	if _, err := os.Stat(filepath.Join(node.BinDir(), "kubelet")); err != nil {
		testenv.Skipf(t, "the kubelet is not built (%v): run make setup", err)
	}
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		testenv.Skip(t, "mmdebstrap is not installed: run make setup")
	}
	waitNoNode(t)
	dir := t.TempDir()
	// Should the test be stuck near the binary's -timeout, the watchdog
	// takes the node down (testenv.Main), as the cleanup would have.
	forget := testenv.OnTimeout("the node (tierbench cluster down)", func() {
		out, err := exec.Command(binary, "cluster", "down").CombinedOutput()
		fmt.Fprintf(os.Stderr, "cluster down: %v\n%s", err, out)
	})
	up := tierbench(t, "cluster", "up", writeStudy(t, dir, nodeStudy))
	t.Cleanup(func() { tierbench(t, "cluster", "down"); forget() })
	if up.code != 0 {
		t.Fatalf("cluster up: exit %d\n%s%s", up.code, up.stdout, up.stderr)
	}
	t.Logf("cluster up:\n%s", up.stdout)
	// A second node on the same machine is refused, naming the first.
	if r := tierbench(t, "cluster", "up", writeStudy(t, dir, nodeStudy)); r.code != exitBadInput || !strings.Contains(r.stderr, "already runs") {
		t.Errorf("a second cluster up: exit %d, want 2 naming the running node:\n%s", r.code, r.stderr)
	}
	kubeconfig := field(t, up.stdout, `kubeconfig: (\S+)`)
	image := field(t, up.stdout, `tierbench: (\S+)`)
	study := func(engine, placements, work, duration string) string {
		return writeStudy(t, dir, fmt.Sprintf(podStudy, engine, kubeconfig, image, field(t, up.stdout, engine+`: (\S+)`), placements, work, duration))
	}
	for _, tc := range []struct {
		engine, placements, work, duration string
		// kubelet: the window is long enough for the kubelet's figures;
		// lab: the study names no image, so cluster up's are run.
		kubelet, lab bool
	}{
		{"postgres", "  all-slow: {data: slow, wal: fast}", ycsbSmall, "8s", true, false},
		{"mariadb", "  all-slow: {data: slow, redo: fast}", ycsbSmall, "3s", false, false},
		{"redis", "  all-slow: {data: slow}", ycsbSmall, "2s", false, true},
		// A StatefulSet of 3 pods that find each other through the
		// node's DNS under the headless Service.
		{"ignite", "  all-slow: {persistence: slow, wal: fast}", "{name: puts, keys: 1000}", "3s", false, false},
		// The runner (OpenSearch from Maven Central) in its image.
		{"opensearch", "  all-slow: {data: slow, logs: fast}", "{name: ingest, bulk_size: 200}", "3s", false, false},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			results := filepath.Join(dir, "results-"+tc.engine)
			st := study(tc.engine, tc.placements, tc.work, tc.duration)
			if tc.lab {
				st = writeStudy(t, dir, fmt.Sprintf(labStudy, tc.engine, kubeconfig, tc.placements, tc.work, tc.duration))
			}
			r := tierbench(t, "run", st, "--results", results)
			if r.code != 0 || strings.Count(r.stderr, " ok: ") != 1 {
				t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			t.Logf("%s", grepLines(r.stderr, " ok: ", "bottleneck:"))
			var got showJSON
			r = tierbench(t, "show", "--results", results, "--format", "json")
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatalf("show json: %v\n%s%s", err, r.stdout, r.stderr)
			}
			for _, run := range got.Runs {
				if run.Status != "ok" || run.Ops == 0 || run.Throughput == 0 {
					t.Errorf("run %s: %s, %d ops, %.0f ops/s", run.ID, run.Status, run.Ops, run.Throughput)
				}
			}
			// A study on the node that names no image runs the ones
			// cluster up built.
			if tc.lab && !strings.Contains(r.stdout, field(t, up.stdout, tc.engine+`: (\S+)`)) {
				t.Errorf("the run does not name the image cluster up built for %s:\n%s", tc.engine, r.stdout)
			}
			// An 8 s window spans several refreshes of the kubelet's
			// figures (every 2 s on this node) between the run's first
			// reading and its last (every 5 s, and at the window's end):
			// the engine pod's CPU and memory, and its claims' use.
			if tc.kubelet {
				shown := tierbench(t, "show", "--results", results).stdout
				for _, want := range []string{"the engine's pod used", "working set up to", "claims used at the window's end (kubelet)"} {
					if !strings.Contains(shown, want) {
						t.Errorf("show says nothing of %q (the kubelet's summary):\n%s", want, shown)
					}
				}
			}
		})
	}
	// Pods that cannot start: each run fails by name with the kubelet's
	// reason and the fix, the study goes on, and nothing is left.
	for _, tc := range []struct{ name, image, want string }{
		{"unpullable image", "tierbench.local/nosuch:1", "cannot be pulled (ImagePullBackOff"},
		// tierbench's own image, asked to run redis: it exits 2, and the
		// engine's pod, which is not restarted, fails at once.
		{"engine exits", image, "ended before it was ready: phase Failed; on node tierbench-node; container redis ended with exit code 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := writeStudy(t, dir, fmt.Sprintf(podStudy, "redis", kubeconfig, image, tc.image, "  all-slow: {data: slow}", ycsbSmall, "2s"))
			results := filepath.Join(dir, "results-"+strings.ReplaceAll(tc.name, " ", "-"))
			r := tierbench(t, "run", st, "--results", results)
			if r.code != exitNothingMeasured || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("run: exit %d, want %d with %q:\n%s%s", r.code, exitNothingMeasured, tc.want, r.stdout, r.stderr)
			}
			t.Logf("%s", grepLines(r.stderr, "cannot start"))
			if o, _ := kubectl(t, kubeconfig, "get", runKinds, "-l", "app.kubernetes.io/managed-by=tierbench", "-o", "name"); strings.TrimSpace(o) != "" {
				t.Errorf("left after the failed run:\n%s", o)
			}
		})
	}
	t.Run("render", func(t *testing.T) {
		renderOnNode(t, dir, kubeconfig, study("postgres", "  all-slow: {data: slow, wal: fast}", ycsbSmall, "2s"))
	})
	t.Run("kill9", func(t *testing.T) {
		kill9OnNode(t, dir, kubeconfig, study("postgres", "  all-slow: {data: slow, wal: fast}", ycsbSmall, "30s"))
	})

	// The kubelet killed under a run: cluster serve, which watches the
	// node's processes, takes the node down, so the run fails by name at
	// once, its objects left on the node that went; cluster down and up
	// give a fresh node, and cleanup forgets those objects.
	t.Run("kubelet killed", func(t *testing.T) {
		st := study("postgres", "  all-slow: {data: slow, wal: fast}", ycsbSmall, "30s")
		runKillingUnder(t, exec.Command(binary, "run", st, "--results", filepath.Join(dir, "results-kubelet")), func() error {
			out, err := exec.Command("pkill", "-KILL", "-f", filepath.Join(node.BinDir(), "kubelet")).CombinedOutput()
			if err != nil {
				return fmt.Errorf("pkill kubelet: %v: %s", err, out)
			}
			return nil
		})
		r := tierbench(t, "cluster", "down")
		if r.code != 0 {
			t.Errorf("cluster down after the kubelet's kill: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := tierbench(t, "cluster", "up", writeStudy(t, dir, nodeStudy)); r.code != 0 {
			t.Fatalf("cluster up again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		// The run could not delete its objects from the node that went
		// down; cleanup forgets them on the restarted one.
		r = tierbench(t, "cleanup")
		if r.code != 0 || !strings.Contains(r.stdout, "undone: Kubernetes objects tierbench.io/run=") {
			t.Errorf("cleanup after the node's restart: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if o, _ := kubectl(t, kubeconfig, "get", runKinds, "-l", "app.kubernetes.io/managed-by=tierbench", "-o", "name"); strings.TrimSpace(o) != "" {
			t.Errorf("left after cleanup:\n%s", o)
		}
	})
	// Last, the node's own process killed under a run: cluster serve dies
	// by SIGKILL while a run's pods run. The node's processes outlive it
	// (the kubelet, containerd and the pods are not its children's group),
	// so the run ends as it would have; cluster down then undoes the node
	// it left.
	t.Run("serve killed", func(t *testing.T) {
		serveKilledOnNode(t, dir, study("postgres", "  all-slow: {data: slow, wal: fast}", ycsbSmall, "5s"))
	})
	if _, ok := node.Running(); ok {
		down := tierbench(t, "cluster", "down")
		if down.code != 0 || !strings.Contains(down.stdout, "undone") {
			t.Fatalf("cluster down: exit %d\n%s%s", down.code, down.stdout, down.stderr)
		}
		t.Logf("cluster down: %s", down.stdout)
	}
	if r := tierbench(t, "cleanup"); !strings.Contains(r.stdout, "nothing to clean up") {
		t.Errorf("the ledger kept something after cluster down:\n%s", r.stdout)
	}
	// The node's programs by the node's folder, which every one of them
	// names (the test's own command line names subtests such as
	// kubelet_killed, and other packages' tests may run control planes
	// from the same binaries meanwhile).
	pattern := "tierbench-containerd|containerd-shim|" + filepath.Join(os.Getenv("TIERBENCH_STATE_DIR"), "cluster", "node")
	if out, _ := exec.Command("pgrep", "-af", pattern).Output(); len(out) > 0 {
		t.Errorf("processes left after cluster down:\n%s", out)
	}
	if r := tierbench(t, "cluster", "down"); r.code != 0 || !strings.Contains(r.stdout, "no node runs") {
		t.Errorf("a second cluster down: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// waitNoNode waits (up to 10 minutes) until no node runs on the machine:
// one node per machine, and another test binary may hold it.
func waitNoNode(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	if d, ok := testenv.Deadline(t); ok && d.Before(deadline) {
		deadline = d
	}
	for {
		info, ok := node.Running()
		if !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a node (pid %d) still runs on this machine after 10 minutes, or at the test's deadline", info.PID)
		}
		time.Sleep(2 * time.Second)
	}
}

// kubectl runs the node's kubectl.
func kubectl(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(filepath.Join(node.BinDir(), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// runKinds are the kinds of a run's objects, for kubectl.
const runKinds = "jobs,pods,services,networkpolicies,persistentvolumeclaims,secrets,configmaps"

// renderOnNode applies render's objects of one run with kubectl, waits
// for its load generator to complete against its engine, and deletes
// them by their run label.
func renderOnNode(t *testing.T, dir, kubeconfig, st string) {
	out := filepath.Join(dir, "manifests")
	if r := tierbench(t, "render", st, "--platform", "kubernetes", "--out", out); r.code != 0 {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "run-*.yaml"))
	if len(files) != 1 {
		t.Fatalf("render wrote %v", files)
	}
	text, _ := os.ReadFile(files[0])
	run := field(t, string(text), `tierbench.io/run: "?([^"\s]+)`)
	if o, err := kubectl(t, kubeconfig, "apply", "-f", files[0]); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, o)
	}
	if o, err := kubectl(t, kubeconfig, "wait", "--for=condition=complete", "job", "-l", "tierbench.io/run="+run, "--timeout=3m"); err != nil {
		logs, _ := kubectl(t, kubeconfig, "logs", "-l", "tierbench.io/run="+run+",tierbench.io/role=driver", "--tail=20")
		t.Errorf("the rendered load generator did not complete: %v\n%s\n%s", err, o, logs)
	}
	if o, err := kubectl(t, kubeconfig, "delete", runKinds, "-l", "tierbench.io/run="+run, "--wait=true", "--timeout=2m"); err != nil {
		t.Fatalf("kubectl delete: %v\n%s", err, o)
	}
	if o, _ := kubectl(t, kubeconfig, "get", runKinds, "-l", "tierbench.io/run="+run, "-o", "name"); strings.TrimSpace(o) != "" {
		t.Errorf("left after deleting by the run label:\n%s", o)
	}
}

// kill9OnNode kills tierbench with SIGKILL while a run's pods run on the
// node; cleanup must then leave no object, pod or claim of it, and its
// volumes must become available again.
func kill9OnNode(t *testing.T, dir, kubeconfig, st string) {
	killRunWhenMeasuring(t, exec.Command(binary, "run", st, "--results", filepath.Join(dir, "results-kill9")))
	r := tierbench(t, "cleanup")
	if r.code != 0 || !strings.Contains(r.stdout, "undone: Kubernetes objects tierbench.io/run=") {
		t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if o, _ := kubectl(t, kubeconfig, "get", runKinds, "-l", "app.kubernetes.io/managed-by=tierbench", "-o", "name"); strings.TrimSpace(o) != "" {
		t.Errorf("left after cleanup:\n%s", o)
	}
	// The node gives the run's volumes back (released, emptied, available).
	deadline := time.Now().Add(time.Minute)
	for {
		o, _ := kubectl(t, kubeconfig, "get", "pv", "-o", "jsonpath={.items[*].status.phase}")
		if !strings.Contains(o, "Released") && !strings.Contains(o, "Bound") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("volumes not available again a minute after cleanup: %s", o)
			break
		}
		time.Sleep(time.Second)
	}
}

// serveKilledOnNode kills cluster serve with SIGKILL while a run's pods
// run on the node; the run must end, and cluster down undo the node.
func serveKilledOnNode(t *testing.T, dir, st string) {
	runKillingUnder(t, exec.Command(binary, "run", st, "--results", filepath.Join(dir, "results-serve-killed")), func() error {
		info, ok := node.Running()
		if !ok {
			return errors.New("no node runs")
		}
		return syscall.Kill(info.PID, syscall.SIGKILL)
	})
	r := tierbench(t, "cluster", "down")
	if r.code != 0 || !strings.Contains(r.stdout, "single-node Kubernetes cluster") || !strings.Contains(r.stdout, "the node's process was gone") {
		t.Errorf("cluster down after the node's kill: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("cluster down: %s", r.stdout)
}

// runKillingUnder starts a run, kills part of the node with kill once the
// run measures, and checks the run then ends within 5 minutes, measured
// (exit 0, ok) or failed by name (exit 1 or 3, FAILED), never hanging.
func runKillingUnder(t *testing.T, cmd *exec.Cmd, kill func() error) {
	t.Helper()
	errb, ended := startRun(t, cmd)
	if err := kill(); err != nil {
		cmd.Process.Kill()
		<-ended
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-ended:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-ended
		t.Fatalf("the run still waited 5 minutes after the kill:\n%s", errb.String())
	}
	code := cmd.ProcessState.ExitCode()
	failed := (code == exitRunsFailed || code == exitNothingMeasured) && strings.Contains(errb.String(), "FAILED")
	if !(code == 0 && strings.Contains(errb.String(), " ok: ")) && !failed {
		t.Errorf("run: exit %d, want 0 with the run ok, or %d or %d with it FAILED by name:\n%s", code, exitRunsFailed, exitNothingMeasured, errb.String())
	}
	t.Logf("run after the kill: exit %d %s later: %s", code, time.Since(start).Round(time.Second), grepLines(errb.String(), " ok: ", "FAILED"))
}

// killRunWhenMeasuring kills a run's tierbench with SIGKILL once it
// measures, leaving its objects on the cluster.
func killRunWhenMeasuring(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	_, ended := startRun(t, cmd)
	cmd.Process.Kill()
	<-ended
}

// startRun starts cmd and waits until its run measures; ended says when
// it exits.
func startRun(t *testing.T, cmd *exec.Cmd) (*syncBuffer, chan error) {
	t.Helper()
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(errb.String(), "measured") {
		select {
		case <-ended:
			t.Fatalf("the run ended before it measured:\n%s", errb.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-ended
			t.Fatalf("the run never measured:\n%s", errb.String())
		}
	}
	return errb, ended
}

// syncBuffer is a strings.Builder a command writes while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// grepLines are text's lines that contain any of subs.
func grepLines(text string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// field is the first group of re in text.
func field(t *testing.T, text, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, text)
	}
	return m[1]
}

// TestClusterUpRefuses checks what cluster up refuses before it starts
// anything: exit 2 with the fix, and no folder of a node written.
func TestClusterUpRefuses(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "the cases run as root and as another user")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	local := writeStudy(t, dir, nodeStudy)
	onCluster := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(onCluster, []byte(fmt.Sprintf(podStudy, "postgres", "/nonexistent/kubeconfig", "tierbench.local/tierbench:1", "tierbench.local/postgres:15", "  all-slow: {data: slow, wal: slow}", ycsbSmall, "1s")), 0o644); err != nil {
		t.Fatal(err)
	}
	// A target study's tiers are the folders of the user's own server.
	serverDir := filepath.Join(dir, "server-data")
	if err := os.Mkdir(serverDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ofTarget := filepath.Join(dir, "target.yaml")
	if err := os.WriteFile(ofTarget, []byte(fmt.Sprintf(`name: mine
engine: postgres
target: postgres://bench@127.0.0.1:1/db
tiers: {ssd: {path: %s}}
placements: {on-ssd: {data: ssd, wal: ssd}}
workload: {name: tpcb}
clients: [1]
duration: 1s
`, serverDir)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A tierbench built with cgo: the node's images could not run it.
	if _, err := exec.LookPath("gcc"); err != nil {
		testenv.Skip(t, "gcc is not installed (a cgo build of tierbench needs it): run make setup")
	}
	dynamic := filepath.Join(dir, "tierbench-dynamic")
	cmd := exec.Command("go", "build", "-o", dynamic, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a cgo build of tierbench: %v\n%s", err, out)
	}
	state := filepath.Join(dir, "state")
	for _, tc := range []struct {
		name string
		cmd  []string
		env  []string
		want string
	}{
		{"a dynamically linked tierbench", []string{dynamic, "cluster", "up", local}, nil, "is dynamically linked, and the node's images hold tierbench alone"},
		{"not root", []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary, "cluster", "up", local}, nil, "needs root"},
		{"missing packages", []string{binary, "cluster", "up", local}, []string{"PATH=/nonexistent"}, "apt-get install containerd runc"},
		{"a cluster study", []string{binary, "cluster", "up", onCluster}, nil, "takes a study whose tiers: are on this machine"},
		{"a target study", []string{binary, "cluster", "up", ofTarget}, nil, "measures a target server (target:), whose tiers are your server's folders, which tierbench never writes"},
		{"a target study, without the node's packages", []string{binary, "cluster", "up", ofTarget}, []string{"PATH=/nonexistent"}, "measures a target server"},
		{"a timeout of 0s, as another user", []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary, "cluster", "up", "--timeout", "0s", local}, nil, "--timeout 0s must be more than 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBinary(t, tc.cmd[0], dir, append([]string{"TIERBENCH_STATE_DIR=" + state}, tc.env...), tc.cmd[1:]...)
			if r.code != exitBadInput || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("exit %d, want 2 and one line naming %q:\n%s%s", r.code, tc.want, r.stdout, r.stderr)
			}
			if _, err := os.Stat(state); err == nil {
				t.Errorf("%s was written", state)
			}
			if left, _ := os.ReadDir(serverDir); len(left) > 0 {
				t.Errorf("the target's folder %s was written: %v", serverDir, left)
			}
		})
	}
}
