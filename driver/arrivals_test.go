package driver

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestArrivals checks the arrival processes a Config chooses from: the
// names, a constant gap, and Poisson gaps that are one exponential draw
// each from the client's generator, as open loop has always drawn them
// (a seed gives the same schedule).
func TestArrivals(t *testing.T) {
	if got := ArrivalNames(); !slices.Equal(got, []string{"constant", "poisson"}) {
		t.Errorf("arrival names %v", got)
	}
	const gap = 2 * time.Millisecond
	for _, a := range []Arrival{"", Constant} {
		if got := arrivalsOf(a, gap).Next(nil); got != gap {
			t.Errorf("arrival %q: gap %v, want %v", a, got, gap)
		}
	}
	p := arrivalsOf(Poisson, gap)
	rng, want := rand.New(rand.NewPCG(7, 3)), rand.New(rand.NewPCG(7, 3))
	for range 1000 {
		if got, w := p.Next(rng), time.Duration(want.ExpFloat64()*float64(gap)); got != w {
			t.Fatalf("poisson gap %v, want %v", got, w)
		}
	}
}
