package crdb

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// movr's parameter names (pSeed is kv's too), cockroach's flags in
// snake_case.
const (
	pUsers      = "num_users"
	pVehicles   = "num_vehicles"
	pRides      = "num_rides"
	pHistories  = "num_histories"
	pPromoCodes = "num_promo_codes"
)

// movr's tables, as cockroach's movr names them.
const (
	tUsers          = "users"
	tVehicles       = "vehicles"
	tRides          = "rides"
	tHistories      = "vehicle_location_histories"
	tPromoCodes     = "promo_codes"
	tUserPromoCodes = "user_promo_codes"
)

// movrMaxRows bounds each table's initial rows; the tier's size check
// (EstimatedBytes) bounds their sum.
const movrMaxRows = 1<<31 - 1

// Load batching, as bank's: rows per INSERT, rows per transaction.
const (
	movrStmtRows  = 200
	movrChunkRows = 10 * movrStmtRows
)

// MovrSpec returns the movr workload's spec. Its defaults are cockroach's:
// a small data set whose rides and histories grow as the run adds them.
func MovrSpec() workload.Spec {
	perCity, most := strconv.FormatInt(numCities, 10), strconv.Itoa(movrMaxRows)
	params := []setting.Setting{
		{Name: pUsers, Kind: setting.Int, Default: "50", Min: perCity, Max: most, Doc: "users loaded, spread over the 9 cities (one per city at least)"},
		{Name: pVehicles, Kind: setting.Int, Default: "15", Min: perCity, Max: most, Doc: "vehicles loaded, each owned by a user of its city (one per city at least)"},
		{Name: pRides, Kind: setting.Int, Default: "500", Min: perCity, Max: most, Doc: "ended rides loaded, each of a user and a vehicle of its city (one per city at least)"},
		{Name: pHistories, Kind: setting.Int, Default: "1000", Min: perCity, Max: most, Doc: "location histories loaded, each of a ride of its city (one per city at least)"},
		{Name: pPromoCodes, Kind: setting.Int, Default: "1000", Min: "1", Max: most, Doc: "promo codes loaded (apply_promo_code picks one)"},
		seedParam,
	}
	return workload.Spec{
		Name:  "movr",
		Model: engine.ModelSQL,
		Doc: "cockroach workload movr on SQL: a ride-sharing app over 9 cities, 95% reads of a city's vehicles, " +
			"else location updates of the client's active rides then one write (rides started and ended, users, vehicles, promo codes); " +
			"row counts and references are checked after the run",
		Params: params,
		New: func(p setting.Values) (workload.Workload, error) {
			return newMovr(p), nil
		},
	}
}

// tally counts the rows a kind of write added: done when its statement
// succeeded, unsure when it failed in a way that may have committed it
// (the run's end cancels a statement in flight).
type tally struct{ done, unsure atomic.Int64 }

func (t *tally) add(err error) {
	if err == nil {
		t.done.Add(1)
	} else {
		t.unsure.Add(1)
	}
}

// The kinds of writes Verify accounts for.
const (
	addedUsers = iota
	addedVehicles
	startedRides
	endedRides
	addedHistories
	addedPromoCodes
	appliedPromoCodes
	numTallies
)

// Movr is one configured movr workload, shared by all clients.
type Movr struct {
	users, vehicles, rides, histories, promoCodes int64
	seed                                          int64
	seeded                                        bool

	added       [numTallies]tally
	alreadyUsed atomic.Int64 // apply_promo_code that found the code used
	retries     sqlwork.Retries
}

var (
	_ workload.Workload = (*Movr)(nil)
	_ workload.Verifier = (*Movr)(nil)
)

func newMovr(p setting.Values) *Movr {
	w := &Movr{users: p.Int64(pUsers), vehicles: p.Int64(pVehicles), rides: p.Int64(pRides),
		histories: p.Int64(pHistories), promoCodes: p.Int64(pPromoCodes)}
	w.seed, w.seeded = workload.Seed(p, pSeed)
	return w
}

// Ops names movr's operations (movrOps).
func (w *Movr) Ops() []string { return movrOps[:] }

// EstimatedBytes is a lower bound of the data the load writes: each row's
// keys and text at their shortest.
func (w *Movr) EstimatedBytes() int64 {
	return w.users*60 + w.vehicles*100 + w.rides*120 + w.histories*45 + w.promoCodes*200
}

