package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tierbench/tierbench/catalog"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/progress"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/study"
	"github.com/tierbench/tierbench/testenv"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/emulate"
	"github.com/tierbench/tierbench/tier/probe"
	"github.com/tierbench/tierbench/tier/profile"
	"github.com/tierbench/tierbench/tier/syncdelay"
	"github.com/tierbench/tierbench/tier/throttle"
)

// faultyCatalog serves the real catalog, but its pebble engine is wrapped
// to inject faults by placement: opening fails when the data folder is on a
// tier named "broken", and sessions panic when it is on "crashy".
type faultyCatalog struct{ *catalog.Catalog }

func (c faultyCatalog) Engine(name string) (engine.Engine, bool) {
	e, ok := c.Catalog.Engine(name)
	return faultyEngine{e}, ok
}

type faultyEngine struct{ engine.Engine }

func (f faultyEngine) Open(ctx context.Context, cfg engine.Config) (engine.DB, error) {
	if strings.Contains(cfg.Dirs["data"], "/broken/") {
		return nil, errors.New("injected: device gone")
	}
	db, err := f.Engine.Open(ctx, cfg)
	if err != nil || !strings.Contains(cfg.Dirs["data"], "/crashy/") {
		return db, err
	}
	return crashyDB{db}, nil
}

type crashyDB struct{ engine.DB }

func (c crashyDB) NewSession(ctx context.Context) (engine.Session, error) {
	s, err := c.DB.NewSession(ctx)
	return crashySession{s.(recordsSession)}, err
}

type recordsSession interface {
	engine.Session
	engine.Records
}

type crashySession struct{ recordsSession }

func (crashySession) Read(context.Context, []byte) (bool, error) { panic("injected crash") }

// syncWriter collects progress lines from the runner's goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// ctrlCAt returns a context cancelled, as Ctrl-C would, once lines holds
// marker (a run's label, "[2/3") and then after more.
func ctrlCAt(lines *syncWriter, marker string, after time.Duration) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !strings.Contains(lines.String(), marker) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(after)
		cancel()
	}()
	return ctx
}

func tinyStudy(t *testing.T, tiers map[string]string, placements []study.Placement) *study.Study {
	t.Helper()
	var ts []study.Tier
	for name, path := range tiers {
		ts = append(ts, study.Tier{Spec: tier.Spec{Name: name, Path: path}})
	}
	return &study.Study{
		Name: "runner-test", Engine: "pebble", Tiers: ts, Placements: placements, Baseline: placements[0].Name,
		Durability: []engine.Durability{engine.NoSync}, Workload: study.Workload{Name: "ycsb-a", Params: map[string]string{"records": "500"}},
		Clients: []int{2}, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Repeat: 1,
	}
}

