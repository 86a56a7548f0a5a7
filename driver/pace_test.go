package driver

import (
	"testing"
	"time"
)

// TestPacer checks the open-loop schedule as a function, without a clock:
// a constant schedule is the client's stagger then one gap apart; a
// Poisson one only moves forward, draws the same starts from the same
// seed, and its mean gap over many starts is the client's share of the
// rate (seeded, so the figure is fixed, not a timing).
func TestPacer(t *testing.T) {
	const n = 4
	cfg := Config{TargetRate: 400, Seed: 7} // 100 ops/s per client: 10ms apart
	for i := range n {
		p := newPacer(cfg, i, n)
		want := 10 * time.Millisecond * time.Duration(i) / n
		for k := range 5 {
			if got := p.next(); got != want {
				t.Fatalf("constant, client %d, start %d: %v, want %v", i, k, got, want)
			}
			want += 10 * time.Millisecond
		}
	}

	cfg.Arrival = Poisson
	a, b := newPacer(cfg, 1, n), newPacer(cfg, 1, n)
	const starts = 20000
	var last, first time.Duration
	for k := range starts {
		got := a.next()
		if again := b.next(); got != again {
			t.Fatalf("poisson start %d: %v, then %v from the same seed", k, got, again)
		}
		if got < last {
			t.Fatalf("poisson start %d at %v, before the one before (%v)", k, got, last)
		}
		if k == 0 {
			first = got
		}
		last = got
	}
	mean := (last - first) / (starts - 1)
	if mean < 9500*time.Microsecond || mean > 10500*time.Microsecond {
		t.Errorf("poisson mean gap %v over %d starts, want 10ms within 5%%", mean, starts)
	}
	c, d := newPacer(cfg, 1, n), newPacer(Config{TargetRate: 400, Seed: 8, Arrival: Poisson}, 1, n)
	c.next()
	d.next() // the first start is the stagger, whatever the seed
	if c.next() == d.next() {
		t.Errorf("seeds 7 and 8 draw the same second start")
	}
}
