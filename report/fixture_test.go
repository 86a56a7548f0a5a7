package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hist"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/stats"
	"github.com/tierbench/tierbench/telemetry"
	"github.com/tierbench/tierbench/tier"
)

// fixture is a study built in code the way the runner stores one: 3
// placements x 2 durability modes x 2 client counts x 3 repeats, one failed
// run, a tmpfs tier that is not durable, per-second timelines and real HDR
// histograms.
type fixture struct {
	st    *results.Study
	runs  []results.Run
	hists map[string]*hdr.Histogram
}

// fixtureOpts varies the fixture for the tests that need something unusual.
type fixtureOpts struct {
	placements []string // names of placements 2 and 3 (1 is all-disk)
	clients    []int
	repeat     int
	seconds    int // measured seconds per run
	// fewSamples is the placement whose runs at the largest client count
	// record too few latencies for p99.9.
	fewSamples string
	// failGroup fails every run of this placement at the largest client
	// count with sync durability.
	failGroup string
}

func defaultOpts() fixtureOpts {
	return fixtureOpts{placements: []string{"wal-ram", "all-ram"}, clients: []int{4, 16}, repeat: 3, seconds: 10,
		fewSamples: "all-ram"}
}

var fixtureStart = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func newFixture(o fixtureOpts) *fixture {
	names := append([]string{"all-disk"}, o.placements...)
	finished := fixtureStart.Add(42 * time.Minute)
	st := &results.Study{ID: "st-7f3a", Name: "wal-placement", Engine: "pebble", Workload: "ycsb-a", Baseline: "all-disk",
		StartedAt: fixtureStart, FinishedAt: &finished, Status: results.StudyDone,
		Env: hostenv.Env{Hostname: "bench-01", Kernel: "6.1.0-18-amd64", OS: "linux/amd64", CPUModel: "AMD EPYC 7B13",
			CPUs: 8, MemoryBytes: 32 << 30, GoVersion: "go1.26.8", TierbenchVersion: "v0.4.0"},
		Tiers: map[string]tier.Info{
			"disk": {Name: "disk", Path: "/var/tmp/tierbench", FSType: "ext4", MountPoint: "/", MountOptions: "rw,relatime",
				Device: "/dev/nvme0n1p2", Durable: true},
			"ram": {Name: "ram", Path: "/dev/shm/tierbench", FSType: "tmpfs", MountPoint: "/dev/shm",
				MountOptions: "rw,nosuid,nodev", Device: "tmpfs", Note: "tmpfs keeps its files in RAM only"},
		},
		Placements: []results.Placement{
			{Name: names[0], Components: map[string]string{"data": "disk", "wal": "disk"}},
			{Name: names[1], Components: map[string]string{"data": "disk", "wal": "ram"}},
			{Name: names[2], Components: map[string]string{"data": "ram", "wal": "ram"}},
		},
		Durability: []string{"sync", "nosync"}, Clients: o.clients,
		WorkloadParams: map[string]string{"records": "50000", "value_size": "100", "read_ratio": "0.5"},
		WarmupS:        2, DurationS: float64(o.seconds), Repeat: o.repeat, EngineVersion: "v2.1.7",
		Source: "name: wal-placement\nengine: pebble\nbaseline: all-disk\n",
	}
	f := &fixture{st: st, hists: map[string]*hdr.Histogram{}}
	rng := rand.New(rand.NewPCG(7, 11))
	seq := 0
	for _, d := range st.Durability {
		for _, c := range st.Clients {
			for rep := 1; rep <= o.repeat; rep++ {
				for pi, p := range st.Placements {
					seq++
					f.addRun(rng, o, seq, pi, p, d, c, rep)
				}
			}
		}
	}
	return f
}

// speedup is each placement's throughput factor over all-disk: a RAM WAL
// helps synced commits a lot and unsynced ones little.
func speedup(pi int, d string) float64 {
	if d == "sync" {
		return []float64{1, 2.1, 2.5}[pi]
	}
	return []float64{1, 1.05, 1.3}[pi]
}