// TestFailedRunsAreStoredAndTheStudyGoesOn runs a good placement between a
// placement whose engine cannot open and one whose engine panics.
func TestFailedRunsAreStoredAndTheStudyGoesOn(t *testing.T) {
	root := t.TempDir()
	tiers := map[string]string{}
	for _, n := range []string{"good", "broken", "crashy"} {
		tiers[n] = filepath.Join(root, n)
	}
	st := tinyStudy(t, tiers, []study.Placement{
		{Name: "ok", Components: map[string]string{"data": "good", "wal": "good"}},
		{Name: "no-open", Components: map[string]string{"data": "broken", "wal": "good"}},
		{Name: "panics", Components: map[string]string{"data": "crashy", "wal": "good"}},
		{Name: "ok-again", Components: map[string]string{"data": "good", "wal": "good"}},
	})
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sum, err := Run(context.Background(), st, Options{Catalog: faultyCatalog{catalog.Default()}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if sum.OK != 2 || sum.Failed != 2 {
		t.Fatalf("ok %d failed %d, want 2 and 2", sum.OK, sum.Failed)
	}
	runs, err := store.Runs(context.Background(), sum.Study.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ok": "", "no-open": "device gone", "panics": "injected crash", "ok-again": ""}
	for _, r := range runs {
		frag := want[r.Placement]
		if frag == "" && r.Status != results.RunOK {
			t.Errorf("%s: status %s (%s)", r.Placement, r.Status, r.Error)
		}
		if frag != "" && (r.Status != results.RunFailed || !strings.Contains(r.Error, frag)) {
			t.Errorf("%s: status %s error %q, want failed with %q", r.Placement, r.Status, r.Error, frag)
		}
	}
	for n, p := range tiers {
		ents, err := os.ReadDir(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 0 {
			t.Errorf("tier %s: %d run folders left behind", n, len(ents))
		}
	}
	got, err := store.Study(context.Background(), sum.Study.ID)
	if err != nil || got.Status != results.StudyDone {
		t.Errorf("study status %v, err %v", got, err)
	}
}

// TestCancelStoresInterruptedStudy cancels mid-run: the engine is closed,
// the folders removed, finished runs kept and the study marked interrupted.
func TestCancelStoresInterruptedStudy(t *testing.T) {
	root := t.TempDir()
	tiers := map[string]string{"disk": filepath.Join(root, "disk")}
	st := tinyStudy(t, tiers, []study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}})
	st.Clients = []int{1, 2}
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	lines := &syncWriter{}
	ctx := ctrlCAt(lines, "[2/2", 200*time.Millisecond) // in the second run's measured window
	st.Duration = time.Second
	sum, err := Run(ctx, st, Options{Catalog: catalog.Default(), Store: store, Progress: progress.NewPlain(lines)})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted {
		t.Fatal("not marked interrupted")
	}
	got, _ := store.Study(context.Background(), sum.Study.ID)
	if got.Status != results.StudyInterrupted || got.FinishedAt == nil {
		t.Errorf("stored status %s", got.Status)
	}
	runs, _ := store.Runs(context.Background(), sum.Study.ID)
	if len(runs) != 1 || runs[0].Status != results.RunOK {
		t.Errorf("want the one finished run stored, got %d", len(runs))
	}
	if ents, _ := os.ReadDir(tiers["disk"]); len(ents) != 0 {
		t.Errorf("%d run folders left behind", len(ents))
	}
}

// TestOpenLoopRunStoresServiceTime runs at a fixed target rate: throughput
// follows the schedule, and latency and service time are both stored.
func TestOpenLoopRunStoresServiceTime(t *testing.T) {
	root := t.TempDir()
	st := tinyStudy(t, map[string]string{"disk": filepath.Join(root, "disk")},
		[]study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}})
	st.TargetRate, st.Arrival, st.Clients, st.Duration = 1000, "poisson", []int{4}, time.Second
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store})
	if err != nil || sum.OK != 1 {
		t.Fatalf("run: %+v %v", sum, err)
	}
	runs, _ := store.Runs(context.Background(), sum.Study.ID)
	r := runs[0]
	// An open loop never runs ahead of its schedule (1,000 ops/s, Poisson:
	// 1,200 is six standard deviations above); how far a busy machine falls
	// behind it is a figure, not a behaviour.
	if !r.OpenLoop || r.ThroughputOpsS <= 0 || r.ThroughputOpsS > 1200 {
		t.Errorf("open loop %v at %.0f ops/s, want at most the scheduled 1000", r.OpenLoop, r.ThroughputOpsS)
	}
	if r.ServiceTime.P50 <= 0 || r.ServiceTime.P99 > r.Latency.P99*1.0001 {
		t.Errorf("service %+v should be positive and not above latency %+v", r.ServiceTime, r.Latency)
	}
	h, err := store.Histogram(context.Background(), r.ID, results.OpAll, results.KindService, "measured")
	if err != nil || h.TotalCount() != r.Ops {
		t.Errorf("service histogram: %v, %v", h, err)
	}
	if sum.Study.Arrival != "poisson" || sum.Study.TargetRate != 1000 {
		t.Errorf("study record lacks the schedule: %+v", sum.Study)
	}
}

