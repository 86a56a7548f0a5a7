package study

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
)

// TestDefaultStudies reads both default studies as `tierbench run` would
// on a machine with /dev/shm. The full one crashes every placement's
// synced commits through a power loss, its WAL tiers a pmem_emulated
// folder (under the layer) and a tmpfs folder (no layer: it keeps
// nothing), in a round small enough for its budget; the fallback has no
// crash and no pmem_emulated tier, and sets tmpfs beside unsynced commits.
func TestDefaultStudies(t *testing.T) {
	if tier.CheckInRAM("/dev/shm") != nil {
		testenv.Skip(t, "no tmpfs at /dev/shm")
	}
	shm, err := os.MkdirTemp("/dev/shm", "tierbench-default-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	ram, disk := filepath.Join(shm, "tierbench"), filepath.Join(t.TempDir(), "disk-tier")

	s := mustParse(t, DefaultYAML(ram, disk))
	if !slices.Equal(s.Crashes, []string{CrashNone, CrashPower}) || len(s.Durability) != 1 || s.Durability[0] != "sync" {
		t.Errorf("crashes %v, durability %v; want a power loss on synced commits", s.Crashes, s.Durability)
	}
	want := map[string][2]bool{"pmem": {true, true}, "ram": {false, false}, "disk": {true, false}}
	for _, ti := range s.Tiers {
		if got := [2]bool{ti.Stack.CrashLayer, ti.Stack.DurableByLayer}; got != want[ti.Name] {
			t.Errorf("tier %s: crash layer, durable by layer = %v, want %v", ti.Name, got, want[ti.Name])
		}
	}
	if ti, _ := s.Tier("pmem"); ti.Path != ram+"-pmem" {
		t.Errorf("pmem tier at %s, want %s-pmem", ti.Path, ram)
	}
	// 3 placements x 2 crash kinds x 2 client counts: one round is 12
	// runs of 4 s (2 s of which a transient may take, cut after the fact)
	// on 2 shared cores, about a minute, so the 3 rounds that always run
	// take about 3 minutes.
	if n := s.RoundSize(); n != 12 || s.Steady == nil {
		t.Errorf("a round of the default study has %d runs (want 12), steady warmup %v (see DefaultYAML)", n, s.Steady)
	}

	f := mustParse(t, DefaultFallbackYAML(ram, disk))
	if len(f.Crashes) != 0 || f.RoundSize() != 8 || f.Steady == nil {
		t.Errorf("fallback: crashes %v, %d runs a round, steady warmup %v; want no crash, 8, a steady warmup", f.Crashes, f.RoundSize(), f.Steady)
	}
	for _, ti := range f.Tiers {
		if ti.Stack.DurableByLayer || ti.Stack.CrashLayer {
			t.Errorf("fallback tier %s is under the power-loss layer", ti.Name)
		}
	}
}
