package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/platform/kube/kubetest"
)

const kubeStudy = `name: kube
engine: postgres
platform: {kubernetes: {kubeconfig: %s, namespace: %s, image: registry.example/tierbench:1}}
tiers:
  ssd: {storage_class: local-ssd}
  pmem: {storage_class: %s}
placements:
  all-ssd: {data: ssd, wal: ssd}
  wal-pmem: {data: ssd, wal: pmem}
baseline: all-ssd
durability: [sync]
workload: {name: tpcb, scale: 1}
clients: [2]
warmup: 200ms
duration: 1s
`

// TestKubernetesStudy runs a study on a real control plane whose pods kwok
// reports running (nothing runs in them): validate and run refuse a
// missing storage class or namespace (exit 2, nothing written); a run
// creates its objects, waits for the engine's pod, and reads the load
// generator's pod log, which kwok serves from the output of a real
// tierbench drive against a real PostgreSQL server, into ok runs; and
// nothing of the study is left on the cluster or in the ledger after it.
// kwok serves no kubelet summary, so the runs record that their telemetry
// was unavailable.
func TestKubernetesStudy(t *testing.T) {
	tierbench, _ := ownState(t)
	cp := kubetest.Start(t)
	cp.Nodes(t, "node-1")
	cp.Namespace(t, "bench")
	cp.StorageClass(t, "local-ssd")
	cp.Volumes(t, "local-ssd", 3)
	cp.StorageClass(t, "local-pmem")
	cp.Volumes(t, "local-pmem", 1)
	dir := t.TempDir()

	for _, bad := range []struct{ ns, class, want string }{
		{"bench", "local-pmme", "tier pmem: local-pmme"},
		{"nobench", "local-pmem", `namespace "nobench" does not exist`},
	} {
		st := writeStudy(t, dir, fmt.Sprintf(kubeStudy, cp.Kubeconfig, bad.ns, bad.class))
		for _, cmd := range []string{"validate", "run"} {
			results := filepath.Join(dir, "results-"+cmd)
			args := []string{cmd, st}
			if cmd == "run" {
				args = append(args, "--results", results)
			}
			r := tierbench(t, args...)
			if r.code != exitBadInput || !strings.Contains(r.stderr, bad.want) {
				t.Errorf("%s: exit %d, want 2 naming %q:\n%s%s", cmd, r.code, bad.want, r.stdout, r.stderr)
			}
			if _, err := os.Stat(results); err == nil {
				t.Errorf("%s wrote %s", cmd, results)
			}
		}
	}

	target, password := drivePostgres(t)
	cp.WritePodLog(t, strings.Split(strings.TrimSpace(driveTPCB(t, target, password)), "\n"))
	st := writeStudy(t, dir, fmt.Sprintf(kubeStudy, cp.Kubeconfig, "bench", "local-pmem"))
	results := filepath.Join(dir, "results")
	if r := tierbench(t, "validate", st); r.code != 0 {
		t.Fatalf("validate: exit %d\n%s", r.code, r.stderr)
	}
	r := tierbench(t, "run", st, "--results", results)
	if r.code != 0 || strings.Count(r.stderr, " ok: ") != 2 {
		t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// kwok serves no kubelet summary: the record says so, and names no
	// bottleneck.
	if !strings.Contains(r.stderr, "bottleneck: unknown on a cluster") || !strings.Contains(r.stderr, "unavailable: the kubelet's summary of node node-1") {
		t.Errorf("the runs' bottleneck sentences do not say what a cluster's telemetry lacks:\n%s", r.stderr)
	}
	r = tierbench(t, "show", "--results", results, "--format", "json")
	var got showJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("show json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	for _, run := range got.Runs {
		if run.Status != "ok" || run.Ops == 0 || run.Throughput == 0 {
			t.Errorf("run %s: %s, %d ops, %.0f ops/s", run.ID, run.Status, run.Ops, run.Throughput)
		}
	}
	if r = tierbench(t, "show", "--results", results); !strings.Contains(r.stdout, `ran on kubernetes: context "test"`) {
		t.Errorf("show does not say where the study ran:\n%s", r.stdout)
	}
	noneLeft(t, cp, "after the study")
	if r = tierbench(t, "cleanup"); !strings.Contains(r.stdout, "nothing to clean up") {
		t.Errorf("the ledger kept something after the study:\n%s", r.stdout)
	}
}

const igniteKubeStudy = `name: ignite-kube
engine: ignite
platform: {kubernetes: {kubeconfig: %s, namespace: bench, image: registry.example/tierbench:1}}
tiers:
  ssd: {storage_class: local-ssd}
  pmem: {storage_class: local-pmem}
placements:
  wal-pmem: {persistence: ssd, wal: pmem}
baseline: wal-pmem
durability: [sync]
workload: {name: puts, keys: 1000}
clients: [2]
warmup: 200ms
duration: 1s
`

// TestKubernetesClusterEngine runs an Ignite study on a control plane with
// three kwok nodes: the run's StatefulSet puts a node on each, every node
// with claims of its own, and the record says where they ran. The load
// generator's log (kwok's) holds no run, so the run is failed with the
// stream's cause, and still nothing is left on the cluster. (The client's
// command line itself runs for real in engine/ignite's
// TestPodCommandLines.)
func TestKubernetesClusterEngine(t *testing.T) {
	tierbench, _ := ownState(t)
	cp := kubetest.Start(t)
	cp.Nodes(t, "node-1", "node-2", "node-3")
	cp.Namespace(t, "bench")
	cp.Classes(t, 3, "local-ssd", "local-pmem")
	cp.WritePodLog(t, []string{`{"type":"ready"}`})
	dir := t.TempDir()
	st := writeStudy(t, dir, fmt.Sprintf(igniteKubeStudy, cp.Kubeconfig))
	if r := tierbench(t, "validate", st); r.code != 0 {
		t.Fatalf("validate: exit %d\n%s", r.code, r.stderr)
	}
	results := filepath.Join(dir, "results")
	r := tierbench(t, "run", st, "--results", results)
	if r.code != exitNothingMeasured || !strings.Contains(r.stderr, "the engine's client in pod") || strings.Contains(r.stderr, "context canceled") {
		t.Fatalf("run: exit %d, want 3 (nothing measured) with the client's stream failed\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = tierbench(t, "show", "--results", results, "--format", "json")
	var got struct {
		Runs []struct {
			Status, Error string
			Caveats       []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Runs) != 1 {
		t.Fatalf("show json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	caveats := strings.Join(got.Runs[0].Caveats, "\n")
	for _, want := range []string{"(3 pods on 3 nodes)", "persistence on 3 claims", "of storage class local-ssd", "wal on 3 claims"} {
		if !strings.Contains(caveats, want) {
			t.Errorf("the run's caveats lack %q:\n%s", want, caveats)
		}
	}
	noneLeft(t, cp, "after the study")
}

// ownState runs a Kubernetes test in parallel with the others and gives
// it a tierbench whose state folder (its ledger, what cleanup undoes) is
// its own, as its control plane is: these tests wait on their control
// planes more than they compute, and one's cleanup must not see
// another's runs. The folder is under the test binary's, which TestMain
// removes.
func ownState(t *testing.T) (run func(t *testing.T, args ...string) result, env []string) {
	t.Parallel()
	env = []string{"TIERBENCH_STATE_DIR=" + filepath.Join(filepath.Dir(binary), "state-"+t.Name())}
	return func(t *testing.T, args ...string) result {
		t.Helper()
		return runBinary(t, binary, "", env, args...)
	}, env
}

// noneLeft fails t if any object tierbench made is on the cluster.
func noneLeft(t *testing.T, cp *kubetest.ControlPlane, when string) {
	t.Helper()
	c, err := kube.Connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	left, err := c.List(context.Background(), "bench", kube.LabelManagedBy+"=tierbench")
	if err != nil || len(left) > 0 {
		t.Errorf("%s: objects left on the cluster: %v %v", when, left, err)
	}
}

// TestKubernetesKill9 kills tierbench with -9 while a run's objects are on
// the cluster (its engine's pod waits for a volume that never comes), and
// `tierbench cleanup` removes them in one pass, by their labels.
func TestKubernetesKill9(t *testing.T) {
	tierbench, env := ownState(t)
	cp := kubetest.Start(t)
	cp.Nodes(t, "node-1")
	cp.Namespace(t, "bench")
	cp.StorageClass(t, "local-ssd")
	cp.StorageClass(t, "local-pmem") // no volumes: the claims wait
	dir := t.TempDir()
	st := writeStudy(t, dir, fmt.Sprintf(kubeStudy, cp.Kubeconfig, "bench", "local-pmem"))
	cmd := exec.Command(binary, "run", st, "--results", filepath.Join(dir, "results"))
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := kube.Connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		// The engine's pod waits for its claims (no volumes), so the
		// load generator's Job, made once the engine is ready, never is.
		left, _ := c.List(context.Background(), "bench", kube.LabelManagedBy+"=tierbench")
		if slices.ContainsFunc(left, func(f kube.Found) bool { return f.Kind == "Pod" }) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the run's objects never appeared: %v\n%s", left, errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	r := tierbench(t, "cleanup")
	if r.code != 0 || !strings.Contains(r.stdout, "undone: Kubernetes objects tierbench.io/run=") {
		t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	noneLeft(t, cp, "after cleanup")
	if r = tierbench(t, "cleanup"); !strings.Contains(r.stdout, "nothing to clean up") {
		t.Errorf("cleanup needed a second pass:\n%s", r.stdout)
	}
}

// TestRender writes a study's manifests and has the API server check
// every object with a server-side dry run; bad input writes nothing.
func TestRender(t *testing.T) {
	tierbench, _ := ownState(t)
	cp := kubetest.Start(t)
	cp.Namespace(t, "bench")
	dir := t.TempDir()
	st := writeStudy(t, dir, fmt.Sprintf(kubeStudy, cp.Kubeconfig, "bench", "local-pmem"))
	r := tierbench(t, "render", st, "--platform", "kubernetes")
	if r.code != 0 {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	c, err := kube.Connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(r.stdout))
	kinds := map[string]int{}
	for {
		var o map[string]any
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		obj := kube.Object(o)
		if _, err := c.Create(context.Background(), "bench", obj, true); err != nil {
			t.Errorf("dry run of %s %s: %v", obj.Kind(), obj.Name(), err)
		}
		kinds[obj.Kind()]++
	}
	want := map[string]int{"ConfigMap": 2, "Secret": 2, "PersistentVolumeClaim": 4, "Pod": 2, "Service": 2, "NetworkPolicy": 2, "Job": 2}
	if !maps.Equal(kinds, want) {
		t.Errorf("rendered %v, want %v", kinds, want)
	}
	noneLeft(t, cp, "after a dry run")

	out := filepath.Join(dir, "manifests")
	if r = tierbench(t, "render", st, "--platform", "kubernetes", "--out", out); r.code != 0 {
		t.Fatalf("render --out: exit %d\n%s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(out, "run-*.yaml"))
	if len(files) != 2 {
		t.Errorf("render --out wrote %v", files)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600 (it holds a password)", f, fi.Mode(), err)
		}
	}

	ldir := t.TempDir()
	local := writeStudy(t, ldir, fmt.Sprintf(tinyStudy, filepath.Join(ldir, "ram"), filepath.Join(ldir, "disk")))
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"render", st, "--platform", "local"}, "--platform"},
		{[]string{"render", local, "--platform", "kubernetes"}, "runs on this machine"},
		{[]string{"render", st, "--platform", "kubernetes", "--out", out}, "files in it"},
	} {
		r := tierbench(t, bad.args...)
		if r.code != exitBadInput || !strings.Contains(r.stderr, bad.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming %q", bad.args, r.code, r.stdout, r.stderr, bad.want)
		}
	}
}