// TestColdCacheAndBottleneck restarts the engine with the page cache dropped
// before measuring, and attributes the run's limit using a stored probe of
// the tier's filesystem (probe: cached). The stored sync ceiling is set low
// on purpose, so a synced run must be reported fsync-bound on that tier.
func TestColdCacheAndBottleneck(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "cache: cold needs root to drop the page cache")
	}
	root := t.TempDir()
	disk := filepath.Join(root, "disk")
	st := tinyStudy(t, map[string]string{"disk": disk},
		[]study.Placement{{Name: "p", Components: map[string]string{"data": "disk", "wal": "disk"}}})
	st.Durability, st.Warmup, st.Caches, st.Probe = []engine.Durability{engine.Sync}, 0, []string{study.CacheCold}, study.ProbeCached
	store, err := results.Open(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	info, err := tier.Inspect("disk", disk)
	if err != nil {
		t.Fatal(err)
	}
	stored := results.Probe{TakenAt: time.Now(), MountPoint: info.MountPoint, Tier: probe.Tier{Path: disk, Device: info.Device,
		FSType: info.FSType, Fio: &probe.Fio{SyncCeilingPerS: 1}}}
	if err := store.PutProbe(context.Background(), stored); err != nil {
		t.Fatal(err)
	}
	lines := &syncWriter{}
	explain := func(r *results.Run, st *results.Study) string { return stats.Attribute(r, st).Text }
	sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Progress: progress.NewPlain(lines),
		Explain: explain})
	if err != nil || sum.OK != 1 {
		t.Fatalf("run: %+v %v\n%s", sum, err, lines)
	}
	if !strings.Contains(lines.String(), "bottleneck: WAL fsync-bound on tier disk") {
		t.Errorf("no bottleneck line from Options.Explain:\n%s", lines)
	}
	if !strings.Contains(lines.String(), "page cache dropped") {
		t.Error("no cold restart happened")
	}
	if sum.Study.Probes["disk"] == nil {
		t.Fatal("the stored probe was not attached to the study")
	}
	runs, _ := store.Runs(context.Background(), sum.Study.ID)
	if runs[0].Bottleneck != nil {
		t.Errorf("stored bottleneck %+v: it is computed when shown, not stored", runs[0].Bottleneck)
	}
	if sw, ok := runs[0].Telemetry.SyncWait["wal"]; !ok || runs[0].Telemetry.SyncSamples == 0 {
		t.Errorf("no sampled sync waits of the WAL in the stored telemetry: %+v (%d samples)", sw, runs[0].Telemetry.SyncSamples)
	}
	b := stats.Attribute(&runs[0], sum.Study)
	if b.Kind != "fsync" || b.Tier != "disk" || b.FractionOfCeiling < 1 || b.Evidence["sync_ceiling_per_s"] != 1 {
		t.Errorf("bottleneck %+v, want fsync-bound on disk (telemetry %+v)", b, runs[0].Telemetry)
	}
}

