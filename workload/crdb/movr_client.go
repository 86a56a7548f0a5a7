package crdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// movr's operations, in Ops order: cockroach's movr's op names in
// snake_case.
const (
	opReadVehicles = iota
	opUpdateActiveRides
	opCreatePromoCode
	opApplyPromoCode
	opAddUser
	opAddVehicle
	opStartRide
	opEndRide
	numMovrOps
)

var movrOps = [numMovrOps]string{"read_vehicles", "update_active_rides", "create_promo_code", "apply_promo_code",
	"add_user", "add_vehicle", "start_ride", "end_ride"}

// movr's mix, as cockroach's movr draws it: an iteration reads a city's
// vehicles with probability movrReadPermille/1000; otherwise it updates
// the locations of the client's active rides, then does one write drawn
// by weight (in thousandths). Each of the two is an op of its own, as
// cockroach records each in its own histogram, so a write iteration is
// two Do calls.
const movrReadPermille = 950

var movrWrites = [...]struct{ op, permille int }{
	{opCreatePromoCode, 30}, {opApplyPromoCode, 100}, {opAddUser, 300},
	{opAddVehicle, 100}, {opStartRide, 400}, {opEndRide, 70},
}

// movrActiveRidesUpdated bounds the rides update_active_rides moves, as
// cockroach's: the client's 10 oldest active rides.
const movrActiveRidesUpdated = 10

// movrMix draws one client's ops: it holds the write that follows an
// update_active_rides.
type movrMix struct{ pending int } // an op, or -1

func newMovrMix() movrMix { return movrMix{pending: -1} }

// next returns the next op: the pending write, a read, or
// update_active_rides with a write drawn to follow it.
func (m *movrMix) next(rng *rand.Rand) int {
	if op := m.pending; op >= 0 {
		m.pending = -1
		return op
	}
	if rng.IntN(1000) < movrReadPermille {
		return opReadVehicles
	}
	r := rng.IntN(1000)
	for _, wr := range movrWrites {
		if r < wr.permille {
			m.pending = wr.op
			break
		}
		r -= wr.permille
	}
	return opUpdateActiveRides
}

// drop forgets the pending write: cockroach's movr skips the write when
// the location updates before it fail.
func (m *movrMix) drop() { m.pending = -1 }

// movr's statements, prepared on each client's connection.
const (
	sReadVehicles = iota
	sUpsertLocation
	sPickUser
	sPickVehicle
	sPickPromoCode
	sCountUserPromoCode
	sInsertUserPromoCode
	sInsertUser
	sInsertPromoCode
	sInsertVehicle
	sInsertRide
	sEndRide
	numMovrStmts
)

// pickAfter is cockroach's movr's way to draw a row: the first key of
// table above a random UUID (placeholder above) in the city (placeholder
// city, again as city2, for MySQL's positional ones; "" for a table
// without cities), or the first key there when none is above it.
func pickAfter(table, key, city, above, city2 string) string {
	first := func(where string) string {
		if where != "" {
			where = " WHERE " + where
		}
		return "(SELECT " + key + " FROM " + table + where + " ORDER BY " + key + " LIMIT 1)"
	}
	above = key + " > " + above
	if city != "" {
		above, city2 = "city = "+city+" AND "+above, "city = "+city2
	}
	return "SELECT COALESCE(" + first(above) + ", " + first(city2) + ")"
}

