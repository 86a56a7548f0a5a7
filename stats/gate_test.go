package stats

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/results"
)

// TestJudgeGate: worse fails on worse verdicts alone; not-equivalent on
// every row not judged equivalent, nothing to compare included; any other
// condition is refused naming the values.
func TestJudgeGate(t *testing.T) {
	rows := []Row{
		{Group: "a", Verdict: Equivalent}, {Group: "b", Verdict: Worse}, {Group: "c", Verdict: Better},
		{Group: "d", Verdict: Inconclusive}, {Group: "e", Verdict: NoData},
	}
	for _, c := range []struct {
		failOn, failed string // failed: the failing rows' groups
		passed         bool
	}{
		{FailOnWorse, "b", false},
		{FailOnNotEquivalent, "bcde", false},
	} {
		g, err := JudgeGate(rows, c.failOn, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, r := range g.Failed {
			got.WriteString(r.Group)
		}
		if got.String() != c.failed || g.Passed() != c.passed || g.Rows != 5 || len(g.NoData) != 1 {
			t.Errorf("--fail-on %s: failed %q (want %q), passed %v, %d rows judged, %d with no data", c.failOn, got.String(), c.failed, g.Passed(), g.Rows, len(g.NoData))
		}
	}
	for _, ok := range [][]Row{{{Verdict: Equivalent}, {Verdict: Inconclusive}, {Verdict: Better}}, nil} {
		if g, _ := JudgeGate(ok, FailOnWorse, 0); !g.Passed() {
			t.Errorf("--fail-on worse fails %v", ok)
		}
	}
	if _, err := JudgeGate(rows, "slower", 0); err == nil || !strings.Contains(err.Error(), "use worse or not-equivalent") {
		t.Errorf("an unknown condition: %v", err)
	}
}

// TestComparable: studies of another engine, workload, record count or
// machine are refused with the difference named; facts a study did not
// record are not held against it.
func TestComparable(t *testing.T) {
	base := results.Study{ID: "a", Engine: "pebble", Workload: "ycsb-a", WorkloadParams: map[string]string{"records": "1000"},
		Env: hostenv.Env{Hostname: "ci-7", CPUModel: "AMD EPYC 7B13", CPUs: 4, Kernel: "6.1", MemoryBytes: 16 << 30}}
	for _, c := range []struct {
		name string
		edit func(s *results.Study)
		want string // "" comparable
	}{
		{"the same", func(*results.Study) {}, ""},
		{"another kernel and memory", func(s *results.Study) { s.Env.Kernel, s.Env.MemoryBytes = "6.12", 32<<30 }, ""},
		{"a host not recorded", func(s *results.Study) { s.Env = hostenv.Env{} }, ""},
		{"another engine", func(s *results.Study) { s.Engine = "redis" }, "engine differs: a has pebble, b has redis"},
		{"another workload", func(s *results.Study) { s.Workload = "ycsb-b" }, "workload differs"},
		{"another record count", func(s *results.Study) { s.WorkloadParams = map[string]string{"records": "2000"} }, "record count differs"},
		{"another hostname", func(s *results.Study) { s.Env.Hostname = "ci-8" },
			"host differs: a ran on ci-7 (4 CPUs, AMD EPYC 7B13), b on ci-8 (4 CPUs, AMD EPYC 7B13)"},
		{"another CPU count", func(s *results.Study) { s.Env.CPUs = 8 }, "b on ci-7 (8 CPUs, AMD EPYC 7B13)"},
		{"another CPU model", func(s *results.Study) { s.Env.CPUModel = "Intel Xeon" }, "host differs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			other := base
			other.ID = "b"
			c.edit(&other)
			why := strings.Join(Comparable(&base, &other), "; ")
			if (c.want == "") != (why == "") || !strings.Contains(why, c.want) {
				t.Errorf("got %q, want %q", why, c.want)
			}
		})
	}
}

// TestGateTolerance: under a tolerance, a worse row fails only when its
// whole 95% CI lies beyond it, on the worse side of its metric.
func TestGateTolerance(t *testing.T) {
	rows := []Row{
		{Metric: "throughput", Verdict: Worse, HigherBest: true, DiffPctCI: &[2]float64{-4, -1}},
		{Metric: "throughput", Verdict: Worse, HigherBest: true, DiffPctCI: &[2]float64{-12, -6}},
		{Metric: "p99", Verdict: Worse, HigherBest: false, DiffPctCI: &[2]float64{2, 9}},
		{Metric: "p99", Verdict: Worse, HigherBest: false, DiffPctCI: &[2]float64{7, 30}},
	}
	g, err := JudgeGate(rows, FailOnWorse, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Failed) != 2 || g.Failed[0].DiffPctCI[0] != -12 || g.Failed[1].DiffPctCI[0] != 7 || len(g.Tolerated) != 2 {
		t.Errorf("failed %v, tolerated %v: want the two rows whose CI lies beyond 5%%", g.Failed, g.Tolerated)
	}
	if g.Condition() != "worse by more than 5%" {
		t.Errorf("condition %q", g.Condition())
	}
	if _, err := JudgeGate(rows, FailOnNotEquivalent, 0.05); err == nil {
		t.Error("a tolerance with not-equivalent was taken")
	}
}
