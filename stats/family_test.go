package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
)

// simStudy is a simulated study of 4 placements (p0 the baseline) x 2
// durabilities x 3 client counts, whose rounds drift (the machine's speed
// varies from round to round by up to ±drift) and whose runs vary by cv
// within a round; nosync is durGain times sync, placement p1 effect times
// the baseline. Every run records the load generator's CPU per op, the
// same for every placement: 48 comparisons in all.
func simStudy(rng *rand.Rand, rounds int, cv, drift, durGain, effect float64) (*results.Study, []results.Run) {
	st := &results.Study{Baseline: "p0", Durability: []string{"sync", "nosync"}, Clients: []int{1, 16, 64},
		Placements: []results.Placement{{Name: "p0"}, {Name: "p1"}, {Name: "p2"}, {Name: "p3"}}}
	var runs []results.Run
	for r := 1; r <= rounds; r++ {
		speed := 1 - drift + 2*drift*rng.Float64()
		for _, d := range st.Durability {
			for _, c := range st.Clients {
				for _, p := range st.Placements {
					tp := 1000 * float64(c) * speed * math.Exp(cv*rng.NormFloat64())
					if d == "nosync" {
						tp *= durGain
					}
					if p.Name == "p1" {
						tp *= effect
					}
					cpu := 20 * math.Exp(cv*rng.NormFloat64())
					runs = append(runs, results.Run{Placement: p.Name, Durability: d, Clients: c, Repeat: r, Status: results.RunOK,
						ThroughputOpsS: tp, Telemetry: &telemetry.Summary{LoadGen: &telemetry.LoadGenSummary{CPUUsPerOp: cpu}}})
				}
			}
		}
	}
	return st, runs
}

// TestFamilyErrorRates: studies of identical placements get no better or
// worse among their placement and CPU-per-op comparisons in at least 95%
// of studies, whether durability truly differs or not, and a true 10%
// gain of one placement is still found at 8 rounds with runs varying by
// 3%. It also shows why the guard is Holm's and not Benjamini-Hochberg's:
// beside a true durability effect, the latter calls identical placements
// different far more often. Seeded: the same every time.
func TestFamilyErrorRates(t *testing.T) {
	const trials = 1000
	cases := []struct {
		name    string
		rounds  int
		durGain float64
		effect  float64
		adjust  func([]*float64)
		// At most this share of studies with a wrong better/worse among
		// the placement and CPU comparisons (beyond the simulation's own
		// sampling error); at least this share of p1's 6 cells found
		// better, and of studies finding it at some cell.
		maxFalse, minPower, minFoundAny float64
	}{
		{"identical, 3 rounds", 3, 1, 1, holm, 0.05, 0, 0},
		{"identical, 5 rounds", 5, 1, 1, holm, 0.05, 0, 0},
		{"identical placements, nosync 2x, 5 rounds", 5, 2, 1, holm, 0.05, 0, 0},
		{"p1 10% faster, 8 rounds", 8, 2, 1.10, holm, 0.05, 0.8, 0.95},
		{"Benjamini-Hochberg beside a durability effect", 5, 2, 1, benjaminiHochberg, 1, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func(was func([]*float64)) { adjustP = was }(adjustP)
			adjustP = tc.adjust
			rng := rand.New(rand.NewPCG(43, 2026))
			falseStudies, cells, foundAny, unguarded := 0, 0, 0, 0
			for range trials {
				st, runs := simStudy(rng, tc.rounds, 0.03, 0.2, tc.durGain, tc.effect)
				a := Analyze(st, runs)
				wrong, rawWrong, p1 := false, false, 0
				for _, j := range a.Comparisons {
					decided := j.Verdict == Better || j.Verdict == Worse
					truly := j.Kind == KindPlacement && j.Series == "p1" && tc.effect != 1 || j.Kind == KindDurability && tc.durGain != 1
					switch {
					case truly && j.Kind == KindPlacement && j.Verdict == Better:
						p1++
					case !truly && decided:
						wrong = true
					}
					if !truly && j.P != nil && *j.P < Alpha {
						rawWrong = true
					}
				}
				if wrong {
					falseStudies++
				}
				if rawWrong {
					unguarded++
				}
				cells += p1
				if p1 > 0 {
					foundAny++
				}
			}
			falseRate, power, anyRate := float64(falseStudies)/trials, float64(cells)/(6*trials), float64(foundAny)/trials
			t.Logf("48 comparisons; a wrong verdict in %.3f of studies (%.3f unguarded); p1 better at %.3f of its cells, at some cell in %.3f of studies",
				falseRate, float64(unguarded)/trials, power, anyRate)
			// A rate measured over 1,000 studies is itself off by up to
			// two standard errors (1.4 points at 5%).
			if allowance := 2 * math.Sqrt(tc.maxFalse*(1-tc.maxFalse)/trials); falseRate > tc.maxFalse+allowance {
				t.Errorf("a wrong better/worse in %.3f of studies, want at most %.2f (+%.3f sampling)", falseRate, tc.maxFalse, allowance)
			}
			if power < tc.minPower || anyRate < tc.minFoundAny {
				t.Errorf("the true gain found at %.3f of cells and at some cell in %.3f of studies, want %.2f and %.2f", power, anyRate, tc.minPower, tc.minFoundAny)
			}
		})
	}
}

