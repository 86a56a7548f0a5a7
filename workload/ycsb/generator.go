package ycsb

import (
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
)

// The generators below follow YCSB's site.ycsb.generator classes closely,
// quirks included, so that a tierbench run skews its keys the way a Java
// YCSB run with the same properties would. Each generator is owned by one
// goroutine: none of them lock, and Next never allocates.

// DefaultZipfianConstant is YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT.
const DefaultZipfianConstant = 0.99

// ScrambledItemCount is the size of the key space YCSB's
// ScrambledZipfianGenerator draws from before hashing into the real one.
// YCSB's ZETAN was computed for this count (recent YCSB sources declare
// ITEM_COUNT as 1e16 but still use the 1e10 zeta; we keep the pair that
// agrees).
const ScrambledItemCount int64 = 10_000_000_000

// ScrambledZetaN is YCSB's precomputed zeta(ScrambledItemCount, 0.99).
const ScrambledZetaN = 26.46902820178302

// Zeta returns sum_{i=1..n} 1/i^theta, the normalising constant of a
// zipfian distribution over n items. It costs O(n); compute it once per
// workload and hand it to the generators.
func Zeta(n int64, theta float64) float64 {
	return zetaFrom(0, n, theta, 0)
}

// zetaFrom extends a zeta sum over st items to n items, which is how YCSB
// keeps the skew exact when the item count grows without starting over.
func zetaFrom(st, n int64, theta, initial float64) float64 {
	sum := initial
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// Zipfian draws integers in [base, base+items) with item base the most
// popular, base+1 the next and so on, using the method of Gray et al.,
// "Quickly Generating Billion-Record Synthetic Databases" (SIGMOD 1994), as
// YCSB's ZipfianGenerator does.
type Zipfian struct {
	rng          *rand.Rand
	base, items  int64
	theta, alpha float64
	// intAlpha is alpha rounded when it is an integer up to float
	// rounding (YCSB's theta of 0.99 gives 100), else 0.
	intAlpha     int
	zetan, eta   float64
	zeta2theta   float64
	halfPowTheta float64
	countForZeta int64
}

// NewZipfian returns a zipfian generator over [base, base+items) with
// constant theta (0 < theta < 1). It computes zeta in O(items).
func NewZipfian(rng *rand.Rand, base, items int64, theta float64) *Zipfian {
	return NewZipfianZeta(rng, base, items, theta, Zeta(items, theta))
}

// NewZipfianZeta is NewZipfian with zeta(items, theta) already known, so that
// many clients can share one O(items) computation.
func NewZipfianZeta(rng *rand.Rand, base, items int64, theta, zetan float64) *Zipfian {
	z := &Zipfian{
		rng:          rng,
		base:         base,
		items:        items,
		theta:        theta,
		alpha:        1 / (1 - theta),
		zetan:        zetan,
		zeta2theta:   Zeta(2, theta),
		halfPowTheta: math.Pow(0.5, theta),
		countForZeta: items,
	}
	z.eta = z.computeEta(items)
	if r := math.Round(z.alpha); r >= 1 && r <= 1024 && math.Abs(z.alpha-r) < 1e-9 {
		z.intAlpha = int(r)
	}
	return z
}

// computeEta is Gray's eta. YCSB recomputes it with the item count the
// generator was built with, not the grown one, even after zeta has been
// extended; we do the same so that skews match. Below two items that formula
// is undefined (YCSB yields NaN), so the current count is used instead.
func (z *Zipfian) computeEta(itemcount int64) float64 {
	n := z.items
	if n < 2 {
		n = itemcount
	}
	return (1 - math.Pow(2/float64(n), 1-z.theta)) / (1 - z.zeta2theta/z.zetan)
}

// Next draws from the generator's own item count.
func (z *Zipfian) Next() int64 { return z.NextN(z.items) }

// NextN draws from [base, base+itemcount). When itemcount grew since the
// last call, zeta is extended incrementally (cheap for small growth); when it
// shrank, the old zeta is kept, as YCSB does by default, because a shrinking
// count is almost always a stale read rather than a real change.
func (z *Zipfian) NextN(itemcount int64) int64 {
	if itemcount > z.countForZeta {
		z.zetan = zetaFrom(z.countForZeta, itemcount, z.theta, z.zetan)
		z.countForZeta = itemcount
		z.eta = z.computeEta(itemcount)
	}
	u := z.rng.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+z.halfPowTheta {
		return z.base + 1
	}
	v := int64(float64(itemcount) * z.pow(z.eta*u-z.eta+1))
	// Rounding can land exactly on itemcount; YCSB would return it, but a
	// value outside the range is never useful, so clamp.
	if v >= itemcount {
		v = itemcount - 1
	}
	if v < 0 {
		v = 0
	}
	return z.base + v
}

// pow is x^alpha for x in (0, 1], the largest share of a whole-path
// operation's CPU. math.Pow is exact but slow (it splits off the fraction
// and squares up the integer power with Frexp at every step). An integer
// alpha (YCSB's 100) is squared up with plain multiplications, each
// adding at most one rounding; any other alpha is exp(alpha*ln x). Over
// YCSB's 10^10 scrambled items, 3 keys in 10^7 draws differ from
// math.Pow's by one for the squaring, 8 for exp and log
// (TestZipfianPow).
func (z *Zipfian) pow(x float64) float64 {
	n := z.intAlpha
	if n == 0 {
		return math.Exp(z.alpha * math.Log(x))
	}
	r := 1.0
	for {
		if n&1 != 0 {
			r *= x
		}
		if n >>= 1; n == 0 {
			return r
		}
		x *= x
	}
}

// ScrambledZipfian spreads zipfian popularity over the key space: it draws
// from a zipfian over a huge item space and hashes the result into
// [base, base+items), so hot keys are not clustered (YCSB's
// ScrambledZipfianGenerator, the "zipfian" request distribution).
type ScrambledZipfian struct {
	gen         *Zipfian
	base, items int64
}

// ScrambledZeta returns the zeta a ScrambledZipfian over items needs. For
// theta 0.99 it is YCSB's precomputed constant for ScrambledItemCount. For
// any other theta YCSB would sum 1e10 terms; instead the inner zipfian runs
// over the real item count, so this costs O(items).
func ScrambledZeta(items int64, theta float64) float64 {
	if theta == DefaultZipfianConstant {
		return ScrambledZetaN
	}
	return Zeta(items, theta)
}

// NewScrambledZipfian returns a scrambled zipfian over [base, base+items).
func NewScrambledZipfian(rng *rand.Rand, base, items int64, theta float64) *ScrambledZipfian {
	return NewScrambledZipfianZeta(rng, base, items, theta, ScrambledZeta(items, theta))
}

// NewScrambledZipfianZeta is NewScrambledZipfian with zetan =
// ScrambledZeta(items, theta) computed once by the caller.
func NewScrambledZipfianZeta(rng *rand.Rand, base, items int64, theta, zetan float64) *ScrambledZipfian {
	var gen *Zipfian
	if theta == DefaultZipfianConstant {
		// YCSB: new ZipfianGenerator(0, ITEM_COUNT, ...), an inclusive
		// max, hence ITEM_COUNT+1 items.
		gen = NewZipfianZeta(rng, 0, ScrambledItemCount+1, theta, zetan)
	} else {
		gen = NewZipfianZeta(rng, 0, items, theta, zetan)
	}
	return &ScrambledZipfian{gen: gen, base: base, items: items}
}

// Next draws one key number.
func (s *ScrambledZipfian) Next() int64 {
	return s.base + fnvAbs(s.gen.Next())%s.items
}

// SkewedLatest favours the most recently inserted keys (YCSB's
// SkewedLatestGenerator, the "latest" request distribution). acked is the
// shared count of acknowledged inserts: keys [0, acked) exist.
type SkewedLatest struct {
	acked *atomic.Int64
	zipf  *Zipfian
}

// NewSkewedLatest returns a latest-skewed generator reading acked. Like
// YCSB, the inner zipfian starts over acked-1 items (YCSB's lastValue).
func NewSkewedLatest(rng *rand.Rand, acked *atomic.Int64, theta float64) *SkewedLatest {
	n := acked.Load() - 1
	return NewSkewedLatestZeta(rng, acked, theta, n, Zeta(n, theta))
}

// NewSkewedLatestZeta is NewSkewedLatest with the inner zipfian's initial
// item count n and zeta(n, theta) computed once by the caller.
func NewSkewedLatestZeta(rng *rand.Rand, acked *atomic.Int64, theta float64, n int64, zetan float64) *SkewedLatest {
	return &SkewedLatest{acked: acked, zipf: NewZipfianZeta(rng, 0, n, theta, zetan)}
}

// Next draws one key number in [0, acked). YCSB computes
// last - zipfian(last) with last = acked-1 (the highest acknowledged key),
// so the newest key is the most popular and key 0 is (all but) never chosen;
// we keep that off-by-one.
func (s *SkewedLatest) Next() int64 {
	last := s.acked.Load() - 1
	if last <= 0 {
		return 0
	}
	return last - s.zipf.NextN(last)
}

// Uniform draws key numbers uniformly from [0, items), like YCSB's
// UniformLongGenerator over the loaded records.
type Uniform struct {
	rng   *rand.Rand
	items int64
}

// NewUniform returns a uniform generator over [0, items).
func NewUniform(rng *rand.Rand, items int64) *Uniform {
	return &Uniform{rng: rng, items: items}
}

// Next draws one key number.
func (u *Uniform) Next() int64 { return u.rng.Int64N(u.items) }

// FNV offset basis and prime, as in YCSB's Utils.
const (
	fnvOffsetBasis64 = 0xCBF29CE484222325
	fnvPrime64       = 1099511628211
)

// FNV64 is YCSB's Utils.fnvhash64 before its final Math.abs: FNV-1a over the
// eight bytes of val, least significant first. (Java's arithmetic shift in
// that loop does not matter: each bit is consumed exactly once.)
func FNV64(val uint64) uint64 {
	h := uint64(fnvOffsetBasis64)
	for range 8 {
		octet := val & 0xff
		val >>= 8
		h ^= octet
		h *= fnvPrime64
	}
	return h
}

// fnvAbs is YCSB's fnvhash64 proper: the signed hash made non-negative with
// Math.abs. Like Java, the abs of math.MinInt64 stays negative.
func fnvAbs(val int64) int64 {
	h := int64(FNV64(uint64(val)))
	if h < 0 {
		h = -h
	}
	return h
}

// AppendKey appends YCSB's key name for keynum to dst: "user" followed by
// the decimal key number, hashed with fnvhash64 first when hashed (YCSB's
// insertorder=hashed). zeropadding is YCSB's default 1, i.e. none. It does
// not allocate when dst has room for 23 more bytes.
func AppendKey(dst []byte, keynum int64, hashed bool) []byte {
	if hashed {
		keynum = fnvAbs(keynum)
	}
	dst = append(dst, "user"...)
	if keynum < 0 { // not from YCSB's generators, but keep its text
		return strconv.AppendInt(dst, keynum, 10)
	}
	return appendDecimal(dst, uint64(keynum))
}

// appendDecimal is strconv.AppendUint(dst, v, 10), a tenth of a
// whole-path operation's CPU with hashed keys of 19 digits: it cuts v
// into 8-digit parts first, whose digits come from 32-bit divisions that
// do not wait on each other, where strconv's 64-bit divisions run one
// after another.
func appendDecimal(dst []byte, v uint64) []byte {
	if v < 1e8 {
		return appendShort(dst, uint32(v))
	}
	hi, lo := v/1e8, uint32(v%1e8)
	if hi < 1e8 {
		return appendEight(appendShort(dst, uint32(hi)), lo)
	}
	top, mid := uint32(hi/1e8), uint32(hi%1e8)
	return appendEight(appendEight(appendShort(dst, top), mid), lo)
}

// appendShort appends v (below 10^8) without leading zeros.
func appendShort(dst []byte, v uint32) []byte {
	var b [10]byte
	i := len(b)
	for v >= 10 {
		i -= 2
		copy(b[i:], digitPairs[v%100*2:v%100*2+2])
		v /= 100
	}
	if v > 0 || i == len(b) {
		i--
		b[i] = byte('0' + v)
	}
	return append(dst, b[i:]...)
}

// appendEight appends v (below 10^8) as exactly 8 digits.
func appendEight(dst []byte, v uint32) []byte {
	hi, lo := v/10000, v%10000
	return append(dst,
		digitPairs[hi/100*2], digitPairs[hi/100*2+1], digitPairs[hi%100*2], digitPairs[hi%100*2+1],
		digitPairs[lo/100*2], digitPairs[lo/100*2+1], digitPairs[lo%100*2], digitPairs[lo%100*2+1])
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"
