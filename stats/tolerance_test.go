package stats

import (
	"math"
	"testing"
)

// TestToleranceFactor: the one-sided normal tolerance factors for 95% of
// the population at 95% confidence, as tabled (Krishnamoorthy and Mathew
// 2009, table B1; NIST's handbook gives the same).
func TestToleranceFactor(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{3, 7.656}, {5, 4.203}, {10, 2.911}, {20, 2.396}} {
		if got := toleranceFactor(c.n, 0.95, 0.95); math.Abs(got-c.want) > 0.01*c.want {
			t.Errorf("n=%d: k=%.3f, want %.3f", c.n, got, c.want)
		}
	}
}