func (f *fixture) addRun(rng *rand.Rand, o fixtureOpts, seq, pi int, p results.Placement, d string, c, rep int) {
	maxClients := o.clients[len(o.clients)-1]
	r := results.Run{ID: fmt.Sprintf("run-%03d", seq), StudyID: f.st.ID, Seq: seq, Placement: p.Name, Components: p.Components,
		Durability: d, Clients: c, Repeat: rep, Status: results.RunOK,
		StartedAt: fixtureStart.Add(time.Duration(seq) * time.Minute), WarmupS: f.st.WarmupS, DurationS: f.st.DurationS}
	r.FinishedAt = r.StartedAt.Add(time.Duration(f.st.WarmupS+f.st.DurationS) * time.Second)
	failed := (p.Name == "wal-ram" && d == "nosync" && c == maxClients && rep == 2) ||
		(p.Name == o.failGroup && d == "sync" && c == maxClients)
	if failed {
		r.Status, r.Error = results.RunFailed, "engine: open WAL: no space left on device"
		f.runs = append(f.runs, r)
		return
	}
	rate := 900 * math.Pow(float64(c), 0.6) * speedup(pi, d) * (1 + 0.04*rng.NormFloat64())
	if d == "nosync" {
		rate *= 6
	}
	r.Timeline = timeline(rng, f.st.WarmupS, o.seconds, rate)
	r.Telemetry, r.TelemetryTimeline = deviceTelemetry(p, int(f.st.DurationS), rate)
	samples := 2000
	if p.Name == o.fewSamples && c == maxClients {
		samples = 200
	}
	h := latencies(rng, samples, float64(c)/rate)
	f.hists[r.ID] = h
	r.Latency = hist.Summarize(h)
	r.Ops = int64(rate * f.st.DurationS)
	r.ThroughputOpsS = rate
	f.runs = append(f.runs, r)
}

// timeline makes per-second intervals: warmup ramps up, the measured window
// wobbles around rate.
func timeline(rng *rand.Rand, warmup float64, seconds int, rate float64) []results.Interval {
	var tl []results.Interval
	for i := 0; i < int(warmup)+seconds; i++ {
		phase, r := "measured", rate*(1+0.05*rng.NormFloat64())
		if float64(i) < warmup {
			phase, r = "warmup", rate*(0.5+0.2*float64(i))
		}
		tl = append(tl, results.Interval{T: float64(i + 1), Length: 1, Phase: phase, Ops: int64(r), OpsS: float64(int64(r))})
	}
	return tl
}

// latencies records n log-normal latencies around mean seconds.
func latencies(rng *rand.Rand, n int, mean float64) *hdr.Histogram {
	h := hist.New()
	for range n {
		s := mean * math.Exp(0.6*rng.NormFloat64())
		hist.Record(h, time.Duration(s*float64(time.Second)))
	}
	return h
}

// input is the report input for the fixture, as the CLI would build it.
func (f *fixture) input() Input {
	return Input{Study: f.st, Runs: f.runs, Analysis: stats.Analyze(f.st, f.runs), Histogram: f.histogram}
}

func (f *fixture) histogram(runID, op, kind, phase string) (*hdr.Histogram, error) {
	h, ok := f.hists[runID]
	if !ok || op != results.OpAll || kind != results.KindLatency || phase != "measured" {
		return nil, fmt.Errorf("no histogram %s/%s/%s for run %s", op, kind, phase, runID)
	}
	return h, nil
}

// deviceTelemetry gives the runs of placements on the disk tier a device
// with one write per two operations; the ram tier has no device (tmpfs).
func deviceTelemetry(p results.Placement, seconds int, rate float64) (*telemetry.Summary, *telemetry.Report) {
	rep := &telemetry.Report{Tiers: map[string][]telemetry.DiskSample{}}
	sum := telemetry.Summary{Tiers: map[string]telemetry.TierSummary{}}
	for _, tierName := range p.Components {
		if tierName != "disk" || rep.Tiers[tierName] != nil {
			continue
		}
		for s := 1; s <= seconds; s++ {
			rep.Tiers[tierName] = append(rep.Tiers[tierName], telemetry.DiskSample{T: float64(s), DiskRates: telemetry.DiskRates{WriteIOPS: rate / 2}})
		}
		sum.Tiers[tierName] = telemetry.TierSummary{Device: "vda", DiskRates: telemetry.DiskRates{WriteIOPS: rate / 2}}
	}
	rep.Summary = sum
	return &sum, rep
}
