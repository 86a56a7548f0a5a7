package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
)

// TestPowerLayersTiersByWhereTheyLive reads a study with crash: power
// whose WAL tiers are in RAM: a folder on tmpfs gets no crash-capable
// layer (it keeps nothing through a power loss anyway, and the run empties
// it at the cut), a pmem_emulated folder is under the layer, a disk folder
// is too; and a pmem_emulated folder on disk is refused, naming the fix.
func TestPowerLayersTiersByWhereTheyLive(t *testing.T) {
	if tier.CheckInRAM("/dev/shm") != nil {
		testenv.Skip(t, "no tmpfs at /dev/shm")
	}
	shm, err := os.MkdirTemp("/dev/shm", "tierbench-study-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	disk := t.TempDir()
	src := `name: p
engine: pebble
tiers:
  disk: {path: DISK}
  ram:  {path: SHM/ram}
  pmem: {pmem_emulated: {path: SHM/pmem}}
placements:
  a: {data: disk, wal: disk}
  b: {data: disk, wal: ram}
  c: {data: disk, wal: pmem}
baseline: a
durability: sync
workload: {name: ycsb-a}
clients: 1
duration: 1s
crash: power
`
	src = strings.NewReplacer("DISK", disk, "SHM", shm).Replace(src)
	if tier.CheckInRAM(disk) == nil {
		t.Skipf("%s is in RAM here", disk)
	}
	s := mustParse(t, src)
	want := map[string][2]bool{"disk": {true, false}, "ram": {false, false}, "pmem": {true, true}}
	for _, ti := range s.Tiers {
		if got := [2]bool{ti.Stack.CrashLayer, ti.Stack.DurableByLayer}; got != want[ti.Name] {
			t.Errorf("tier %s: crash layer, durable by layer = %v, want %v", ti.Name, got, want[ti.Name])
		}
	}

	bad := strings.Replace(src, "pmem: {pmem_emulated: {path: "+shm+"/pmem}}", "pmem: {pmem_emulated: {path: "+filepath.Join(disk, "pm")+"}}", 1)
	_, err = Parse("study.yaml", []byte(bad), testCatalog{})
	if err == nil || !strings.Contains(err.Error(), "not in RAM") || !strings.Contains(err.Error(), "/dev/shm") {
		t.Errorf("pmem_emulated on disk: %v; want it refused, naming a folder in RAM", err)
	}
}