// TestEmulatedTiersAreConfirmedByProbe provisions RAM-backed loop tiers
// that emulate slower storage (a 1000 write IOPS cap through the block I/O
// cgroup; 2 ms fsync through the FUSE latency layer) and probes each with
// fio (probe: quick, its jobs shortened). It checks behaviour, not timing:
// the check ran, its verdict and the fsync p50 the probe measured are in
// the tier's record, stored with the study and shown by `show`; a latency
// tier also records what its layer measured at mount; a synced run works
// on the tier, and nothing is left after. Whether the figures are within
// tolerance is a measurement (see package emulate), not a test.
func TestEmulatedTiersAreConfirmedByProbe(t *testing.T) {
	profiledTier := func(t *testing.T, name string) study.Tier {
		p, err := profile.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		a := tier.ApplyProfile(p, true, false, tier.ThroughFUSE)
		return study.Tier{Spec: tier.Spec{Latency: &a.Latency, Throttle: a.Throttle, Profile: &p}}
	}
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root for loop devices, cgroups and FUSE")
	}
	if _, err := exec.LookPath("fio"); err != nil {
		testenv.Skip(t, "fio not installed")
	}
	// No figure is asserted (a verdict either way will do), so each of
	// the probe's eight fio jobs runs 300 ms on a 16 MiB file, as package
	// probe's tests do, instead of quick's 2 s on 256 MiB.
	probeShort = probe.Options{Runtime: 300 * time.Millisecond, Size: 16 << 20}
	t.Cleanup(func() { probeShort = probe.Options{} })
	cases := []struct {
		name      string
		tier      study.Tier
		supported func() error
		emulation []string // in the tier's Emulation
		checked   string   // the figure the check compares
	}{
		{"throttle", study.Tier{Spec: tier.Spec{Throttle: &tier.ThrottleSpec{WriteIOPS: 1000}}}, throttle.Supported,
			[]string{"throttled (cgroup): write_iops 1000"}, "4k random write IOPS (qd32)"},
		{"latency", study.Tier{Spec: tier.Spec{Latency: &tier.LatencySpec{Fsync: 2 * time.Millisecond}}}, emulate.Supported,
			[]string{"latency (FUSE): fsync 2ms", "measured at mount: fsync p50 "}, "fsync p50"},
		// At the sync calls: no layer; fio runs under the delays as the
		// engine does.
		{"sync calls", study.Tier{Spec: tier.Spec{Latency: &tier.LatencySpec{Fsync: 2 * time.Millisecond, Path: tier.AtSyncCalls}}}, syncdelay.Supported,
			[]string{"latency (seccomp; reads and writes at the folder's own speed): fsync 2ms at the sync calls"}, "fsync p50"},
		// A profile sets both, and the tier's record gets its fidelity.
		{"profile", profiledTier(t, "sata-ssd"), func() error { return errors.Join(emulate.Supported(), throttle.Supported()) },
			[]string{"profile sata-ssd, latency (FUSE): read p50 110µs p99 300µs", "throttled (cgroup): read_iops 72000"}, "fsync p50"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.supported(); err != nil {
				testenv.Skip(t, err)
			}
			root := t.TempDir()
			ledger, err := tier.OpenLedger(filepath.Join(root, "state"))
			if err != nil {
				t.Fatal(err)
			}
			slow := tc.tier
			slow.Name, slow.Kind = "slow", tier.LoopSpec{Backing: "ram", Size: 512 << 20, FS: "ext4"}
			st := tinyStudy(t, map[string]string{}, []study.Placement{{Name: "p", Components: map[string]string{"data": "slow", "wal": "slow"}}})
			st.Tiers = []study.Tier{slow}
			st.Probe, st.Durability = study.ProbeQuick, []engine.Durability{engine.Sync}
			store, err := results.Open(filepath.Join(root, "results"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			lines := &syncWriter{}
			sum, err := Run(context.Background(), st, Options{Catalog: catalog.Default(), Store: store, Ledger: ledger, Progress: progress.NewPlain(lines)})
			if err != nil || sum.OK != 1 {
				t.Fatalf("run: %+v %v\n%s", sum, err, lines)
			}
			stored, err := store.Study(context.Background(), sum.Study.ID)
			if err != nil {
				t.Fatal(err)
			}
			info := stored.Tiers["slow"]
			t.Logf("tier slow: %s: %s", info.Emulation, info.EmulationCheck)
			if !info.Emulated {
				t.Errorf("tier not marked emulated: %+v", info)
			}
			for _, want := range tc.emulation {
				if !strings.Contains(info.Emulation, want) {
					t.Errorf("emulation %q does not say %q", info.Emulation, want)
				}
			}
			// The check ran and recorded its verdict and the probe's figures.
			p := stored.Probes["slow"]
			if p == nil || p.Tier.Fio == nil {
				t.Fatalf("no probe stored with the study: %+v", p)
			}
			fsync := fmt.Sprintf("fsync p50 %.0fµs", p.Tier.Fio.FsyncLat.P50)
			if !strings.HasPrefix(info.EmulationCheck, "confirmed: ") && !strings.HasPrefix(info.EmulationCheck, "NOT confirmed: ") {
				t.Errorf("emulation check %q has no verdict", info.EmulationCheck)
			}
			for _, want := range []string{tc.checked, fsync} {
				if !strings.Contains(info.EmulationCheck, want) {
					t.Errorf("emulation check %q does not give %q", info.EmulationCheck, want)
				}
			}
			if tc.tier.Profile != nil && (info.Profile != tc.tier.Profile.Name || len(info.Fidelity) != 10) {
				t.Errorf("tier record: profile %q, fidelity %+v; want the profile and its 10 figures asked against achieved", info.Profile, info.Fidelity)
			}
			// `show` shows them.
			var shown strings.Builder
			runs, _ := store.Runs(context.Background(), stored.ID)
			if err := report.Show(&shown, stored, runs); err != nil {
				t.Fatal(err)
			}
			// show wraps its lines at 120 columns.
			flat := strings.Join(strings.Fields(shown.String()), " ")
			if !strings.Contains(flat, info.EmulationCheck) || !strings.Contains(flat, info.Emulation) {
				t.Errorf("show does not give the tier's emulation and its check:\n%s", shown.String())
			}
			if tc.tier.Profile != nil && !strings.Contains(flat, "slow: profile "+tc.tier.Profile.Name+" asked/achieved: read p50") {
				t.Errorf("show does not give the profile's figures asked against achieved:\n%s", shown.String())
			}
			if left, _ := ledger.All(); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
			if mnts, _ := os.ReadDir(filepath.Join(root, "state", "mnt")); len(mnts) != 0 {
				t.Errorf("mount point folders left behind: %v", mnts)
			}
			self, _ := os.ReadFile("/proc/self/cgroup")
			if strings.Contains(string(self), "tierbench-") {
				t.Errorf("this process is still in a throttle group:\n%s", self)
			}
		})
	}
}
