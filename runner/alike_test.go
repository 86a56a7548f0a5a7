package runner

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/syncdelay"
)

// TestTiersOfOneSpecAreAlike is an A/A' study of emulated tiers: Pebble's
// WAL on tier a against its WAL on tier a2, two tmpfs tiers mounted
// separately with the same fsync latency, synced commits, one client (so
// each commit waits for one fsync). Through the FUSE layer each tier is
// its own mount and helper; at the sync calls each is its own rule. Two
// tiers of one spec must deliver the same delays (one calibration per
// spec per study), so over three seeded studies per path no placement
// comparison may read better or worse. A study's guard holds the chance of a wrong
// verdict at 5%, so a study that has one is run once more with another
// seed: a tier that truly differs (the artefact, every round) fails
// twice, a sound one both times in 0.25% of studies.
func TestTiersOfOneSpecAreAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six small studies")
	}
	for _, path := range []tier.LatencyPath{tier.ThroughFUSE, tier.AtSyncCalls} {
		t.Run(string(path), func(t *testing.T) {
			supported := emulate.Supported
			if path == tier.AtSyncCalls {
				supported = syncdelay.Supported
			}
			if err := supported(); err != nil {
				testenv.Skip(t, err)
			}
			for _, seed := range []uint64{1, 2, 3} {
				wrong, figures := alikeStudy(t, path, seed, 4, 500*time.Millisecond)
				t.Logf("seed %d: %s", seed, figures)
				if len(wrong) == 0 {
					continue
				}
				again, figures := alikeStudy(t, path, seed+100, 4, 500*time.Millisecond)
				t.Logf("seed %d, once more as seed %d: %s", seed, seed+100, figures)
				if len(again) > 0 {
					t.Errorf("two tiers of one spec (%s) called different twice: %v, then %v", path, wrong, again)
				}
			}
		})
	}
}

// alikeStudy runs one A/A' study of two tiers of one spec on path, with
// order seed, of rounds rounds of window each; it returns the
// comparisons read better or worse, and the figures for the log.
func alikeStudy(t *testing.T, path tier.LatencyPath, seed uint64, rounds int, window time.Duration) (wrong []string, figures string) {
	t.Helper()
	root := t.TempDir()
	ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	st := tinyStudy(t, nil, []study.Placement{
		{Name: "wal-a", Components: map[string]string{"data": "ram", "wal": "a"}},
		{Name: "wal-a2", Components: map[string]string{"data": "ram", "wal": "a2"}},
	})
	lat := tier.LatencySpec{Fsync: 100 * time.Microsecond, Path: path}
	st.Tiers = []study.Tier{
		{Spec: tier.Spec{Name: "ram", Kind: tier.TmpfsSpec{Size: 64 << 20}}},
		{Spec: tier.Spec{Name: "a", Kind: tier.TmpfsSpec{Size: 64 << 20}, Latency: &lat}},
		{Spec: tier.Spec{Name: "a2", Kind: tier.TmpfsSpec{Size: 64 << 20}, Latency: &lat}},
	}
	st.Durability, st.Clients = []engine.Durability{engine.Sync}, []int{1}
	st.Warmup, st.Duration = 200*time.Millisecond, window
	st.Repeat, st.Order = rounds, study.Order{Seed: seed, SeedSet: true}
	rec, a, _ := runStudy(t, root, st, ledger)
	var parts []string
	for _, j := range a.Comparisons {
		if j.Kind == stats.KindDurability {
			continue
		}
		ci := "no CI"
		if j.CI95 != nil {
			ci = fmt.Sprintf("[%.3f, %.3f]", j.CI95[0], j.CI95[1])
		}
		parts = append(parts, fmt.Sprintf("%s %s against %s: %.3fx %s %s", j.Kind, j.Series, j.Against, j.Ratio, ci, j.Verdict))
		// What the tiers' delays decide is the placements' throughput;
		// the load generator's CPU per operation follows the machine's
		// load, not the tier, and is logged but not judged here.
		if j.Kind == stats.KindPlacement && (j.Verdict == stats.Better || j.Verdict == stats.Worse) {
			wrong = append(wrong, parts[len(parts)-1])
		}
	}
	for _, name := range []string{"a", "a2"} {
		parts = append(parts, "tier "+name+": "+rec.Tiers[name].Emulation)
	}
	if left, _ := ledger.All(); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	return wrong, strings.Join(parts, "; ")
}
