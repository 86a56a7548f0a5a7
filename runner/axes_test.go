package runner

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/progress"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/testenv"
)

// TestSweptOptionsAndCacheStates runs a study that sweeps an engine option
// and both cache states: every run gets and records its option value and
// cache state, only warm runs warm up, cold ones restart with the page
// cache dropped, and statistics compare each placement with the baseline
// in the same combination.
func TestSweptOptionsAndCacheStates(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "cache: cold needs root to drop the page cache")
	}
	root := t.TempDir()
	disk := filepath.Join(root, "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	st := tinyStudy(t, map[string]string{"disk": disk}, []study.Placement{
		{Name: "base", Components: map[string]string{"data": "disk", "wal": "disk"}},
		{Name: "same", Components: map[string]string{"data": "disk", "wal": "disk"}},
	})
	st.Probe = study.ProbeOff
	st.Axes = []study.Axis{{Name: "cache", Values: []string{"8388608", "16777216"}, Labels: []string{"8MiB", "16MiB"}}}
	st.Caches = []string{study.CacheCold, study.CacheWarm}
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lines := &syncWriter{}
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Progress: progress.NewPlain(lines)})
	if err != nil || sum.OK != 8 {
		t.Fatalf("run: %+v %v\n%s", sum, err, lines)
	}
	if n := strings.Count(lines.String(), "page cache dropped"); n != 4 {
		t.Errorf("%d cold restarts, want one per cold run (4):\n%s", n, lines)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range runs {
		v := sum.Study.VariantOf(r)
		seen[v]++
		wantWarmup := st.Warmup.Seconds()
		if r.Cache == study.CacheCold {
			wantWarmup = 0
		}
		if r.WarmupS != wantWarmup || r.Options["cache"] == "" {
			t.Errorf("run %s (%s): warmup %vs, options %v; want warmup %vs and its cache size", r.ID, v, r.WarmupS, r.Options, wantWarmup)
		}
	}
	for _, v := range []string{"cache=8MiB cold", "cache=8MiB warm", "cache=16MiB cold", "cache=16MiB warm"} {
		if seen[v] != 2 {
			t.Errorf("variant %q has %d runs, want 2 (one per placement): %v", v, seen[v], seen)
		}
	}
	a := stats.Analyze(sum.Study, runs)
	g := a.Group(stats.Key{Series: "same cache=16MiB warm", Durability: "nosync", Clients: 2})
	base := a.Group(stats.Key{Series: "base cache=16MiB warm", Durability: "nosync", Clients: 2})
	if g == nil || base == nil || g.N != 1 || base.Verdict != stats.IsBaseline {
		t.Fatalf("groups by variant: same %+v, base %+v", g, base)
	}
	if want := g.ThroughputMedian / base.ThroughputMedian; math.Abs(g.Ratio/want-1) > 1e-9 {
		t.Errorf("ratio %v, want %v: the baseline in the same combination", g.Ratio, want)
	}
}

// TestColdRunsStartWithAnEmptyCache proves `cache: cold` by the engine's
// own counters: a cold PostgreSQL run reads pages from below its buffer
// cache, a warm one (its data just loaded and warmed) finds them there.
func TestColdRunsStartWithAnEmptyCache(t *testing.T) {
	root, tiers := serverTiers(t, "disk")
	if err := os.MkdirAll(tiers["disk"], 0o755); err != nil {
		t.Fatal(err)
	}
	st := postgresStudy(t, tiers, []study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}}, "2000")
	st.Workload.Name = "ycsb-c"
	st.Warmup, st.Duration, st.Probe = time.Second, 3*time.Second, study.ProbeOff
	st.Caches = []string{study.CacheCold, study.CacheWarm}
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lines := &syncWriter{}
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Progress: progress.NewPlain(lines)})
	if err != nil || sum.OK != 2 {
		t.Fatalf("run: %+v %v\n%s", sum, err, lines)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	buf := map[string]*telemetry.BufferSummary{}
	for _, r := range runs {
		if r.Telemetry == nil || r.Telemetry.Engine.Buffers == nil {
			t.Fatalf("run %s (%s) has no buffer counters: %+v", r.ID, r.Cache, r.Telemetry)
		}
		buf[r.Cache] = r.Telemetry.Engine.Buffers
	}
	cold, warm := buf[study.CacheCold], buf[study.CacheWarm]
	t.Logf("cold: %+v; warm: %+v", cold, warm)
	if cold.Reads == 0 || cold.Reads <= warm.Reads || cold.HitPct >= warm.HitPct {
		t.Errorf("cold %+v should read more from below its cache than warm %+v", cold, warm)
	}
}
