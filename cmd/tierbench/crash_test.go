package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier/emulate"
)

// TestCrashRunKill9: tierbench is killed (kill -9) at the moment a power
// crash run cuts the power under its Redis server; one `tierbench
// cleanup` then leaves no server, mount, FUSE helper, hidden undo folder
// or run folder behind.
func TestCrashRunKill9(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "mounts and server users need root")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		testenv.Skipf(t, "redis-server not installed")
	}
	if err := emulate.Supported(); err != nil {
		testenv.Skip(t, err)
	}
	work := serverWork(t, "tierbench-crash-")
	disk := filepath.Join(work, "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(work, "state")
	st := writeStudy(t, work, fmt.Sprintf(`name: crash-kill9
engine: redis
tiers:
  disk: {path: %q}
placements:
  p: {data: disk}
baseline: p
durability: [sync]
workload: {name: ycsb-a, records: 1000}
clients: [2]
warmup: 0s
duration: 4s
crash: power
probe: off
`, disk))
	env := []string{"TIERBENCH_STATE_DIR=" + state}
	cmd := exec.Command(binary, "run", st, "--results", filepath.Join(work, "results"))
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(errb.String(), "crashing the engine") && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !strings.Contains(errb.String(), "crashing the engine") {
		t.Fatalf("the run never reached its crash:\n%s", errb.String())
	}
	if r := tierbenchEnv(t, work, env, "cleanup"); r.code != 0 {
		t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if m := mountsUnder(t, work); len(m) != 0 {
		t.Errorf("mounts left: %v", m)
	}
	if ents, _ := os.ReadDir(disk); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in the tier's folder: %v", names)
	}
	if out, _ := exec.Command("pgrep", "-f", work).Output(); len(out) > 0 {
		t.Errorf("processes still using %s: %s", work, out)
	}
}
