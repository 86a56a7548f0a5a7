package crdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// tinyMovr is movr at its smallest sizes but one: 2 users per city.
var tinyMovr = map[string]string{pUsers: "18", pVehicles: "9", pRides: "27", pHistories: "27", pPromoCodes: "10", pSeed: "3"}

// TestMovrRun loads a tiny movr, runs each op once on one client and
// checks its effect, then runs 4 clients x 300 ops of the mix, and
// Verify passes after each; a promo code added behind the workload's back
// fails Verify.
func TestMovrRun(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		w := newMovrTest(t, tinyMovr)
		stats, err := w.Load(ctx, db, 2)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Records != 18+9+27+27+10 {
			t.Errorf("loaded %d rows, want 91", stats.Records)
		}
		count := func(q string) int64 { return enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+q) }
		for table, want := range map[string]int64{tUsers: 18, tVehicles: 9, tRides: 27, tHistories: 27, tPromoCodes: 10, tUserPromoCodes: 0} {
			if got := count(table); got != want {
				t.Errorf("%s: %d rows loaded, want %d", table, got, want)
			}
		}
		if n := count(tVehicles + " WHERE city = 'paris'"); n != 1 {
			t.Errorf("%d vehicles in paris, want 1", n)
		}
		if checked, err := w.Verify(ctx, db); err != nil {
			t.Fatalf("Verify after the load: %v", err)
		} else {
			t.Logf("%s after the load: %s", name, checked)
		}

		s, err := db.NewSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		cl, err := w.NewClient(0, s)
		if err != nil {
			t.Fatal(err)
		}
		c := cl.(*movrClient)
		defer c.Close()
		if err := c.prepare(ctx); err != nil {
			t.Fatal(err)
		}
		open := func() int64 { return count(tRides + " WHERE end_time IS NULL") }
		for _, step := range []struct {
			op     int
			city   string
			effect func() string // "" when the effect is there
		}{
			{opReadVehicles, "rome", func() string { return "" }},
			{opAddUser, "paris", func() string { return differs(count(tUsers+" WHERE city = 'paris'"), 3) }},
			{opAddVehicle, "paris", func() string { return differs(count(tVehicles+" WHERE city = 'paris'"), 2) }},
			{opUpdateActiveRides, "", func() string { return differs(count(tHistories), 27) }}, // no active ride yet
			{opStartRide, "boston", func() string { return differs(open(), 1) + differs(int64(len(c.active)), 1) }},
			{opEndRide, "", func() string { return differs(open(), 1) }}, // one active ride: cockroach's keeps it
			{opStartRide, "boston", func() string { return differs(open(), 2) + differs(count(tRides+" WHERE city = 'boston'"), 5) }},
			{opUpdateActiveRides, "", func() string {
				return differs(count(tHistories+" WHERE ride_id IN ('"+c.active[0].id+"', '"+c.active[1].id+"')"), 2)
			}},
			{opEndRide, "", func() string {
				return differs(open(), 1) + differs(count(tRides+" WHERE end_time IS NOT NULL AND end_address IS NOT NULL"), 28)
			}},
			{opCreatePromoCode, "", func() string { return differs(count(tPromoCodes), 11) }},
			{opApplyPromoCode, "amsterdam", func() string { return differs(count(tUserPromoCodes+" WHERE city = 'amsterdam'"), 1) }},
			{opApplyPromoCode, "amsterdam", func() string {
				return differs(count(tUserPromoCodes)+w.alreadyUsed.Load(), 2)
			}},
		} {
			if err := c.run(ctx, step.op, step.city); err != nil {
				t.Fatalf("%s: %v", movrOps[step.op], err)
			}
			if wrong := step.effect(); wrong != "" {
				t.Errorf("after %s in %q: %s", movrOps[step.op], step.city, wrong)
			}
		}
		if checked, err := w.Verify(ctx, db); err != nil {
			t.Fatalf("Verify after one op of each: %v", err)
		} else {
			t.Logf("%s after one op of each: %s", name, checked)
		}

		if errs := workloadtest.RunClients(t, w, db, 4, 300); len(errs) > 0 {
			t.Fatalf("%d of 1200 ops failed; first: %v", len(errs), errs[0])
		}
		checked, err := w.Verify(ctx, db)
		if err != nil {
			t.Fatalf("Verify after the mix: %v", err)
		}
		t.Logf("%s after 4 x 300 ops: %s", name, checked)
		if started := w.added[startedRides].done.Load(); started < 3 {
			t.Errorf("only %d rides started in 1200 ops", started)
		}

		enginetest.Exec(t, db, "INSERT INTO "+tPromoCodes+" (code) VALUES ('planted')")
		if _, err := w.Verify(ctx, db); err == nil || !strings.Contains(err.Error(), "promo_codes rows") {
			t.Errorf("Verify with a promo code planted: %v", err)
		}
		// The foreign keys hold: a ride of a user from another city is refused.
		err = engine.WithSQL(ctx, db, func(conn *sql.Conn, _ engine.Dialect) error {
			_, err := conn.ExecContext(ctx, "INSERT INTO "+tRides+" (id, city, vehicle_city, rider_id, vehicle_id) VALUES ("+
				"'00000000-0000-4000-8000-000000000001', 'rome', 'rome', '"+loadedID(0, 18)+"', '"+loadedID(8, 9)+"')")
			return err
		})
		if err == nil {
			t.Error("a ride of a new york user in rome was inserted: no foreign key")
		}
	})
}

// differs says how a figure differs from what it should be, or "".
func differs(got, want int64) string {
	if got == want {
		return ""
	}
	return fmt.Sprintf(" %d, want %d;", got, want)
}
