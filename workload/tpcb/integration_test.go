package tpcb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload/sqlwork"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// TestLoadAndRun loads scale 1 (pgbench -i -s 1), runs 2 clients x 200
// transactions and checks pgbench's consistency property: every committed
// delta reached the account, teller, branch and history.
func TestLoadAndRun(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		w := newW(t, map[string]string{pScale: "1", pSeed: "7"})
		stats, err := w.Load(ctx, db, 4)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Records != 100000 || stats.Duration <= 0 {
			t.Errorf("load stats %+v, want 100000 records", stats)
		}
		t.Logf("%s: loaded scale 1 in %v", name, stats.Duration)
		for _, c := range []struct {
			table string
			want  int64
		}{{tBranches, 1}, {tTellers, 10}, {tAccounts, 100000}, {tHistory, 0}} {
			if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+c.table); got != c.want {
				t.Errorf("%s has %d rows, want %d", c.table, got, c.want)
			}
		}
		// pgbench's shape: accounts and tellers in blocks per branch,
		// zero balances, accounts' filler the padded empty string.
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+tAccounts+" WHERE bid = 1 AND abalance = 0 AND filler IS NOT NULL"); got != 100000 {
			t.Errorf("%d accounts of branch 1 with zero balance and a filler, want 100000", got)
		}
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+tTellers+" WHERE bid = 1 AND tbalance = 0"); got != 10 {
			t.Errorf("%d tellers of branch 1 with zero balance, want 10", got)
		}

		start := time.Now()
		if errs := workloadtest.RunClients(t, w, db, 2, 200); len(errs) > 0 {
			t.Fatalf("%d of 400 transactions failed; first: %v", len(errs), errs[0])
		}
		// As the runner runs them: on a lane, on taken connections.
		if errs := workloadtest.RunClientsOnLane(t, w, db, 2, 200); len(errs) > 0 {
			t.Fatalf("on a lane, %d of 400 transactions failed; first: %v", len(errs), errs[0])
		}
		want := int64(800)
		t.Logf("%s: %d transactions in %v", name, want, time.Since(start))
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+tHistory); got != want {
			t.Errorf("history has %d rows, want %d", got, want)
		}
		b, err := w.Balances(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Consistent() {
			t.Errorf("pgbench consistency broken: %+v", b)
		}
		if b.History == 0 && enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+tHistory+" WHERE delta <> 0") == 0 {
			t.Errorf("no delta was applied: %+v", b)
		}
		t.Logf("%s: balances %+v", name, b)

		// Loading again starts over: DROP TABLE IF EXISTS, fresh rows.
		if _, err := w.Load(ctx, db, 2); err != nil {
			t.Fatalf("second load: %v", err)
		}
		if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+tHistory); got != 0 {
			t.Errorf("history has %d rows after a new load, want 0", got)
		}
		if b, err := w.Balances(ctx, db); err != nil || b != (Balances{}) {
			t.Errorf("balances after a new load %+v, %v; want all zero", b, err)
		}
	})
}

// TestDeadlockRolledBackAndReturned makes a client's transaction part of a
// deadlock and checks that Do returns the labelled error instead of
// retrying, and that it rolled back: nothing of it is left and the next
// transaction on the same client succeeds.
//
// The other side, x, updates 200 accounts and branch 1, so it is the
// heavier transaction (InnoDB rolls back the lighter one); the client waits
// for branch 1 first, so its deadlock_timeout expires first on PostgreSQL.
func TestDeadlockRolledBackAndReturned(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		for how, call := range callers(name) {
			t.Logf("%s: the client runs on %s", name, how)
			deadlockOnce(t, name, db, call)
		}
	})
}

