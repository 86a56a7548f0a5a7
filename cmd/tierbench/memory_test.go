package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
)

// memoryGroups lists the memory cgroups tierbench has made.
func memoryGroups() []string {
	ents, _ := os.ReadDir("/sys/fs/cgroup/memory/tierbench")
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestMemoryGroupKill9: a run with option memory starts its server in a
// memory cgroup; after a kill -9 of tierbench mid-run the group is still
// there (nothing undid it), and one `tierbench cleanup` removes it.
func TestMemoryGroupKill9(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "memory cgroups and server users need root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		t.Skip("this machine has no cgroup v1 memory controller at /sys/fs/cgroup/memory")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		testenv.Skipf(t, "redis-server not installed")
	}
	work := serverWork(t, "tierbench-memory-")
	disk := filepath.Join(work, "disk")
	st := writeStudy(t, work, fmt.Sprintf(`name: memory-kill9
engine: redis
tiers:
  disk: {path: %q}
placements:
  p: {data: disk}
baseline: p
durability: [async]
workload: {name: ycsb-a, records: 1000}
clients: [1]
warmup: 0s
duration: 60s
options: {memory: 256MiB}
`, disk))
	env := []string{"TIERBENCH_STATE_DIR=" + filepath.Join(work, "state")}
	before := memoryGroups()
	cmd := exec.Command(binary, "run", st, "--results", filepath.Join(work, "results"))
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(errb.String(), "measured") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	var made []string
	for _, g := range memoryGroups() {
		if !slices.Contains(before, g) {
			made = append(made, g)
		}
	}
	if len(made) != 1 {
		t.Fatalf("the killed run left %d memory cgroups (%v), want its one\n%s", len(made), made, errb.String())
	}
	if r := tierbenchEnv(t, work, env, "cleanup"); r.code != 0 || !strings.Contains(r.stdout, "memory-cgroup") {
		t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if slices.Contains(memoryGroups(), made[0]) {
		t.Errorf("cleanup left memory cgroup %s", made[0])
	}
}
