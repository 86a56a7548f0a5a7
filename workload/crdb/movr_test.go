package crdb

import (
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

func newMovrTest(t *testing.T, params map[string]string) *Movr {
	t.Helper()
	w, err := MovrSpec().Build(params)
	if err != nil {
		t.Fatal(err)
	}
	return w.(*Movr)
}

func TestMovrRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string // substrings of the error
	}{
		{"users fewer than cities", map[string]string{pUsers: "8"}, []string{"num_users 8 is out of range: it must be from 9 to 2147483647"}},
		{"vehicles 0", map[string]string{pVehicles: "0"}, []string{"num_vehicles 0 is out of range"}},
		{"rides text", map[string]string{pRides: "many"}, []string{`num_rides "many" is not a whole number`}},
		{"histories negative", map[string]string{pHistories: "-9"}, []string{"num_histories -9 is out of range"}},
		{"histories too many", map[string]string{pHistories: "2147483648"}, []string{pHistories, "2147483647"}},
		{"no promo codes", map[string]string{pPromoCodes: "0"}, []string{"num_promo_codes 0 is out of range: it must be from 1 to 2147483647"}},
		{"seed text", map[string]string{pSeed: "x"}, []string{`seed "x" is not a whole number`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MovrSpec().Build(tc.params)
			if err == nil {
				t.Fatalf("Build(%v) succeeded, want an error", tc.params)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	w := newMovrTest(t, nil)
	if w.users != 50 || w.vehicles != 15 || w.rides != 500 || w.histories != 1000 || w.promoCodes != 1000 {
		t.Errorf("defaults %d users, %d vehicles, %d rides, %d histories, %d promo codes: want cockroach's 50, 15, 500, 1000, 1000",
			w.users, w.vehicles, w.rides, w.histories, w.promoCodes)
	}
	if w.EstimatedBytes() < 300_000 {
		t.Errorf("EstimatedBytes %d for the defaults", w.EstimatedBytes())
	}
	if v, _ := MovrSpec().Resolve(nil); v.Text(pUsers) != "50" || v.Has(pSeed) {
		t.Errorf("recorded parameters %v", v.Map())
	}
}

// movrTargetShares is each op's share of Do calls: a read iteration is
// one call, a write iteration two (update_active_rides, then the write).
func movrTargetShares() [numMovrOps]float64 {
	read, write := float64(movrReadPermille)/1000, 1-float64(movrReadPermille)/1000
	calls := read + 2*write
	var s [numMovrOps]float64
	s[opReadVehicles], s[opUpdateActiveRides] = read/calls, write/calls
	for _, wr := range movrWrites {
		s[wr.op] = write * float64(wr.permille) / 1000 / calls
	}
	return s
}

// TestMovrMix draws 10,000 ops: each op's share is within 1% of its
// target, every write follows an update_active_rides, and a dropped
// write is not done.
func TestMovrMix(t *testing.T) {
	sum := 0
	for _, wr := range movrWrites {
		sum += wr.permille
	}
	if sum != 1000 {
		t.Fatalf("write weights add up to %d thousandths", sum)
	}
	const draws = 10000
	m, rng := newMovrMix(), rand.New(rand.NewPCG(11, 12))
	var counts [numMovrOps]int
	prev := opReadVehicles
	for range draws {
		op := m.next(rng)
		counts[op]++
		if isWrite := op > opUpdateActiveRides; isWrite != (prev == opUpdateActiveRides) {
			t.Fatalf("%s after %s", movrOps[op], movrOps[prev])
		}
		prev = op
	}
	for op, want := range movrTargetShares() {
		if got := float64(counts[op]) / draws; math.Abs(got-want) > 0.01 {
			t.Errorf("%s: %.4f of %d ops, want %.4f", movrOps[op], got, draws, want)
		}
	}
	t.Logf("counts over %d ops: %v", draws, counts)
	for m.next(rng) != opUpdateActiveRides {
	}
	m.drop()
	if op := m.next(rng); op > opUpdateActiveRides {
		t.Errorf("%s done after its update_active_rides was dropped", movrOps[op])
	}
}

// TestCityRows checks that every city has rows, in one range of indexes
// each, and that picks stay in the city.
func TestCityRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int64{9, 10, 17, 50, 500, 1000} {
		rows := cityRows(n)
		if rows.first(0) != 0 || rows.first(numCities) != n {
			t.Errorf("n=%d: cities span %d..%d", n, rows.first(0), rows.first(numCities))
		}
		for c := range numCities {
			lo, hi := rows.first(c), rows.first(c+1)
			if hi <= lo {
				t.Fatalf("n=%d: city %d has no rows", n, c)
			}
			for i := lo; i < hi; i++ {
				if rows.city(i) != c {
					t.Fatalf("n=%d: row %d in city %d, its range says %d", n, i, rows.city(i), c)
				}
			}
			for range 20 {
				if i := rows.pick(rng, c); rows.city(i) != c {
					t.Fatalf("n=%d: pick in city %d gave row %d of city %d", n, c, i, rows.city(i))
				}
			}
		}
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestMovrIDs checks that loaded ids are version-4 UUIDs, distinct and
// sorted as their rows, and random ones well formed.
func TestMovrIDs(t *testing.T) {
	for _, n := range []int64{9, 1000, movrMaxRows} {
		var ids []string
		for _, i := range []int64{0, 1, 2, n / 2, n - 2, n - 1} {
			ids = append(ids, loadedID(i, n))
		}
		if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Errorf("n=%d: ids not distinct and sorted: %v", n, ids)
		}
		for _, id := range ids {
			if !uuidV4.MatchString(id) {
				t.Errorf("n=%d: %q is not a version-4 UUID", n, id)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	if a, b := newUUID(rng), newUUID(rng); !uuidV4.MatchString(a) || a == b {
		t.Errorf("random UUIDs %q, %q", a, b)
	}
}

func TestMovrStatements(t *testing.T) {
	pg, my := movrStatements(newMovrDialect(engine.Postgres)), movrStatements(newMovrDialect(engine.MySQL))
	for _, tc := range []struct{ got, want string }{
		{pg[sPickUser], "SELECT COALESCE((SELECT id FROM users WHERE city = $1 AND id > $2 ORDER BY id LIMIT 1), " +
			"(SELECT id FROM users WHERE city = $3 ORDER BY id LIMIT 1))"},
		{my[sPickPromoCode], "SELECT COALESCE((SELECT code FROM promo_codes WHERE code > ? ORDER BY code LIMIT 1), " +
			"(SELECT code FROM promo_codes ORDER BY code LIMIT 1))"},
		{pg[sUpsertLocation], `INSERT INTO vehicle_location_histories (city, ride_id, "timestamp", lat, "long") VALUES ($1, $2, now(), $3, $4)` +
			` ON CONFLICT (city, ride_id, "timestamp") DO UPDATE SET lat = excluded.lat, "long" = excluded."long"`},
		{my[sUpsertLocation], "INSERT INTO vehicle_location_histories (city, ride_id, `timestamp`, lat, `long`) VALUES (?, ?, NOW(6), ?, ?)" +
			" ON DUPLICATE KEY UPDATE lat = VALUES(lat), `long` = VALUES(`long`)"},
		{pg[sInsertRide], "INSERT INTO rides (id, city, vehicle_city, rider_id, vehicle_id, start_address, end_address, start_time, end_time, revenue)" +
			" VALUES ($1, $2, $3, $4, $5, $6, NULL, now(), NULL, $7)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %s\nwant %s", tc.got, tc.want)
		}
	}
	if ddl := strings.Join(movrDDL(newMovrDialect(engine.MySQL)), "\n"); !strings.Contains(ddl, "ext JSON,") ||
		!strings.Contains(ddl, "id CHAR(36) NOT NULL") || strings.Contains(ddl, "UUID") || strings.Contains(ddl, "JSONB") {
		t.Errorf("mysql DDL:\n%s", ddl)
	}
	w := newMovrTest(t, map[string]string{pSeed: "1"})
	rng := rand.New(rand.NewPCG(1, 2))
	vehicle := string(w.appendVehicle(nil, rng, 14))
	if !strings.HasPrefix(vehicle, "('"+loadedID(14, 15)+"', 'rome', '") || !strings.Contains(vehicle, `'{"color": "`) {
		t.Errorf("vehicle 14: %s", vehicle)
	}
}

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{stateError("23505"), true},
		{stateError("23503"), false},
		{errorString("Error 1062 (23000): Duplicate entry 'x' for key 'PRIMARY'"), true},
		{errorString("Error 1452 (23000): Cannot add or update a child row"), false},
		{nil, false},
	} {
		if got := duplicateKey(tc.err); got != tc.want {
			t.Errorf("duplicateKey(%v) = %v", tc.err, got)
		}
	}
}

type stateError string

func (e stateError) Error() string    { return "ERROR: something (SQLSTATE " + string(e) + ")" }
func (e stateError) SQLState() string { return string(e) }

type errorString string

func (e errorString) Error() string { return string(e) }

func TestMovrNotSQL(t *testing.T) { workloadtest.CheckNotSQL(t, newMovrTest(t, nil)) }
