package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPairedCoverage simulates studies whose rounds drift (the machine's
// speed varies from round to round) or do not, and checks that the paired
// 95% CI holds the true ratio in 93-97% of them, and that pairing finds a
// true 10% gain that the drift would hide. Seeded: the same every time.
func TestPairedCoverage(t *testing.T) {
	const trials, rounds, truth = 4000, 5, 1.10
	cases := []struct {
		name       string
		drift      float64 // per round, uniform in [1-drift, 1+drift]
		noise      float64 // per run, log-normal sigma
		minBetter  float64 // the least share of studies called better
		coverageLo float64
		coverageHi float64
	}{
		{"drift between rounds", 0.2, 0.03, 0.90, 0.93, 0.97},
		{"iid noise", 0, 0.03, 0.90, 0.93, 0.97},
		{"noisy runs", 0, 0.10, 0.05, 0.93, 0.97},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(26, 2026))
			covered, better := 0, 0
			for range trials {
				a, b := map[int]float64{}, map[int]float64{}
				for r := 1; r <= rounds; r++ {
					speed := 1 - tc.drift + 2*tc.drift*rng.Float64()
					b[r] = 1000 * speed * math.Exp(tc.noise*rng.NormFloat64())
					a[r] = 1000 * truth * speed * math.Exp(tc.noise*rng.NormFloat64())
				}
				c := Paired(a, b, true, 0.05)
				if c.CI95[0] <= truth && truth <= c.CI95[1] {
					covered++
				}
				if c.Verdict == Better {
					better++
				}
			}
			coverage := float64(covered) / trials
			t.Logf("coverage %.3f, better in %.3f", coverage, float64(better)/trials)
			if coverage < tc.coverageLo || coverage > tc.coverageHi {
				t.Errorf("coverage %.3f, want %.2f-%.2f", coverage, tc.coverageLo, tc.coverageHi)
			}
			if power := float64(better) / trials; power < tc.minBetter {
				t.Errorf("better in %.3f of studies, want at least %.2f", power, tc.minBetter)
			}
		})
	}
}

// TestIdenticalSeriesFalsePositives: two identical series are called
// better or worse in about 5% of studies (the test's size), and
// equivalent in most when the runs are steady.
func TestIdenticalSeriesFalsePositives(t *testing.T) {
	const trials, rounds = 4000, 6
	rng := rand.New(rand.NewPCG(27, 2026))
	decided, equivalent := 0, 0
	for range trials {
		a, b := map[int]float64{}, map[int]float64{}
		for r := 1; r <= rounds; r++ {
			speed := 0.8 + 0.4*rng.Float64()
			a[r] = 1000 * speed * math.Exp(0.02*rng.NormFloat64())
			b[r] = 1000 * speed * math.Exp(0.02*rng.NormFloat64())
		}
		switch Paired(a, b, true, 0.05).Verdict {
		case Better, Worse:
			decided++
		case Equivalent:
			equivalent++
		}
	}
	t.Logf("different in %.3f, equivalent in %.3f", float64(decided)/trials, float64(equivalent)/trials)
	if rate := float64(decided) / trials; rate < 0.03 || rate > 0.07 {
		t.Errorf("identical series called different in %.3f of studies, want about 0.05", rate)
	}
	if rate := float64(equivalent) / trials; rate < 0.8 {
		t.Errorf("identical steady series equivalent in only %.3f of studies", rate)
	}
}
