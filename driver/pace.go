package driver

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Arrival names the spacing of intended start times in open loop: an
// arrival process (see Arrivals); empty is Constant.
type Arrival string

// Arrival processes.
const (
	Constant Arrival = "constant"
	Poisson  Arrival = "poisson"
)

// Arrivals is an arrival process: the schedule of one client's intended
// start times in open loop. Next is the gap from one intended start to
// the next, drawing from the client's rng if the process is random. A
// client's first start is staggered by its share of the mean gap, whatever
// the process.
type Arrivals interface {
	Next(rng *rand.Rand) time.Duration
}

// arrivals makes each arrival process for a client whose mean gap is
// given: a new process is a type and a line here.
var arrivals = map[Arrival]func(mean time.Duration) Arrivals{
	Constant: func(mean time.Duration) Arrivals { return constantArrivals(mean) },
	Poisson:  func(mean time.Duration) Arrivals { return poissonArrivals(mean) },
}

// ArrivalNames are the arrival processes, sorted.
func ArrivalNames() []string {
	names := make([]string, 0, len(arrivals))
	for a := range arrivals {
		names = append(names, string(a))
	}
	slices.Sort(names)
	return names
}

// arrivalsOf is the process a names for a mean gap: Constant when empty
// (Validate refuses a name that is not in arrivals).
func arrivalsOf(a Arrival, mean time.Duration) Arrivals {
	if f, ok := arrivals[a]; ok {
		return f(mean)
	}
	return constantArrivals(mean)
}

// constantArrivals are evenly spaced, this gap apart.
type constantArrivals time.Duration

func (a constantArrivals) Next(*rand.Rand) time.Duration { return time.Duration(a) }

// poissonArrivals are a Poisson process of this mean gap: the gaps are
// exponential, one draw each.
type poissonArrivals time.Duration

func (a poissonArrivals) Next(rng *rand.Rand) time.Duration {
	return time.Duration(rng.ExpFloat64() * float64(a))
}

// pacer is one open-loop client's schedule, apart from the loop that
// waits for it (as vegeta's Pacer is): next gives each intended start in
// turn, as an offset from the run's begin, from the target rate, the
// client's place among the clients and its arrival process alone. No
// clock is read, so the schedule is tested as a function (pace_test.go),
// and an operation that runs late never moves the starts after it
// (coordinated omission stays measured, not hidden).
type pacer struct {
	arrivals Arrivals
	rng      *rand.Rand
	at       time.Duration
	started  bool
	stagger  time.Duration
	// seed is the seed drawn from (cfg.Seed, or the random one).
	seed uint64
}

// newPacer is client i of n's schedule at cfg.TargetRate (shared evenly
// between the clients) with cfg.Arrival, drawing from cfg.Seed (random
// when 0) and the client's number.
func newPacer(cfg Config, i, n int) *pacer {
	gap := time.Duration(float64(time.Second) / (cfg.TargetRate / float64(n)))
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &pacer{arrivals: arrivalsOf(cfg.Arrival, gap), rng: rand.New(rand.NewPCG(seed, uint64(i))),
		// Clients are staggered by their share of the gap, so a constant
		// schedule does not fire them all at once.
		stagger: gap * time.Duration(i) / time.Duration(n), seed: seed}
}

// next is the next intended start, from the run's begin.
func (p *pacer) next() time.Duration {
	if !p.started {
		p.started, p.at = true, p.stagger
		return p.at
	}
	p.at += p.arrivals.Next(p.rng)
	return p.at
}