// TestFamilyKinds: the family holds each kind of comparison the study
// judges, and durability comparisons say their sides were not adjacent.
func TestFamilyKinds(t *testing.T) {
	st, runs := simStudy(rand.New(rand.NewPCG(1, 2)), 3, 0.03, 0, 2, 1)
	a := Analyze(st, runs)
	kinds := map[string]int{}
	for _, j := range a.Comparisons {
		kinds[j.Kind]++
		if j.Adjacent == (j.Kind == KindDurability) {
			t.Errorf("%s %s: adjacent %v", j.Kind, j.Series, j.Adjacent)
		}
	}
	want := map[string]int{KindPlacement: 18, KindLoadCPU: 18, KindDurability: 12}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("family %v, want %v", kinds, want)
	}
	if s := a.Summary(); s.Judged != 48 || s.Method != Multiplicity {
		t.Errorf("summary %+v", s)
	}
	v := a.Versus(Key{"p1", "nosync", 16}, Key{"p1", "sync", 16})
	if v == nil || v.PAdjusted == nil || *v.PAdjusted < *v.P {
		t.Fatalf("durability comparison missing or unadjusted: %+v", v)
	}
}

// TestHolm checks the adjustment against values worked by hand.
func TestHolm(t *testing.T) {
	p := []float64{0.01, 0.04, 0.03, 0.005}
	ptrs := make([]*float64, len(p))
	for i := range p {
		ptrs[i] = &p[i]
	}
	holm(ptrs)
	// ascending 0.005 0.01 0.03 0.04, times 4 3 2 1: 0.02 0.03 0.06 0.04 -> running max 0.02 0.03 0.06 0.06
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range p {
		if math.Abs(p[i]-want[i]) > 1e-12 {
			t.Errorf("holm: %v, want %v", p, want)
			break
		}
	}
}

// TestCrashRunsAreNotCompared: in a study that crashes its runs, the
// series that ran with a crash are in state CrashRun and in no judged
// comparison (their window ends at the crash); those without one are
// compared as usual.
func TestCrashRunsAreNotCompared(t *testing.T) {
	st := &results.Study{Baseline: "disk", Durability: []string{"sync", "nosync"}, Clients: []int{4}, Crashes: []string{"none", "power"},
		Placements: []results.Placement{{Name: "disk"}, {Name: "ram"}}}
	var runs []results.Run
	for r := 1; r <= 3; r++ {
		for _, d := range st.Durability {
			for _, p := range st.Placements {
				for _, crash := range st.Crashes {
					run := results.Run{Placement: p.Name, Durability: d, Clients: 4, Repeat: r, Status: results.RunOK,
						ThroughputOpsS: 1000 * float64(r+len(p.Name)), Options: map[string]string{"crash": crash}}
					if crash != "none" {
						run.Crash = &results.Crash{Kind: crash}
					}
					runs = append(runs, run)
				}
			}
		}
	}
	view, viewRuns := results.SeriesView(st, runs)
	a := Analyze(view, viewRuns)
	for _, g := range a.Groups {
		if crashed := strings.Contains(g.Series, "crash=power"); crashed != (g.Verdict == CrashRun) {
			t.Errorf("%s %s: verdict %q", g.Series, g.Durability, g.Verdict)
		}
	}
	if len(a.Comparisons) == 0 {
		t.Fatal("nothing compared")
	}
	for _, j := range a.Comparisons {
		if strings.Contains(j.Series, "crash=power") || strings.Contains(j.Against, "crash=power") {
			t.Errorf("a crash run was judged: %s %s %s against %s", j.Kind, j.Series, j.Durability, j.Against)
		}
	}
}

// benjaminiHochberg replaces each p value in place by its adjusted value:
// in ascending order, the smallest over j >= i of p_(j) m / j, at most 1.
// Not the study's guard (see Multiplicity): the simulation measures it
// against Holm.
func benjaminiHochberg(ps []*float64) {
	m := len(ps)
	sorted := slices.Clone(ps)
	sort.SliceStable(sorted, func(i, j int) bool { return *sorted[i] < *sorted[j] })
	running := 1.0
	for i := m - 1; i >= 0; i-- {
		running = min(running, *sorted[i]*float64(m)/float64(i+1))
		*sorted[i] = running
	}
}