const (
	streamMovr     = 0x6D6F7672
	streamMovrLoad = streamMovr + 1
)

func (w *Movr) newRand(stream, id uint64) *rand.Rand {
	return workload.NewRand(w.seed, w.seeded, stream, id)
}

// movrDialect holds what movr's statements write differently in each
// dialect: UUID, JSONB and TIMESTAMP become CHAR(36), JSON and DATETIME(6)
// on MySQL/MariaDB; now() has microseconds there only as NOW(6); and the
// columns "timestamp" and "long" (a reserved word of MySQL) are quoted.
type movrDialect struct {
	engine.Dialect
	uuid, json, ts, now string
	timestamp, long     string
}

func newMovrDialect(d engine.Dialect) movrDialect {
	if d == engine.MySQL {
		return movrDialect{d, "CHAR(36)", "JSON", "DATETIME(6)", "NOW(6)", "`timestamp`", "`long`"}
	}
	return movrDialect{d, "UUID", "JSONB", "TIMESTAMP", "now()", `"timestamp"`, `"long"`}
}

// movrTables are the tables, children first: the order they are dropped in.
var movrTables = []string{tUserPromoCodes, tHistories, tRides, tVehicles, tPromoCodes, tUsers}

// movrDDL returns the statements that make movr's six tables, empty, with
// cockroach's primary keys (city first) and secondary indexes. Its foreign
// keys come after the load (movrForeignKeys), as cockroach adds them.
func movrDDL(d movrDialect) []string {
	var qs []string
	for _, t := range movrTables {
		qs = append(qs, "DROP TABLE IF EXISTS "+t)
	}
	return append(qs,
		"CREATE TABLE "+tUsers+" (id "+d.uuid+" NOT NULL, city VARCHAR(64) NOT NULL, name VARCHAR(255), "+
			"address VARCHAR(255), credit_card VARCHAR(32), PRIMARY KEY (city, id))",
		"CREATE TABLE "+tVehicles+" (id "+d.uuid+" NOT NULL, city VARCHAR(64) NOT NULL, type VARCHAR(32), owner_id "+d.uuid+", "+
			"creation_time "+d.ts+", status VARCHAR(32), current_location VARCHAR(255), ext "+d.json+", PRIMARY KEY (city, id))",
		"CREATE INDEX vehicles_city_owner_id ON "+tVehicles+" (city, owner_id)",
		"CREATE TABLE "+tRides+" (id "+d.uuid+" NOT NULL, city VARCHAR(64) NOT NULL, vehicle_city VARCHAR(64), "+
			"rider_id "+d.uuid+", vehicle_id "+d.uuid+", start_address VARCHAR(255), end_address VARCHAR(255), "+
			"start_time "+d.ts+", end_time "+d.ts+", revenue DECIMAL(10,2), PRIMARY KEY (city, id), "+
			"CONSTRAINT check_vehicle_city_city CHECK (vehicle_city = city))",
		"CREATE INDEX rides_city_rider_id ON "+tRides+" (city, rider_id)",
		"CREATE INDEX rides_vehicle_city_vehicle_id ON "+tRides+" (vehicle_city, vehicle_id)",
		"CREATE TABLE "+tHistories+" (city VARCHAR(64) NOT NULL, ride_id "+d.uuid+" NOT NULL, "+d.timestamp+" "+d.ts+" NOT NULL, "+
			"lat DOUBLE PRECISION, "+d.long+" DOUBLE PRECISION, PRIMARY KEY (city, ride_id, "+d.timestamp+"))",
		"CREATE TABLE "+tPromoCodes+" (code VARCHAR(255) NOT NULL, description TEXT, creation_time "+d.ts+", "+
			"expiration_time "+d.ts+", rules "+d.json+", PRIMARY KEY (code))",
		"CREATE TABLE "+tUserPromoCodes+" (city VARCHAR(64) NOT NULL, user_id "+d.uuid+" NOT NULL, code VARCHAR(255) NOT NULL, "+
			d.timestamp+" "+d.ts+", usage_count INT, PRIMARY KEY (city, user_id, code))",
	)
}

