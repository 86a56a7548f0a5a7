package crdb

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// movrCities are the nine cities of cockroach's movr, in its order. Every
// user, vehicle, ride and location history belongs to one, and the rows an
// operation touches share its city.
var movrCities = [...]string{"new york", "boston", "washington dc", "seattle", "san francisco", "los angeles", "amsterdam", "paris", "rome"}

const numCities = int64(len(movrCities))

// cityRows spreads a table's n loaded rows over the cities in row order, as
// cockroach's movr does: row i is in city i*9/n, so each city's rows are one
// range of indexes, and a loaded row of another table in a given city can
// be drawn by index alone. n >= 9 gives every city a row.
type cityRows int64

// city is the city of row i.
func (n cityRows) city(i int64) int64 { return i * numCities / int64(n) }

// first is the first row of city c (n for c = 9): the least i with
// i*9/n >= c.
func (n cityRows) first(c int64) int64 { return (c*int64(n) + numCities - 1) / numCities }

// pick draws a row of city c.
func (n cityRows) pick(rng *rand.Rand, c int64) int64 {
	lo, hi := n.first(c), n.first(c+1)
	return lo + rng.Int64N(hi-lo)
}

// appendUUID appends the text of the version-4 UUID made of hi (its first
// 8 bytes) and lo (its last 8), less the version and variant bits.
func appendUUID(b []byte, hi, lo uint64) []byte {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], hi&^0xF000|0x4000)
	binary.BigEndian.PutUint64(raw[8:], lo&^(3<<62)|1<<63)
	for i, part := range [][]byte{raw[:4], raw[4:6], raw[6:8], raw[8:10], raw[10:]} {
		if i > 0 {
			b = append(b, '-')
		}
		b = hex.AppendEncode(b, part)
	}
	return b
}

// newUUID is a random UUID, for the rows the run adds.
func newUUID(rng *rand.Rand) string { return string(appendUUID(nil, rng.Uint64(), rng.Uint64())) }

// appendLoadedID appends the id of loaded row i of n. As in cockroach's
// movr, the ids are evenly spaced over the UUIDs in row order (the top 64
// bits are i times 2^64/n; the version bits they lose cannot make two
// equal, as the spacing exceeds 2^16 for any n allowed), so a table's ids
// sort as its rows and the rows of one city are one range of ids. That
// range is what makes the operations' "first id above a random UUID in the
// city" pick fall mostly on the city's first row until the run adds rows
// with random ids: cockroach's hot spot, kept.
func appendLoadedID(b []byte, i, n int64) []byte {
	step := math.MaxUint64 / uint64(n)
	return appendUUID(b, uint64(i)*step, uint64(hashKey(i)))
}

// loadedID is appendLoadedID as a string.
func loadedID(i, n int64) string { return string(appendLoadedID(nil, i, n)) }

