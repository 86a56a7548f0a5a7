package oltp

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Random number distributions of sysbench 1.0.20 (src/sb_rand.c), which
// sysbench.rand.default uses for every id and for k: --rand-type, default
// special in 1.0.x (1.1 changed it to uniform), with sysbench's defaults
// --rand-spec-iter=12, --rand-spec-pct=1, --rand-spec-res=75 and
// --rand-pareto-h=0.2. Values are uint32 as in sysbench, and every
// double-to-integer conversion truncates as C's does.
const (
	randSpecial  = "special"
	randUniform  = "uniform"
	randGaussian = "gaussian"
	randPareto   = "pareto"

	specIter = 12
	specPct  = 1
	specRes  = 75
	paretoH  = 0.2
)

// randTypes lists the distributions in sysbench's order.
var randTypes = []string{randUniform, randGaussian, randSpecial, randPareto}

// Precomputed as sb_rand_init does.
var (
	iterMult    = 1.0 / specIter
	pctMult     = specPct / 100.0
	pct2Mult    = specPct / 200.0
	resMult     = 100.0 / (100.0 - specRes)
	paretoPower = math.Log(paretoH) / math.Log(1.0-paretoH)
)

// distribution draws an integer in [a, b] from r.
type distribution func(r *rand.Rand, a, b uint32) uint32

func distributionOf(name string) (distribution, error) {
	switch name {
	case randSpecial:
		return randSpecialDist, nil
	case randUniform:
		return randUniformDist, nil
	case randGaussian:
		return randGaussianDist, nil
	case randPareto:
		return randParetoDist, nil
	}
	return nil, fmt.Errorf("%s %q: must be one of %v (sysbench's --rand-type)", pRandType, name, randTypes)
}

// randUniformDist is sb_rand_uniform: a + u * (b - a + 1), u in [0, 1).
func randUniformDist(r *rand.Rand, a, b uint32) uint32 {
	return a + uint32(r.Float64()*float64(b-a+1))
}

// randGaussianDist is sb_rand_gaussian: the mean of specIter uniform draws
// over [a, b].
func randGaussianDist(r *rand.Rand, a, b uint32) uint32 {
	t := float64(b - a + 1)
	sum := 0.0
	for range specIter {
		sum += r.Float64() * t
	}
	return a + uint32(sum*iterMult)
}

// randSpecialDist is sb_rand_special: with specRes% probability a uniform
// draw from the specPct% of the range around its centre (for 1..10000, the
// ~76 ids 4975..5050 get 75% of all draws), otherwise a gaussian-like mean
// of specIter uniform draws over the whole range.
func randSpecialDist(r *rand.Rand, a, b uint32) uint32 {
	t := float64(b - a)
	rangeSize := t * resMult
	rnd := r.Float64()
	res := rnd * rangeSize
	if res < t {
		sum := 0.0
		for range specIter {
			sum += r.Float64()
		}
		return uint32(float64(a) + sum*t*iterMult)
	}
	d := t * pctMult
	res = rnd * (d + 1)
	res += t/2 - t*pct2Mult
	return a + uint32(res)
}

// randParetoDist is sb_rand_pareto with h = 0.2.
func randParetoDist(r *rand.Rand, a, b uint32) uint32 {
	return a + uint32(float64(b-a+1)*math.Pow(r.Float64(), paretoPower))
}

// Templates of sysbench's c and pad values (oltp_common.lua): '#' is a
// uniformly random digit.
const (
	// cTemplate: 10 groups of 11 digits, 119 characters, for CHAR(120).
	cTemplate = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########"
	// padTemplate: 5 groups, 59 characters, for CHAR(60).
	padTemplate = "###########-###########-###########-###########-###########"
)

// appendRandString appends tmpl with each '#' replaced by a random digit
// (sb_rand_str: sb_rand_uniform('0', '9')).
func appendRandString(b []byte, r *rand.Rand, tmpl string) []byte {
	for i := 0; i < len(tmpl); i++ {
		ch := tmpl[i]
		if ch == '#' {
			ch = '0' + byte(r.Float64()*10)
		}
		b = append(b, ch)
	}
	return b
}