// movrForeignKeys are cockroach's movr's foreign keys, each on a city and
// an id: a row's references are in its own city.
var movrForeignKeys = []string{
	"ALTER TABLE " + tVehicles + " ADD CONSTRAINT vehicles_owner_fk FOREIGN KEY (city, owner_id) REFERENCES " + tUsers + " (city, id)",
	"ALTER TABLE " + tRides + " ADD CONSTRAINT rides_rider_fk FOREIGN KEY (city, rider_id) REFERENCES " + tUsers + " (city, id)",
	"ALTER TABLE " + tRides + " ADD CONSTRAINT rides_vehicle_fk FOREIGN KEY (vehicle_city, vehicle_id) REFERENCES " + tVehicles + " (city, id)",
	"ALTER TABLE " + tHistories + " ADD CONSTRAINT histories_ride_fk FOREIGN KEY (city, ride_id) REFERENCES " + tRides + " (city, id)",
	"ALTER TABLE " + tUserPromoCodes + " ADD CONSTRAINT user_promo_codes_user_fk FOREIGN KEY (city, user_id) REFERENCES " + tUsers + " (city, id)",
}

// movrLoadTable is one table's share of the load: its initial rows and
// how to write row i as a parenthesised tuple of literals.
type movrLoadTable struct {
	name, columns string
	rows          int64
	row           func(b []byte, rng *rand.Rand, i int64) []byte
}

func (w *Movr) loadTables(d movrDialect) []movrLoadTable {
	return []movrLoadTable{
		{tUsers, "id, city, name, address, credit_card", w.users, w.appendUser},
		{tVehicles, "id, city, type, owner_id, creation_time, status, current_location, ext", w.vehicles, w.appendVehicle},
		{tRides, "id, city, vehicle_city, rider_id, vehicle_id, start_address, end_address, start_time, end_time, revenue", w.rides, w.appendRide},
		{tHistories, "city, ride_id, " + d.timestamp + ", lat, " + d.long, w.histories, w.appendHistory},
		{tPromoCodes, "code, description, creation_time, expiration_time, rules", w.promoCodes, w.appendPromoCode},
	}
}

func (w *Movr) appendUser(b []byte, rng *rand.Rand, i int64) []byte {
	return appendTuple(b, quoted(loadedID(i, w.users)), quoted(movrCities[cityRows(w.users).city(i)]),
		quoted(text(rng, appendName)), quoted(text(rng, appendAddress)), quoted(text(rng, appendCreditCard)))
}

// appendVehicle appends vehicle i, owned by a user of its city.
func (w *Movr) appendVehicle(b []byte, rng *rand.Rand, i int64) []byte {
	c := cityRows(w.vehicles).city(i)
	kind := pickOf(rng, vehicleTypes[:])
	owner := cityRows(w.users).pick(rng, c)
	return appendTuple(b, quoted(loadedID(i, w.vehicles)), quoted(movrCities[c]), quoted(kind), quoted(loadedID(owner, w.users)),
		timeLiteral(movrEpoch), quoted(vehicleStatus(rng)), quoted(text(rng, appendAddress)),
		quoted(string(appendVehicleExt(nil, rng, kind))))
}

// appendRide appends ride i, ended, of a user and a vehicle of its city:
// started up to 29 days before movrEpoch, lasting up to 59 hours.
func (w *Movr) appendRide(b []byte, rng *rand.Rand, i int64) []byte {
	c := cityRows(w.rides).city(i)
	start := movrEpoch.Add(-time.Duration(rng.IntN(30)) * 24 * time.Hour)
	end := start.Add(time.Duration(rng.IntN(60)) * time.Hour)
	rider, vehicle := cityRows(w.users).pick(rng, c), cityRows(w.vehicles).pick(rng, c)
	return appendTuple(b, quoted(loadedID(i, w.rides)), quoted(movrCities[c]), quoted(movrCities[c]),
		quoted(loadedID(rider, w.users)), quoted(loadedID(vehicle, w.vehicles)),
		quoted(text(rng, appendAddress)), quoted(text(rng, appendAddress)),
		timeLiteral(start), timeLiteral(end), strconv.Itoa(rng.IntN(100)))
}

// appendHistory appends location history i, of a ride of its city, i
// milliseconds after movrEpoch, so no two share a key.
func (w *Movr) appendHistory(b []byte, rng *rand.Rand, i int64) []byte {
	c := cityRows(w.histories).city(i)
	ride := cityRows(w.rides).pick(rng, c)
	lat, long := latLong(rng)
	return appendTuple(b, quoted(movrCities[c]), quoted(loadedID(ride, w.rides)),
		timeLiteral(movrEpoch.Add(time.Duration(i)*time.Millisecond)),
		strconv.FormatFloat(lat, 'f', -1, 64), strconv.FormatFloat(long, 'f', -1, 64))
}

