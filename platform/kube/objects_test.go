package kube_test

import (
	"bufio"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ignite"
	"github.com/tierbench/tierbench/engine/postgres"
	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/platform/kube/kubetest"
)

// runSpec is a postgres run with its data and WAL on two classes.
func runSpec(t *testing.T) kube.RunSpec {
	t.Helper()
	ctr, err := postgres.Engine{}.Container(engine.ContainerConfig{Durability: engine.Async, Options: postgres.Engine{}.Spec().MustResolveOptions(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return kube.RunSpec{Study: "20261122-120000-abcdef", Run: "20261122-120000-abcdef-001", Namespace: "bench",
		Engine: "postgres", Server: ctr, Image: "registry.example/tierbench:1",
		Claims: []kube.Claim{
			{Component: "data", Tier: "ssd", Class: "local-ssd", Size: 2 << 30},
			{Component: "wal", Tier: "pmem", Class: "local-pmem", Size: 1 << 30},
		},
		Drive: []string{"--workload", "tpcb", "--clients", "8"}}
}

// startCluster starts a control plane with the nodes, namespace bench,
// classes local-ssd and local-pmem with `volumes` volumes each, and a
// driver log of an empty run, and connects to it.
func startCluster(t *testing.T, volumes int, nodes ...string) *kube.Cluster {
	t.Helper()
	cp := kubetest.Start(t)
	cp.Nodes(t, nodes...)
	cp.Namespace(t, "bench")
	cp.Classes(t, volumes, "local-ssd", "local-pmem")
	cp.WritePodLog(t, []string{`{"type":"ready"}`, `{"type":"done"}`})
	c, err := kube.Connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunObjects makes a run's objects on a control plane with a
// scheduler, a controller manager and a kwok node: claims of the right
// classes bound, the engine's pod with each component mounted where the
// image expects it, scheduled and ready, the Job's pod made and its log
// read through the API, every object labelled and owned by the run's
// anchor, and all of them gone after Remove.
func TestRunObjects(t *testing.T) {
	t.Parallel() // on a control plane of its own, waited on more than computed
	c := startCluster(t, 1, "node-1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	spec := runSpec(t)
	anchor := spec.Anchor()
	uid, err := c.Create(ctx, spec.Namespace, anchor, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range spec.Objects("s3cret") {
		kube.SetOwner(o, anchor, uid)
		if _, err := c.Create(ctx, spec.Namespace, o, false); err != nil {
			t.Fatal(err)
		}
	}

	found, err := c.List(ctx, spec.Namespace, spec.Selector())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found {
		names = append(names, f.String())
	}
	for _, want := range []string{"Job/tb-" + spec.Run + "-driver", "Pod/tb-" + spec.Run + "-engine", "Service/tb-" + spec.Run + "-engine",
		"NetworkPolicy/tb-" + spec.Run + "-engine", "PersistentVolumeClaim/tb-" + spec.Run + "-data",
		"PersistentVolumeClaim/tb-" + spec.Run + "-wal", "Secret/tb-" + spec.Run + "-secret", "ConfigMap/tb-" + spec.Run} {
		if !slices.Contains(names, want) {
			t.Errorf("the run's objects lack %s: %v", want, names)
		}
	}
	for _, f := range found {
		var o struct {
			Metadata struct {
				Labels          map[string]string
				OwnerReferences []struct{ Kind, Name, UID string }
			}
		}
		if err := c.Get(ctx, spec.Namespace, f.Kind, f.Name, &o); err != nil {
			t.Fatal(err)
		}
		if o.Metadata.Labels[kube.LabelRun] != spec.Run || o.Metadata.Labels[kube.LabelStudy] != spec.Study {
			t.Errorf("%s: labels %v", f, o.Metadata.Labels)
		}
		owned := len(o.Metadata.OwnerReferences) == 1 && o.Metadata.OwnerReferences[0].UID == uid
		if f.Kind != "ConfigMap" && !owned && !strings.HasPrefix(f.Name, spec.DriverJob()+"-") {
			t.Errorf("%s: owners %v, want the run's ConfigMap", f, o.Metadata.OwnerReferences)
		}
	}
	for comp, class := range map[string]string{"data": "local-ssd", "wal": "local-pmem"} {
		var pvc struct {
			Spec struct{ StorageClassName string }
		}
		if err := c.Get(ctx, spec.Namespace, "PersistentVolumeClaim", "tb-"+spec.Run+"-"+comp, &pvc); err != nil {
			t.Fatal(err)
		}
		if pvc.Spec.StorageClassName != class {
			t.Errorf("claim of %s: class %q, want %s", comp, pvc.Spec.StorageClassName, class)
		}
	}
	var pod struct {
		Spec struct {
			Containers []struct {
				Args         []string
				VolumeMounts []struct{ Name, MountPath string }
			}
		}
	}
	if err := c.Get(ctx, spec.Namespace, "Pod", spec.EnginePods()[0], &pod); err != nil {
		t.Fatal(err)
	}
	mounts := map[string]string{}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["data"] != "/var/lib/postgresql/data" || mounts["wal"] != "/var/lib/postgresql/wal" {
		t.Errorf("engine mounts %v", mounts)
	}
	if args := strings.Join(pod.Spec.Containers[0].Args, " "); !strings.Contains(args, "synchronous_commit=off") {
		t.Errorf("engine args %q lack the durability's setting", args)
	}

	node, err := c.WaitReady(ctx, spec.Namespace, spec.EnginePods()[0], 2*time.Minute)
	if err != nil || node != "node-1" {
		t.Fatalf("engine pod ready on %q: %v", node, err)
	}
	driverPod, err := c.PodOf(ctx, spec.Namespace, spec.Selector()+","+kube.LabelRole+"="+kube.RoleDriver, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if node, err := c.WaitStarted(ctx, spec.Namespace, driverPod, time.Minute); err != nil || node != "node-1" {
		t.Fatalf("driver pod started on %q: %v", node, err)
	}
	log, err := c.Logs(ctx, spec.Namespace, driverPod, "drive")
	if err != nil {
		t.Fatal(err)
	}
	// The log is followed: it ends with the container, which kwok never
	// ends, so read up to the run's last line.
	var lines []string
	for sc := bufio.NewScanner(log); !slices.Contains(lines, `{"type":"done"}`) && sc.Scan(); {
		lines = append(lines, sc.Text())
	}
	log.Close()
	if !slices.Equal(lines, []string{`{"type":"ready"}`, `{"type":"done"}`}) {
		t.Errorf("the driver's log through the API: %q", lines)
	}

	if err := c.Remove(context.Background(), spec.Namespace, spec.Selector()); err != nil {
		t.Fatal(err)
	}
	if left, err := c.List(ctx, spec.Namespace, spec.Selector()); err != nil || len(left) > 0 {
		t.Errorf("after Remove: %v %v", left, err)
	}
}

// folded are components an engine does not mount (ENGINE/COMPONENT: when
// they share a tier with another, Ignite's WAL archive on wal's tier being
// wal's folder; ENGINE/MODE/COMPONENT: in that mode, Ignite's WAL in memory).
var folded = map[string]bool{"ignite/wal_archive": true, "ignite/memory/wal": true}

// TestEngineObjects has the API server check (server-side dry run) the
// objects of a run of every engine that can run on a cluster, in every
// durability mode it has: what the adapter makes is a valid pod.
func TestEngineObjects(t *testing.T) {
	t.Parallel() // on a control plane of its own, waited on more than computed
	cp := kubetest.Start(t)
	cp.Namespace(t, "bench")
	c, err := kube.Connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.Default()
	var tested []string
	for _, name := range cat.EngineNames() {
		eng, _ := cat.Engine(name)
		cz, ok := eng.(engine.Containerizer)
		spec := eng.Spec()
		if !ok || spec.Image == "" { // no image: validate refuses it on a cluster
			continue
		}
		tested = append(tested, name)
		for _, mode := range spec.Modes {
			cfg := engine.ContainerConfig{Durability: mode.Durability, Options: spec.MustResolveOptions(nil), Placement: map[string]string{}, Name: "tb-s-001-engine"}
			for _, comp := range spec.ComponentNames() {
				cfg.Placement[comp] = "ssd"
			}
			ctr, err := cz.Container(cfg)
			if err != nil {
				t.Errorf("%s %s: %v", name, mode.Durability, err)
				continue
			}
			if ctr.Image != spec.Image || len(ctr.Mounts) == 0 || ctr.User == 0 {
				t.Errorf("%s %s: image %q, mounts %v, uid %d; want the spec's image, components mounted, not root",
					name, mode.Durability, ctr.Image, ctr.Mounts, ctr.User)
			}
			ctr.MemoryLimit = 256 << 20 // the run setting memory: the container's request and limit
			rs := kube.RunSpec{Study: "s", Run: "s-001", Namespace: "bench", Engine: name, Server: ctr, Image: "tierbench:1"}
			for _, comp := range spec.ComponentNames() {
				if _, ok := ctr.Mounts[comp]; ok {
					rs.Claims = append(rs.Claims, kube.Claim{Component: comp, Class: "local-ssd", Size: 1 << 30})
				} else if !folded[name+"/"+comp] && !folded[name+"/"+string(mode.Durability)+"/"+comp] {
					t.Errorf("%s %s: component %s is not mounted", name, mode.Durability, comp)
				}
			}
			if cc, ok := eng.(engine.ClientContainerizer); ok {
				client, err := cc.ClientContainer(cfg, engine.ClientRun{Work: engine.CacheWork{Mix: engine.CachePuts, Keys: 1000, ValueSize: 100},
					Preload: 1000, Clients: 4, Warmup: time.Second, Duration: 10 * time.Second})
				if err != nil {
					t.Errorf("%s %s client: %v", name, mode.Durability, err)
					continue
				}
				rs.Client = &client
			}
			limited := false
			for _, o := range append([]kube.Object{rs.Anchor()}, rs.Objects("pw")...) {
				if _, err := c.Create(context.Background(), "bench", o, true); err != nil {
					t.Errorf("%s %s: %s: %v", name, mode.Durability, o.Kind(), err)
				}
				b, _ := json.Marshal(o)
				limited = limited || strings.Contains(string(b), `"limits":{"memory":"268435456"}`)
			}
			if !limited {
				t.Errorf("%s %s: no object limits the engine's memory to option memory's 256MiB", name, mode.Durability)
			}
		}
	}
	for _, want := range []string{"postgres", "redis", "mariadb", "ignite", "opensearch"} {
		if !slices.Contains(tested, want) {
			t.Errorf("engines in containers: %v, want %s among them", tested, want)
		}
	}
}

// TestClusterEngineObjects makes the objects of an Ignite run (three
// nodes) on a control plane with three kwok nodes: the StatefulSet's pods
// are ready on three different nodes, each with claims of its own from
// the tiers' classes, the nodes reach each other by name under a headless
// Service, the load generator runs the engine's client with the launcher
// mounted, and everything, the StatefulSet's claims too, is gone after
// Remove.
func TestClusterEngineObjects(t *testing.T) {
	t.Parallel() // on a control plane of its own, waited on more than computed
	c := startCluster(t, 3, "node-1", "node-2", "node-3")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	spec := kube.RunSpec{Study: "20261122-120000-abcdef", Run: "20261122-120000-abcdef-002", Namespace: "bench", Engine: "ignite"}
	cfg := engine.ContainerConfig{Durability: engine.Sync, Name: spec.EngineService(), Options: ignite.Engine{}.Spec().MustResolveOptions(nil),
		Placement: map[string]string{ignite.Persistence: "ssd", ignite.WAL: "pmem", ignite.WALArchive: "pmem"}}
	server, err := ignite.Engine{}.Container(cfg)
	if err != nil {
		t.Fatal(err)
	}
	spec.Server = server
	client, err := ignite.Engine{}.ClientContainer(cfg, engine.ClientRun{Work: engine.CacheWork{Mix: engine.CachePuts, Keys: 100, ValueSize: 10},
		Preload: 100, Clients: 2, Warmup: time.Second, Duration: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	spec.Client = &client
	spec.Claims = []kube.Claim{
		{Component: ignite.Persistence, Tier: "ssd", Class: "local-ssd", Size: 1 << 30},
		{Component: ignite.WAL, Tier: "pmem", Class: "local-pmem", Size: 1 << 30},
	}
	if _, archived := spec.Server.Mounts[ignite.WALArchive]; archived {
		t.Errorf("the WAL archive on wal's tier has a mount of its own: %v", spec.Server.Mounts)
	}
	anchor := spec.Anchor()
	uid, err := c.Create(ctx, spec.Namespace, anchor, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range spec.Objects("unused") {
		kube.SetOwner(o, anchor, uid)
		if _, err := c.Create(ctx, spec.Namespace, o, false); err != nil {
			t.Fatal(err)
		}
	}

	pods := spec.EnginePods()
	nodes := map[string]bool{}
	for _, pod := range pods {
		node, err := c.WaitReady(ctx, spec.Namespace, pod, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		nodes[node] = true
	}
	if len(pods) != 3 || len(nodes) != 3 {
		t.Errorf("engine pods %v on nodes %v, want three pods on three nodes", pods, nodes)
	}
	for _, comp := range []string{ignite.Persistence, ignite.WAL} {
		for _, name := range spec.ClaimNames(comp) {
			var pvc struct {
				Metadata struct{ Labels map[string]string }
				Spec     struct{ StorageClassName string }
				Status   struct{ Phase string }
			}
			if err := c.Get(ctx, spec.Namespace, "PersistentVolumeClaim", name, &pvc); err != nil {
				t.Fatal(err)
			}
			if pvc.Status.Phase != "Bound" || pvc.Metadata.Labels[kube.LabelRun] != spec.Run {
				t.Errorf("claim %s: phase %s, labels %v", name, pvc.Status.Phase, pvc.Metadata.Labels)
			}
		}
	}
	var pod struct {
		Spec struct {
			Containers []struct {
				Args         []string
				VolumeMounts []struct{ Name, MountPath string }
			}
		}
	}
	if err := c.Get(ctx, spec.Namespace, "Pod", pods[1], &pod); err != nil {
		t.Fatal(err)
	}
	args := strings.Join(pod.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--consistent-id=$(POD_NAME)", "--wal-mode=FSYNC", "--wal-path=/var/lib/ignite/wal",
		"--wal-archive-path=/var/lib/ignite/wal ", spec.EngineService() + "-2." + spec.EngineService() + ":47500"} {
		if !strings.Contains(args, want) {
			t.Errorf("engine args %q lack %q", args, want)
		}
	}
	var svc struct {
		Spec struct {
			ClusterIP                string
			PublishNotReadyAddresses bool
		}
	}
	if err := c.Get(ctx, spec.Namespace, "Service", spec.EngineService(), &svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != "None" || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("engine Service %+v, want headless with not-ready addresses", svc.Spec)
	}

	driverPod, err := c.PodOf(ctx, spec.Namespace, spec.Selector()+","+kube.LabelRole+"="+kube.RoleDriver, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var dp struct {
		Spec struct {
			Containers []struct {
				Image        string
				Command      []string
				VolumeMounts []struct{ Name, MountPath string }
			}
		}
	}
	if err := c.Get(ctx, spec.Namespace, "Pod", driverPod, &dp); err != nil {
		t.Fatal(err)
	}
	if ctr := dp.Spec.Containers[0]; ctr.Image != ignite.Image || !slices.Equal(ctr.Command, []string{"java"}) ||
		!slices.ContainsFunc(ctr.VolumeMounts, func(m struct{ Name, MountPath string }) bool { return m.MountPath == "/opt/tierbench" }) {
		t.Errorf("load generator container %+v, want the image's java with the launcher mounted", ctr)
	}
	if err := c.Down(ctx, spec.Namespace, pods); err != nil {
		t.Error(err)
	}

	if err := c.Remove(context.Background(), spec.Namespace, spec.Selector()); err != nil {
		t.Fatal(err)
	}
	if left, err := c.List(ctx, spec.Namespace, spec.Selector()); err != nil || len(left) > 0 {
		t.Errorf("after Remove: %v %v", left, err)
	}
}