// movrStatements returns the statements in dialect d, indexed by the s
// constants. The location upsert is cockroach's UPSERT.
func movrStatements(d movrDialect) [numMovrStmts]string {
	p := d.Placeholder
	upsert := " ON CONFLICT (city, ride_id, " + d.timestamp + ") DO UPDATE SET lat = excluded.lat, " + d.long + " = excluded." + d.long
	if d.Dialect == engine.MySQL {
		upsert = " ON DUPLICATE KEY UPDATE lat = VALUES(lat), " + d.long + " = VALUES(" + d.long + ")"
	}
	return [numMovrStmts]string{
		sReadVehicles: "SELECT city, id FROM " + tVehicles + " WHERE city = " + p(1),
		sUpsertLocation: "INSERT INTO " + tHistories + " (city, ride_id, " + d.timestamp + ", lat, " + d.long + ") VALUES (" +
			p(1) + ", " + p(2) + ", " + d.now + ", " + p(3) + ", " + p(4) + ")" + upsert,
		sPickUser:      pickAfter(tUsers, "id", p(1), p(2), p(3)),
		sPickVehicle:   pickAfter(tVehicles, "id", p(1), p(2), p(3)),
		sPickPromoCode: pickAfter(tPromoCodes, "code", "", p(1), ""),
		sCountUserPromoCode: "SELECT COUNT(*) FROM " + tUserPromoCodes + " WHERE city = " + p(1) + " AND user_id = " + p(2) +
			" AND code = " + p(3),
		sInsertUserPromoCode: "INSERT INTO " + tUserPromoCodes + " (city, user_id, code, " + d.timestamp + ", usage_count) VALUES (" +
			p(1) + ", " + p(2) + ", " + p(3) + ", " + d.now + ", 1)",
		sInsertUser: "INSERT INTO " + tUsers + " (id, city, name, address, credit_card) VALUES (" + d.Placeholders(5) + ")",
		sInsertPromoCode: "INSERT INTO " + tPromoCodes + " (code, description, creation_time, expiration_time, rules) VALUES (" +
			d.Placeholders(5) + ")",
		sInsertVehicle: "INSERT INTO " + tVehicles + " (id, city, type, owner_id, creation_time, status, current_location, ext) VALUES (" +
			d.Placeholders(8) + ")",
		sInsertRide: "INSERT INTO " + tRides + " (id, city, vehicle_city, rider_id, vehicle_id, start_address, end_address, " +
			"start_time, end_time, revenue) VALUES (" + d.Placeholders(6) + ", NULL, " + d.now + ", NULL, " + p(7) + ")",
		sEndRide: "UPDATE " + tRides + " SET end_address = " + p(1) + ", end_time = " + d.now + " WHERE city = " + p(2) + " AND id = " + p(3),
	}
}

// NewClient returns client id bound to session s; its statements are
// prepared at the first Do.
func (w *Movr) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
	if err != nil {
		return nil, fmt.Errorf("movr client %d: %w", id, err)
	}
	return &movrClient{w: w, conn: q.Conn(), d: newMovrDialect(q.Dialect()), rng: w.newRand(streamMovr, uint64(id)), mix: newMovrMix()}, nil
}

// movrRide is a ride a client started and has not ended.
type movrRide struct{ city, id string }

// movrClient runs movr's operations on its own connection, used by one
// goroutine. Like cockroach's movr worker, it remembers the rides it
// started, oldest first: their locations are updated and the oldest is
// ended.
type movrClient struct {
	w      *Movr
	conn   *sql.Conn
	d      movrDialect
	rng    *rand.Rand
	mix    movrMix
	stmts  [numMovrStmts]*sql.Stmt
	active []movrRide
}

func (c *movrClient) prepare(ctx context.Context) error {
	if c.stmts[0] != nil {
		return nil
	}
	qs := movrStatements(c.d)
	if i, err := sqlwork.PrepareAll(ctx, c.conn, c.stmts[:], qs[:]); err != nil {
		return fmt.Errorf("movr: prepare %s: %w", qs[i], err)
	}
	return nil
}

// Close releases the prepared statements; the connection is the session's.
func (c *movrClient) Close() error {
	sqlwork.CloseAll(c.stmts[:])
	return nil
}

// Do runs the next op of the mix in a random city; deadlocks and
// serialization failures of its statements are retried and counted.
func (c *movrClient) Do(ctx context.Context) (int, error) {
	op := c.mix.next(c.rng)
	err := c.prepare(ctx)
	if err == nil {
		err = c.run(ctx, op, movrCities[c.rng.Int64N(numCities)])
	}
	if err != nil {
		if op == opUpdateActiveRides {
			c.mix.drop()
		}
		return op, fmt.Errorf("movr %s: %w", movrOps[op], err)
	}
	return op, nil
}