// promoTimes draws a promo code's creation and expiration times: it
// expires up to 29 days after movrEpoch and was created up to 29 days
// before it expires.
func promoTimes(rng *rand.Rand) (created, expires time.Time) {
	expires = movrEpoch.Add(time.Duration(rng.IntN(30)) * 24 * time.Hour)
	return expires.Add(-time.Duration(rng.IntN(30)) * 24 * time.Hour), expires
}

// appendPromoCode appends promo code i, named "<i>_<three words>" as
// cockroach names its codes.
func (w *Movr) appendPromoCode(b []byte, rng *rand.Rand, i int64) []byte {
	code := strconv.FormatInt(i, 10) + "_" + string(appendWords(nil, rng, 3, '_'))
	description := text(rng, appendParagraph)
	created, expires := promoTimes(rng)
	return appendTuple(b, quoted(code), quoted(description), timeLiteral(created), timeLiteral(expires), quoted(promoRules))
}

// Load drops and creates the six tables, fills five of them with loaders
// parallel sessions (user_promo_codes starts empty, as cockroach's), then
// adds the foreign keys and updates the statistics. The counts Verify
// checks start again with it.
func (w *Movr) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	for i := range w.added {
		w.added[i].done.Store(0)
		w.added[i].unsure.Store(0)
	}
	w.alreadyUsed.Store(0)
	w.retries.Reset()
	var d movrDialect
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, dialect engine.Dialect) error {
		d = newMovrDialect(dialect)
		return sqlwork.ExecAll(ctx, conn, movrDDL(d)...)
	})
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("movr load: create tables: %w", err)
	}
	type chunk struct {
		table    *movrLoadTable
		first, n int64
	}
	tables := w.loadTables(d)
	var chunks []chunk
	for i := range tables {
		for first := int64(0); first < tables[i].rows; first += movrChunkRows {
			chunks = append(chunks, chunk{&tables[i], first, min(movrChunkRows, tables[i].rows-first)})
		}
	}
	var next, loaded atomic.Int64
	err = sqlwork.LoadChunks(ctx, "movr", db, loaders, func(ctx context.Context, conn *sql.Conn, buf []byte) ([]byte, bool, error) {
		i := next.Add(1) - 1
		if i >= int64(len(chunks)) {
			return buf, true, nil
		}
		c := chunks[i]
		rng := w.newRand(streamMovrLoad, uint64(i))
		buf, err := sqlwork.InsertChunk(ctx, conn, buf, c.table.name, c.first, c.n, movrStmtRows, func(b []byte, first, n int64) []byte {
			return sqlwork.AppendInsert(b, c.table.name, c.table.columns, first, n, func(b []byte, i int64) []byte {
				return c.table.row(b, rng, i)
			})
		})
		if err == nil {
			loaded.Add(c.n)
		}
		return buf, false, err
	})
	stats := workload.LoadStats{Records: loaded.Load()}
	if err == nil {
		err = engine.WithSQL(ctx, db, func(conn *sql.Conn, dialect engine.Dialect) error {
			if err := sqlwork.ExecAll(ctx, conn, movrForeignKeys...); err != nil {
				return err
			}
			return sqlwork.Analyze(ctx, conn, dialect, movrTables...)
		})
		if err != nil {
			err = fmt.Errorf("movr load: %w", err)
		}
	}
	stats.Duration = time.Since(start)
	return stats, err
}

// movrCheck is one figure Verify reads, in one SELECT of them all, and
// the range it must fall in.
type movrCheck struct {
	what   string
	query  string // a scalar subquery
	lo, hi int64
}

// grown is the check that table's COUNT(*) is its initial rows plus the
// rows added, give or take the writes that failed.
func (w *Movr) grown(table string, initial int64, t *tally) movrCheck {
	done, unsure := t.done.Load(), t.unsure.Load()
	return movrCheck{table + " rows", "SELECT COUNT(*) FROM " + table, initial + done, initial + done + unsure}
}

