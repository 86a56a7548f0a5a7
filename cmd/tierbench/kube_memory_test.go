package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/testenv"
)

// renderStudy is a study on a cluster that render can write without one.
const renderStudy = `name: render-memory
engine: %s
platform:
  kubernetes: {kubeconfig: /nonexistent/kubeconfig, namespace: bench, image: reg/tierbench:1}
tiers:
  slow: {storage_class: slow}
placements:
  all-slow: {%s}
baseline: all-slow
durability: [sync]
workload: %s
clients: [2]
duration: 3s
%s
`

// TestRenderedEngineMemory: the engine's container asks for the memory its
// own settings hold in one pod, with no limit, when the study sets no
// memory, so it is not a BestEffort pod, the OOM killer's first pick when
// its node runs short (exit 137), and is placed where that memory is free;
// with memory set, the container asks for it and is held to it. A
// StatefulSet's pods each ask for one node's share.
func TestRenderedEngineMemory(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name, engine, components, workload, extra string
		request, limit                            int64
	}{
		// heap + heap/2 of direct memory + 256MiB of the JVM's own.
		{"opensearch", "opensearch", "data: slow, logs: slow", "{name: ingest}", "", gib + gib/2 + 256<<20, 0},
		{"opensearch with memory", "opensearch", "data: slow, logs: slow", "{name: ingest}", "options: {memory: 2GiB}", 2 * gib, 2 * gib},
		// 3 nodes of heap 512MiB + region_size 1GiB each.
		{"ignite", "ignite", "persistence: slow, wal: slow", "{name: puts, keys: 1000}", "", gib + gib/2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := writeStudy(t, dir, fmt.Sprintf(renderStudy, tc.engine, tc.components, tc.workload, tc.extra))
			// The test runs in a folder of its own: the Ignite launcher
			// is this checkout's build, which make setup makes.
			ignite, err := filepath.Abs(filepath.Join("..", "..", "java", "ignite", "target"))
			if err != nil {
				t.Fatal(err)
			}
			r := tierbenchEnv(t, dir, []string{"TIERBENCH_STATE_DIR=" + dir + "/state", "TIERBENCH_IGNITE_DIR=" + ignite}, "render", st, "--platform", "kubernetes")
			if r.code == exitBadInput && strings.Contains(r.stderr, "is not built") {
				testenv.Skip(t, r.stderr) // a launcher make setup builds
			}
			if r.code != 0 {
				t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
			}
			var found bool
			dec := yaml.NewDecoder(strings.NewReader(r.stdout))
			for {
				var o struct {
					Kind     string
					Metadata struct{ Labels map[string]string }
					Spec     struct {
						Containers []renderedContainer
						Template   struct {
							Spec struct{ Containers []renderedContainer }
						}
					}
				}
				if err := dec.Decode(&o); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				containers := o.Spec.Containers
				switch {
				case o.Kind == "StatefulSet":
					containers = o.Spec.Template.Spec.Containers
				case o.Kind != "Pod" || o.Metadata.Labels["tierbench.io/role"] == "driver":
					continue
				}
				for _, c := range containers {
					found = true
					req, lim := c.Resources.Requests["memory"], c.Resources.Limits["memory"]
					if req != fmt.Sprint(tc.request) || (tc.limit == 0 && lim != "") || (tc.limit > 0 && lim != fmt.Sprint(tc.limit)) {
						t.Errorf("%s %s: memory request %q, limit %q; want request %d, limit %d (0: none)", o.Kind, c.Name, req, lim, tc.request, tc.limit)
					}
				}
			}
			if !found {
				t.Fatalf("no engine container rendered:\n%s", r.stdout)
			}
		})
	}
}

// renderedContainer is the part of a rendered container the test reads.
type renderedContainer struct {
	Name      string
	Resources struct{ Requests, Limits map[string]string }
}
