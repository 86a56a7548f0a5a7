package tpcc

import (
	"math/rand/v2"
	"strconv"
)

// uniform draws an integer in [lo, hi], the specification's random(x, y)
// (clause 2.1.5).
func uniform(r *rand.Rand, lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }

// nurand is the specification's non-uniform random (clause 2.1.6):
// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func nurand(r *rand.Rand, a, c, x, y int64) int64 {
	return ((uniform(r, 0, a)|uniform(r, x, y))+c)%(y-x+1) + x
}

// NURand's A for each field it draws (clause 2.1.6).
const (
	aCLast = 255
	aCID   = 1023
	aOLIID = 8191
)

// validCLastDelta reports whether run-time C for C_LAST may be used with
// the load-time one (clause 2.1.6.1): their distance is in [65, 119] and
// neither 96 nor 112, so the run's last names are not the load's.
func validCLastDelta(load, run int64) bool {
	d := load - run
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// syllables build customer last names (clause 4.3.2.3): a number in
// [0, 999] gives three syllables, one per decimal digit.
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// appendLastName appends the last name of number n in [0, 999].
func appendLastName(b []byte, n int64) []byte {
	b = append(b, syllables[n/100]...)
	b = append(b, syllables[n/10%10]...)
	return append(b, syllables[n%10]...)
}

// lastName returns the last name of number n in [0, 999].
func lastName(n int64) string { return string(appendLastName(nil, n)) }

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// appendAString appends a random alphanumeric string of a length in
// [lo, hi] (clause 4.3.2.2's a-string; letters and digits only, so it
// needs no quoting in SQL text).
func appendAString(b []byte, r *rand.Rand, lo, hi int64) []byte {
	for n := uniform(r, lo, hi); n > 0; n-- {
		b = append(b, alnum[r.IntN(len(alnum))])
	}
	return b
}

// appendNString appends n random digits (clause 4.3.2.2's n-string).
func appendNString(b []byte, r *rand.Rand, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, byte('0'+r.IntN(10)))
	}
	return b
}

// appendData appends I_DATA or S_DATA: an a-string of 26-50 characters
// that for 10% of rows holds "ORIGINAL" at a random position (clause
// 4.3.3.1).
func appendData(b []byte, r *rand.Rand) []byte {
	start := len(b)
	b = appendAString(b, r, 26, 50)
	if r.IntN(10) == 0 {
		pos := start + r.IntN(len(b)-start-len("ORIGINAL")+1)
		copy(b[pos:], "ORIGINAL")
	}
	return b
}

// appendFixed appends v / 10^scale with scale decimals ("0.1234"), the
// text of a DECIMAL value the workload computed in integer units.
func appendFixed(b []byte, v int64, scale int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	p := int64(1)
	for range scale {
		p *= 10
	}
	b = strconv.AppendInt(b, v/p, 10)
	b = append(b, '.')
	frac := strconv.AppendInt(nil, v%p, 10)
	for range scale - len(frac) {
		b = append(b, '0')
	}
	return append(b, frac...)
}

// cents formats an amount in cents as DECIMAL text, the form in which
// amounts are bound, so no float rounding reaches a balance.
func cents(v int64) string { return string(appendFixed(nil, v, 2)) }

// mix is HammerDB's default transaction mix out of 23: New-Order 10,
// Payment 10, Delivery, Stock-Level and Order-Status 1 each.
var mix = [nOps]int{opNewOrder: 10, opPayment: 10, opOrderStatus: 1, opDelivery: 1, opStockLevel: 1}

// deck deals transaction types from shuffled decks of 23 cards holding the
// mix (clause 5.2.4.2 allows a deck), so every 23 transactions of a client
// hold exactly the mix.
type deck struct {
	cards []int
	next  int
}

func newDeck() *deck {
	d := &deck{}
	for op, n := range mix {
		for range n {
			d.cards = append(d.cards, op)
		}
	}
	d.next = len(d.cards)
	return d
}

// deal returns the next transaction type, reshuffling when the deck is
// spent.
func (d *deck) deal(r *rand.Rand) int {
	if d.next == len(d.cards) {
		r.Shuffle(len(d.cards), func(i, j int) { d.cards[i], d.cards[j] = d.cards[j], d.cards[i] })
		d.next = 0
	}
	d.next++
	return d.cards[d.next-1]
}