// movrOrphans are the queries of rows whose references are missing:
// every ride's rider and vehicle exist in its city, every vehicle's owner
// in its city, every history's ride in its city, and every applied code's
// user in its city and code among the codes. The foreign keys (not the
// code's, which cockroach's movr does not declare) make these hold unless
// the engine broke them.
var movrOrphans = []struct{ what, query string }{
	{"rides whose rider or vehicle is not in their city", "SELECT COUNT(*) FROM " + tRides + " r WHERE r.vehicle_city <> r.city" +
		" OR NOT EXISTS (SELECT 1 FROM " + tUsers + " u WHERE u.city = r.city AND u.id = r.rider_id)" +
		" OR NOT EXISTS (SELECT 1 FROM " + tVehicles + " v WHERE v.city = r.vehicle_city AND v.id = r.vehicle_id)"},
	{"vehicles whose owner is not in their city", "SELECT COUNT(*) FROM " + tVehicles + " v" +
		" WHERE NOT EXISTS (SELECT 1 FROM " + tUsers + " u WHERE u.city = v.city AND u.id = v.owner_id)"},
	{"location histories whose ride is not in their city", "SELECT COUNT(*) FROM " + tHistories + " h" +
		" WHERE NOT EXISTS (SELECT 1 FROM " + tRides + " r WHERE r.city = h.city AND r.id = h.ride_id)"},
	{"applied promo codes whose user or code is missing", "SELECT COUNT(*) FROM " + tUserPromoCodes + " p" +
		" WHERE NOT EXISTS (SELECT 1 FROM " + tUsers + " u WHERE u.city = p.city AND u.id = p.user_id)" +
		" OR NOT EXISTS (SELECT 1 FROM " + tPromoCodes + " c WHERE c.code = p.code)"},
}

// Verify checks, in one query, that each table grew by exactly the rows
// the run's committed writes added (within the writes that failed and
// may have committed), that the open rides are those started less those
// ended (every loaded ride has ended), and that no row's references are
// missing (movrOrphans).
func (w *Movr) Verify(ctx context.Context, db engine.DB) (string, error) {
	a := &w.added
	started, ended := &a[startedRides], &a[endedRides]
	checks := []movrCheck{
		w.grown(tUsers, w.users, &a[addedUsers]),
		w.grown(tVehicles, w.vehicles, &a[addedVehicles]),
		w.grown(tRides, w.rides, started),
		w.grown(tHistories, w.histories, &a[addedHistories]),
		w.grown(tPromoCodes, w.promoCodes, &a[addedPromoCodes]),
		w.grown(tUserPromoCodes, 0, &a[appliedPromoCodes]),
		{"open rides", "SELECT COUNT(*) FROM " + tRides + " WHERE end_time IS NULL",
			started.done.Load() - ended.done.Load() - ended.unsure.Load(),
			started.done.Load() + started.unsure.Load() - ended.done.Load()},
	}
	open := len(checks) - 1
	for _, o := range movrOrphans {
		checks = append(checks, movrCheck{o.what, o.query, 0, 0})
	}
	subqueries := make([]string, len(checks))
	got := make([]int64, len(checks))
	dest := make([]any, len(checks))
	for i, c := range checks {
		subqueries[i], dest[i] = "("+c.query+")", &got[i]
	}
	q := "SELECT " + strings.Join(subqueries, ", ")
	err := engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
		return conn.QueryRowContext(ctx, q).Scan(dest...)
	})
	if err != nil {
		return "", fmt.Errorf("movr verify: %s: %w", q, err)
	}
	var broken []string
	for i, c := range checks {
		if got[i] < c.lo || got[i] > c.hi {
			want := strconv.FormatInt(c.lo, 10)
			if c.hi != c.lo {
				want += ".." + strconv.FormatInt(c.hi, 10)
			}
			broken = append(broken, fmt.Sprintf("%s: %d, want %s", c.what, got[i], want))
		}
	}
	if len(broken) > 0 {
		return "", fmt.Errorf("movr lost, invented or orphaned rows: %s", strings.Join(broken, "; "))
	}
	return fmt.Sprintf("users %d+%d, vehicles %d+%d, rides %d+%d (%d open: %d started, %d ended), location histories %d+%d, "+
		"promo codes %d+%d, %d applied (%d already used), as the committed writes add up; "+
		"every ride's rider and vehicle, vehicle's owner, history's ride and applied code's user are in its city; %s",
		w.users, a[addedUsers].done.Load(), w.vehicles, a[addedVehicles].done.Load(), w.rides, started.done.Load(),
		got[open], started.done.Load(), ended.done.Load(), w.histories, a[addedHistories].done.Load(),
		w.promoCodes, a[addedPromoCodes].done.Load(), a[appliedPromoCodes].done.Load(), w.alreadyUsed.Load(), &w.retries), nil
}
