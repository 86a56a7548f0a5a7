package kube_test

import (
	"bufio"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/postgres"
	"github.com/tierbench/tierbench/platform/kube"
	"github.com/tierbench/tierbench/platform/kube/kubetest"
)

// runSpec is a postgres run with its data and WAL on two classes.
func runSpec(t *testing.T) kube.RunSpec {
	t.Helper()
	ctr, err := postgres.Engine{}.Container(engine.ContainerConfig{Durability: engine.Async})
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

// TestRunObjects makes a run's objects on a control plane with a
// scheduler, a controller manager and a kwok node: claims of the right
// classes bound, the engine's pod with each component mounted where the
// image expects it, scheduled and ready, the Job's pod made and its log
// read through the API, every object labelled and owned by the run's
// anchor, and all of them gone after Remove.
func TestRunObjects(t *testing.T) {
	cp := kubetest.Start(t)
	cp.Nodes(t, "node-1")
	cp.Namespace(t, "bench")
	for _, class := range []string{"local-ssd", "local-pmem"} {
		cp.StorageClass(t, class)
		cp.Volumes(t, class, 1)
	}
	cp.WritePodLog(t, []string{`{"type":"ready"}`, `{"type":"done"}`})
	c, err := kube.Connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
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

// folded are components an engine does not mount when they share a
// tier with another (Ignite's WAL archive on wal's tier is wal's folder).
var folded = map[string]bool{"ignite/wal_archive": true}

// TestEngineObjects has the API server check (server-side dry run) the
// objects of a run of every engine that can run on a cluster, in every
// durability mode it has: what the adapter makes is a valid pod.
func TestEngineObjects(t *testing.T) {
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
		if !ok {
			continue
		}
		tested = append(tested, name)
		spec := eng.Spec()
		if spec.Image == "" {
			t.Errorf("%s runs in a container but its spec names no image", name)
		}
		for _, mode := range spec.Modes {
			cfg := engine.ContainerConfig{Durability: mode.Durability, Placement: map[string]string{}, Name: "tb-s-001-engine"}
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
			rs := kube.RunSpec{Study: "s", Run: "s-001", Namespace: "bench", Engine: name, Server: ctr, Image: "tierbench:1"}
			for _, comp := range spec.ComponentNames() {
				if _, ok := ctr.Mounts[comp]; ok {
					rs.Claims = append(rs.Claims, kube.Claim{Component: comp, Class: "local-ssd", Size: 1 << 30})
				} else if !folded[name+"/"+comp] {
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
			for _, o := range append([]kube.Object{rs.Anchor()}, rs.Objects("pw")...) {
				if _, err := c.Create(context.Background(), "bench", o, true); err != nil {
					t.Errorf("%s %s: %s: %v", name, mode.Durability, o.Kind(), err)
				}
			}
		}
	}
	for _, want := range []string{"postgres", "redis", "mariadb", "ignite"} {
		if !slices.Contains(tested, want) {
			t.Errorf("engines in containers: %v, want %s among them", tested, want)
		}
	}
}