func (c *movrClient) run(ctx context.Context, op int, city string) error {
	switch op {
	case opReadVehicles:
		return c.readVehicles(ctx, city)
	case opUpdateActiveRides:
		return c.updateActiveRides(ctx)
	case opCreatePromoCode:
		return c.createPromoCode(ctx)
	case opApplyPromoCode:
		return c.applyPromoCode(ctx, city)
	case opAddUser:
		return c.addUser(ctx, city)
	case opAddVehicle:
		return c.addVehicle(ctx, city)
	case opStartRide:
		return c.startRide(ctx, city)
	case opEndRide:
		return c.endRide(ctx)
	}
	return fmt.Errorf("no op %d", op)
}

// exec runs statement st, retrying conflicts.
func (c *movrClient) exec(ctx context.Context, st int, args ...any) (sql.Result, error) {
	var res sql.Result
	err := c.w.retries.Do(ctx, func() (err error) {
		res, err = c.stmts[st].ExecContext(ctx, args...)
		return err
	})
	return res, err
}

// write runs writing statement st, counts its row in tally t of the
// rows added, and says in its error what it wrote.
func (c *movrClient) write(ctx context.Context, t int, what string, st int, args ...any) error {
	_, err := c.exec(ctx, st, args...)
	c.w.added[t].add(err)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// queryRow runs one-row statement st into dest, retrying conflicts.
func (c *movrClient) queryRow(ctx context.Context, st int, dest any, args ...any) error {
	return c.w.retries.Do(ctx, func() error {
		return c.stmts[st].QueryRowContext(ctx, args...).Scan(dest)
	})
}

// pick draws a row's key with pick statement st (pickAfter).
func (c *movrClient) pick(ctx context.Context, st int, args ...any) (string, error) {
	var key sql.NullString
	if err := c.queryRow(ctx, st, &key, args...); err != nil {
		return "", err
	}
	if !key.Valid {
		return "", errors.New("none there: was the load phase run?")
	}
	return key.String, nil
}

func (c *movrClient) pickUser(ctx context.Context, city string) (string, error) {
	id, err := c.pick(ctx, sPickUser, city, newUUID(c.rng), city)
	if err != nil {
		return "", fmt.Errorf("pick a user in %s: %w", city, err)
	}
	return id, nil
}

func (c *movrClient) pickVehicle(ctx context.Context, city string) (string, error) {
	id, err := c.pick(ctx, sPickVehicle, city, newUUID(c.rng), city)
	if err != nil {
		return "", fmt.Errorf("pick a vehicle in %s: %w", city, err)
	}
	return id, nil
}

// readVehicles reads the ids of the city's vehicles, to the last row.
func (c *movrClient) readVehicles(ctx context.Context, city string) error {
	err := c.w.retries.Do(ctx, func() error {
		_, err := sqlwork.Drain(c.stmts[sReadVehicles].QueryContext(ctx, city))
		return err
	})
	if err != nil {
		return fmt.Errorf("read the vehicles of %s: %w", city, err)
	}
	return nil
}

// updateActiveRides adds a location, at the present time, to each of the
// client's oldest active rides (none before its first ride).
func (c *movrClient) updateActiveRides(ctx context.Context) error {
	for _, r := range c.active[:min(len(c.active), movrActiveRidesUpdated)] {
		lat, long := latLong(c.rng)
		err := c.write(ctx, addedHistories, "upsert the location of ride "+r.id+" in "+r.city, sUpsertLocation, r.city, r.id, lat, long)
		if err != nil {
			return err
		}
	}
	return nil
}

// createPromoCode adds a promo code named by a random UUID.
func (c *movrClient) createPromoCode(ctx context.Context) error {
	code := newUUID(c.rng)
	created, expires := promoTimes(c.rng)
	return c.write(ctx, addedPromoCodes, "insert promo code "+code,
		sInsertPromoCode, code, text(c.rng, appendParagraph), created, expires, promoRules)
}

// applyPromoCode gives a user of the city a promo code unless the user
// has it already. The check and the insert are two statements, as in
// cockroach's movr: when another client inserts the same pair between
// them, the duplicate key says the code is used, which is no error.
func (c *movrClient) applyPromoCode(ctx context.Context, city string) error {
	user, err := c.pickUser(ctx, city)
	if err != nil {
		return err
	}
	code, err := c.pick(ctx, sPickPromoCode, newUUID(c.rng))
	if err != nil {
		return fmt.Errorf("pick a promo code: %w", err)
	}
	var used int64
	if err := c.queryRow(ctx, sCountUserPromoCode, &used, city, user, code); err != nil {
		return fmt.Errorf("look up promo code %s of user %s in %s: %w", code, user, city, err)
	}
	if used == 0 {
		_, err = c.exec(ctx, sInsertUserPromoCode, city, user, code)
		if duplicateKey(err) {
			used, err = 1, nil
		} else {
			c.w.added[appliedPromoCodes].add(err)
		}
	}
	if used > 0 {
		c.w.alreadyUsed.Add(1)
	}
	if err != nil {
		return fmt.Errorf("apply promo code %s to user %s in %s: %w", code, user, city, err)
	}
	return nil
}

// addUser adds a user in the city.
func (c *movrClient) addUser(ctx context.Context, city string) error {
	id := newUUID(c.rng)
	return c.write(ctx, addedUsers, "insert user "+id+" in "+city,
		sInsertUser, id, city, text(c.rng, appendName), text(c.rng, appendAddress), text(c.rng, appendCreditCard))
}

// addVehicle adds a vehicle owned by a user of the city.
func (c *movrClient) addVehicle(ctx context.Context, city string) error {
	owner, err := c.pickUser(ctx, city)
	if err != nil {
		return err
	}
	id, kind := newUUID(c.rng), pickOf(c.rng, vehicleTypes[:])
	ext := string(appendVehicleExt(nil, c.rng, kind))
	return c.write(ctx, addedVehicles, "insert vehicle "+id+" in "+city,
		sInsertVehicle, id, city, kind, owner, movrEpoch, vehicleStatus(c.rng), text(c.rng, appendAddress), ext)
}

// startRide starts a ride of a user and a vehicle of the city, now; the
// client remembers it as active.
func (c *movrClient) startRide(ctx context.Context, city string) error {
	rider, err := c.pickUser(ctx, city)
	if err != nil {
		return err
	}
	vehicle, err := c.pickVehicle(ctx, city)
	if err != nil {
		return err
	}
	id := newUUID(c.rng)
	err = c.write(ctx, startedRides, "insert ride "+id+" in "+city,
		sInsertRide, id, city, city, rider, vehicle, text(c.rng, appendAddress), c.rng.IntN(100))
	if err != nil {
		return err
	}
	c.active = append(c.active, movrRide{city, id})
	return nil
}

// endRide ends the client's oldest active ride, now, when it has two or
// more, as cockroach's movr does; otherwise it does nothing.
func (c *movrClient) endRide(ctx context.Context) error {
	if len(c.active) < 2 {
		return nil
	}
	r := c.active[0]
	c.active = c.active[1:]
	res, err := c.exec(ctx, sEndRide, text(c.rng, appendAddress), r.city, r.id)
	if err == nil {
		if n, rerr := res.RowsAffected(); rerr == nil && n != 1 {
			err = fmt.Errorf("updated %d rows, want 1", n)
		}
	}
	c.w.added[endedRides].add(err)
	if err != nil {
		return fmt.Errorf("end ride %s in %s: %w", r.id, r.city, err)
	}
	return nil
}

// duplicateKey reports whether err is a unique key violation: SQLSTATE
// 23505, or MySQL/MariaDB error 1062.
func duplicateKey(err error) bool {
	if err == nil {
		return false
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) && st.SQLState() == "23505" {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "SQLSTATE 23505") || strings.Contains(msg, "Error 1062 ") || strings.Contains(msg, "Error 1062:")
}
