package oltp

import (
	"context"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// TestLoadAndRun loads two sysbench tables of 2000 rows, checks their
// shape, then runs both workloads' transactions with two clients and
// checks that the row counts did not change (each delete+insert removes
// and puts back one id) and that no transaction failed for any other
// reason than a conflict between the clients.
func TestLoadAndRun(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		const size = 2000
		w := newW(t, ReadWrite, map[string]string{"tables": "2", "table_size": "2000", "seed": "7"})
		stats, err := w.Load(ctx, db, 2)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Records != 2*size || stats.Duration <= 0 {
			t.Errorf("load stats %+v, want %d records", stats, 2*size)
		}
		t.Logf("%s: loaded 2 x %d rows in %v", name, size, stats.Duration)
		for _, tbl := range []string{"sbtest1", "sbtest2"} {
			checks := []struct {
				q    string
				want int64
			}{
				{"SELECT COUNT(*) FROM " + tbl, size},
				{"SELECT MIN(id) FROM " + tbl, 1},
				{"SELECT MAX(id) FROM " + tbl, size},
				{"SELECT COUNT(*) FROM " + tbl + " WHERE k < 1 OR k > 2000", 0},
				// sysbench's special distribution: most k near the middle.
				{"SELECT CASE WHEN COUNT(*) > 1400 THEN 1 ELSE 0 END FROM " + tbl + " WHERE k BETWEEN 990 AND 1011", 1},
				{"SELECT COUNT(*) FROM " + tbl + " WHERE c LIKE '___________-___________-%' AND pad LIKE '___________-___________-%'", size},
			}
			for _, c := range checks {
				if got := enginetest.QueryInt(t, db, c.q); got != c.want {
					t.Errorf("%s = %d, want %d", c.q, got, c.want)
				}
			}
		}
		// The k index exists, under sysbench's name.
		indexQ := "SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'sbtest2' AND indexname = 'k_2'"
		if name == "mariadb" {
			indexQ = "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'sbtest2' AND index_name = 'k_2'"
		}
		if got := enginetest.QueryInt(t, db, indexQ); got != 1 {
			t.Errorf("index k_2: %d rows in the catalog, want 1", got)
		}

		// The runner runs the clients on lanes (a taken connection each,
		// driver/lane) where it can: both ways are checked.
		runners := map[string]func(testing.TB, workload.Workload, engine.DB, int, int) []error{
			"goroutines": workloadtest.RunClients, "a lane": workloadtest.RunClientsOnLane}
		for _, wname := range []string{ReadWrite, WriteOnly} {
			for how, run := range runners {
				ww := newW(t, wname, map[string]string{"tables": "2", "table_size": "2000"})
				start := time.Now()
				const clients, each = 2, 150
				errs := run(t, ww, db, clients, each)
				t.Logf("%s %s on %s: %d transactions in %v, %d failed", name, wname, how, clients*each, time.Since(start), len(errs))
				for _, err := range errs {
					if sqlwork.Conflict(err) == "" && !duplicateKey(err) {
						t.Errorf("%s: %v", wname, err)
					}
				}
				if len(errs) > clients*each/10 {
					t.Errorf("%s: %d of %d transactions failed; first: %v", wname, len(errs), clients*each, errs[0])
				} else if len(errs) > 0 {
					t.Logf("%s: conflicts between the clients, rolled back: %v", wname, errs[0])
				}
				for _, tbl := range []string{"sbtest1", "sbtest2"} {
					if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+tbl); got != size {
						t.Errorf("after %s, %s has %d rows, want %d", wname, tbl, got, size)
					}
				}
			}
		}
		// k moved: index updates committed.
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM sbtest1 WHERE c NOT LIKE '___________-%'"); got != 0 {
			t.Errorf("%d rows with a c unlike sysbench's", got)
		}

		// A single client has no one to conflict with: no error at all,
		// with and without explicit transactions.
		for _, skip := range []string{"off", "on"} {
			for how, run := range runners {
				ww := newW(t, ReadWrite, map[string]string{"tables": "2", "table_size": "2000", "skip_trx": skip})
				if errs := run(t, ww, db, 1, 100); len(errs) > 0 {
					t.Errorf("skip_trx=%s, one client on %s: %d errors; first: %v", skip, how, len(errs), errs[0])
				}
			}
		}
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM sbtest2"); got != size {
			t.Errorf("sbtest2 has %d rows, want %d", got, size)
		}

		// Loading again starts over.
		w2 := newW(t, WriteOnly, map[string]string{"table_size": "500"})
		if _, err := w2.Load(ctx, db, 2); err != nil {
			t.Fatalf("second load: %v", err)
		}
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM sbtest1"); got != 500 {
			t.Errorf("sbtest1 has %d rows after a new load, want 500", got)
		}
		if name == "postgres" {
			// The SERIAL sequence continues after the loaded ids, as
			// sysbench's prepare leaves it.
			if got := enginetest.QueryInt(t, db, "SELECT nextval(pg_get_serial_sequence('sbtest1', 'id'))"); got != 501 {
				t.Errorf("sequence after the load: %d, want 501", got)
			}
		}
	})
}

// TestNotSQL checks the message on a key-value engine's session.
func TestNotSQL(t *testing.T) {
	workloadtest.CheckNotSQL(t, newW(t, ReadWrite, nil))
}