// The fake text of movr's rows, written for tierbench: names, street
// addresses and filler words. None holds a quote, so the load writes them
// into SQL literals as they are.
var (
	firstNames  = [...]string{"Ada", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Keiko", "Luca", "Maya", "Nikos", "Olga", "Pablo"}
	lastNames   = [...]string{"Abbott", "Becker", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Hansen", "Ivanov", "Jensen", "Kowalski", "Larsen", "Moreau", "Nakamura", "Okafor", "Rossi"}
	streetNames = [...]string{"Oak", "Maple", "Cedar", "Harbor", "Mill", "Station", "Park", "River", "Church", "Market", "Lake", "Hill"}
	streetKinds = [...]string{"Street", "Avenue", "Road", "Lane", "Boulevard", "Way"}
	fillerWords = [...]string{"swift", "ride", "urban", "green", "city", "morning", "bonus", "weekend", "travel", "fresh",
		"bright", "summer", "winter", "commute", "discount", "friend", "night", "early", "local", "scenic"}
)

// movr's vehicles, as cockroach's movr describes them.
var (
	vehicleTypes  = [...]string{"skateboard", "bike", "scooter"}
	vehicleColors = [...]string{"red", "yellow", "blue", "green", "black"}
	bikeBrands    = [...]string{"Merida", "Fuji", "Cervelo", "Pinarello", "Santa Cruz", "Kona", "Schwinn"}
)

// movrEpoch is the creation time of movr's loaded vehicles and promo codes,
// and the time its loaded rides and location histories are counted from.
var movrEpoch = time.Date(2019, 1, 2, 3, 4, 5, 0, time.UTC)

// promoRules is every promo code's rules.
const promoRules = `{"type": "percent_discount", "value": "10%"}`

func pickOf[T any](rng *rand.Rand, list []T) T { return list[rng.IntN(len(list))] }

func appendName(b []byte, rng *rand.Rand) []byte {
	b = append(b, pickOf(rng, firstNames[:])...)
	b = append(b, ' ')
	return append(b, pickOf(rng, lastNames[:])...)
}

func appendAddress(b []byte, rng *rand.Rand) []byte {
	b = strconv.AppendInt(b, 1+rng.Int64N(9999), 10)
	b = append(b, ' ')
	b = append(b, pickOf(rng, streetNames[:])...)
	b = append(b, ' ')
	return append(b, pickOf(rng, streetKinds[:])...)
}

// appendWords appends n filler words joined by sep.
func appendWords(b []byte, rng *rand.Rand, n int, sep byte) []byte {
	for i := range n {
		if i > 0 {
			b = append(b, sep)
		}
		b = append(b, pickOf(rng, fillerWords[:])...)
	}
	return b
}

// appendParagraph appends a promo code's description: three sentences of
// 6 to 12 words.
func appendParagraph(b []byte, rng *rand.Rand) []byte {
	for s := range 3 {
		if s > 0 {
			b = append(b, ' ')
		}
		start := len(b)
		b = appendWords(b, rng, 6+rng.IntN(7), ' ')
		b[start] -= 'a' - 'A'
		b = append(b, '.')
	}
	return b
}

// appendCreditCard appends 10 random digits.
func appendCreditCard(b []byte, rng *rand.Rand) []byte {
	for range 10 {
		b = append(b, byte('0'+rng.IntN(10)))
	}
	return b
}

// vehicleStatus is available 40%, in_use 55%, lost 5% of the time.
func vehicleStatus(rng *rand.Rand) string {
	switch r := rng.IntN(100); {
	case r < 40:
		return "available"
	case r < 95:
		return "in_use"
	}
	return "lost"
}

// appendVehicleExt appends a vehicle's ext JSON: its color, and a bike's
// brand.
func appendVehicleExt(b []byte, rng *rand.Rand, vehicleType string) []byte {
	b = append(b, `{"color": "`...)
	b = append(b, pickOf(rng, vehicleColors[:])...)
	if vehicleType == "bike" {
		b = append(b, `", "brand": "`...)
		b = append(b, pickOf(rng, bikeBrands[:])...)
	}
	return append(b, `"}`...)
}

// latLong is a random position, in whole degrees as cockroach's movr draws
// it (lat in [-180, 180), long in [-90, 90)).
func latLong(rng *rand.Rand) (lat, long float64) {
	return float64(rng.IntN(360) - 180), float64(rng.IntN(180) - 90)
}

// text runs an append function into a fresh string, for the values of
// one operation's statement.
func text(rng *rand.Rand, f func([]byte, *rand.Rand) []byte) string { return string(f(nil, rng)) }

// movrTimeLayout is how loaded timestamps are written: both dialects read
// it into TIMESTAMP and DATETIME(6).
const movrTimeLayout = "2006-01-02 15:04:05.000000"

// quoted is s as a SQL string literal; movr's text holds no quote.
func quoted(s string) string { return "'" + s + "'" }

// timeLiteral is t as a SQL timestamp literal.
func timeLiteral(t time.Time) string { return t.Format("'" + movrTimeLayout + "'") }

// appendTuple appends the literals values as one parenthesised row of a
// multi-row INSERT.
func appendTuple(b []byte, values ...string) []byte {
	b = append(b, '(')
	for i, v := range values {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, v...)
	}
	return append(b, ')')
}