func deadlockOnce(t *testing.T, name string, db engine.DB, call caller) {
	ctx := context.Background()
	w, c := loadedClient(t, db)

	xs, err := db.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer xs.Close()
	x := xs.(engine.SQL).Conn()
	p := xs.(engine.SQL).Dialect().Placeholder

	const aid, tid, bid, delta = 5, 1, 1, 100
	if err := c.prepare(ctx); err != nil {
		t.Fatal(err)
	}
	var cerr, xerr error
	for attempt := 1; attempt <= 3; attempt++ {
		if _, err := x.ExecContext(ctx, "START TRANSACTION"); err != nil {
			t.Fatal(err)
		}
		if _, err := x.ExecContext(ctx, "UPDATE "+tAccounts+" SET abalance = abalance + 1 WHERE aid > 1000 AND aid <= 1200"); err != nil {
			t.Fatal(err)
		}
		if _, err := x.ExecContext(ctx, "UPDATE "+tBranches+" SET bbalance = bbalance + 1 WHERE bid = "+p(1), bid); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- call(ctx, func(ctx context.Context) error { return c.run(ctx, aid, tid, bid, delta) })
		}()
		// The client locks account 5, then waits for branch 1; x must
		// close the cycle well before PostgreSQL's deadlock_timeout
		// (1s) makes the client look for one.
		time.Sleep(300 * time.Millisecond)
		_, xerr = x.ExecContext(ctx, "UPDATE "+tAccounts+" SET abalance = abalance + 1 WHERE aid = "+p(1), aid)
		if _, err := x.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		cerr = <-done
		if cerr != nil {
			break
		}
		t.Logf("%s attempt %d: the other transaction was the victim (%v); again", name, attempt, xerr)
		// The client committed: undo it so the balances stay zero.
		if _, err := x.ExecContext(ctx, "UPDATE "+tAccounts+" SET abalance = 0 WHERE aid = "+p(1), aid); err != nil {
			t.Fatal(err)
		}
		enginetest.Exec(t, db, "UPDATE "+tTellers+" SET tbalance = 0", "UPDATE "+tBranches+" SET bbalance = 0", "DELETE FROM "+tHistory)
	}
	if cerr == nil {
		t.Fatalf("the client never lost the deadlock")
	}
	if xerr != nil {
		t.Errorf("both sides failed; the other: %v", xerr)
	}
	t.Logf("%s: %v", name, cerr)
	if sqlwork.Conflict(cerr) == "" || !strings.Contains(cerr.Error(), "deadlock") || !strings.Contains(cerr.Error(), "rolled back") {
		t.Errorf("error %q: want it labelled a deadlock, rolled back", cerr)
	}
	if !strings.Contains(cerr.Error(), "aid 5, tid 1, bid 1, delta 100") {
		t.Errorf("error %q does not say which transaction", cerr)
	}
	// Rolled back: nothing of the client's transaction is left.
	if got := enginetest.QueryInt(t, db, "SELECT abalance FROM "+tAccounts+" WHERE aid = 5"); got != 0 {
		t.Errorf("account 5 has balance %d after the rollback, want 0", got)
	}
	if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+tHistory); got != 0 {
		t.Errorf("history has %d rows after the rollback, want 0", got)
	}
	// The connection is usable: the next transaction commits.
	if err := call(ctx, func(ctx context.Context) error { return c.run(ctx, aid, tid, bid, delta) }); err != nil {
		t.Fatalf("transaction after the deadlock: %v", err)
	}
	b, err := w.Balances(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if b != (Balances{delta, delta, delta, delta}) {
		t.Errorf("balances %+v, want all %d", b, delta)
	}
}

// TestMissingAccountRolledBack deletes an account and checks that a
// transaction on it fails naming the account, leaves nothing behind, and
// that the client's next transaction commits.
func TestMissingAccountRolledBack(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		for how, call := range callers(name) {
			ctx := context.Background()
			w, c := loadedClient(t, db)
			enginetest.Exec(t, db, "DELETE FROM "+tAccounts+" WHERE aid = 7")
			err := call(ctx, func(ctx context.Context) error { return c.run(ctx, 7, 2, 1, 50) })
			t.Logf("%s on %s: %v", name, how, err)
			if err == nil || !strings.Contains(err.Error(), "account 7 is missing") || !strings.Contains(err.Error(), "select account") {
				t.Fatalf("transaction on a deleted account: %v; want it to name the account and the step", err)
			}
			if got := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+tHistory+" WHERE aid = 7"); got != 0 {
				t.Errorf("history has %d rows for the failed transaction", got)
			}
			if err := call(ctx, func(ctx context.Context) error { return c.run(ctx, 8, 2, 1, 50) }); err != nil {
				t.Fatalf("next transaction: %v", err)
			}
			if b, err := w.Balances(ctx, db); err != nil || b != (Balances{50, 50, 50, 50}) {
				t.Errorf("balances %+v, %v; want all 50", b, err)
			}
		}
	})
}

// caller runs one call of a client's: on the calling goroutine, or on a
// lane of its own (lane.Do) as the runner runs clients on PostgreSQL.
type caller func(ctx context.Context, f func(context.Context) error) error

// callers are the ways a client runs on engine name.
func callers(name string) map[string]caller {
	ways := map[string]caller{"its goroutine": func(ctx context.Context, f func(context.Context) error) error { return f(ctx) }}
	if name == "postgres" {
		ways["a lane"] = lane.Do
	}
	return ways
}

// loadedClient loads scale 1 and returns the workload and client 0 on its
// own session; both are closed when the test ends.
func loadedClient(t *testing.T, db engine.DB) (*Workload, *Client) {
	t.Helper()
	ctx := context.Background()
	w := newW(t, map[string]string{pScale: "1"})
	if _, err := w.Load(ctx, db, 2); err != nil {
		t.Fatal(err)
	}
	s, err := db.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	wc, err := w.NewClient(0, s)
	if err != nil {
		t.Fatal(err)
	}
	c := wc.(*Client)
	t.Cleanup(func() { c.Close() })
	return w, c
}

// TestNotSQL checks the message on a key-value engine's session.
func TestNotSQL(t *testing.T) {
	workloadtest.CheckNotSQL(t, newW(t, nil))
}
