package bank

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// TestTransfersKeepTotal loads 1000 accounts, runs 4 clients x 300
// transfers and verifies the total; then breaks the invariant by hand and
// checks that Verify fails and says both numbers.
func TestTransfersKeepTotal(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		w := newW(t, map[string]string{pAccounts: "1000", pSeed: "3"})
		stats, err := w.Load(ctx, db, 3)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Records != 1000 || stats.Duration <= 0 {
			t.Errorf("load stats %+v, want 1000 records", stats)
		}
		checked, err := w.Verify(ctx, db)
		if err != nil {
			t.Fatalf("Verify after the load: %v", err)
		}
		if want := "sum of balances = 1000000 over 1000 accounts"; checked != want {
			t.Errorf("Verify says it checked %q, want %q", checked, want)
		}
		start := time.Now()
		if errs := workloadtest.RunClients(t, w, db, 4, 300); len(errs) > 0 {
			t.Fatalf("%d of 1200 transfers failed; first: %v", len(errs), errs[0])
		}
		t.Logf("%s: 1200 transfers in %v", name, time.Since(start))
		if _, err := w.Verify(ctx, db); err != nil {
			t.Fatalf("Verify after the run: %v", err)
		}
		// 1200 transfers touch up to 2400 accounts: most of the 1000 moved.
		if moved := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+Table+" WHERE balance <> 1000"); moved < 500 {
			t.Errorf("only %d accounts changed balance", moved)
		}

		// One balance raised by hand: the sum is off by one.
		enginetest.Exec(t, db, "UPDATE "+Table+" SET balance = balance + 1 WHERE id = 1")
		checked, err = w.Verify(ctx, db)
		if err == nil || checked != "" {
			t.Fatalf("Verify passed (%q) with a balance raised by 1", checked)
		}
		t.Logf("%s: %v", name, err)
		for _, want := range []string{"invariant broken", "SUM(balance) = 1000001, want 1000000", "COUNT(*) = 1000, want 1000"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Verify error %q lacks %q", err, want)
			}
		}
		// The sum restored but an account too many: the count is off.
		enginetest.Exec(t, db, "UPDATE "+Table+" SET balance = balance - 1 WHERE id = 1",
			"INSERT INTO "+Table+" (id, balance) VALUES (1001, 0)")
		_, err = w.Verify(ctx, db)
		if err == nil || !strings.Contains(err.Error(), "SUM(balance) = 1000000, want 1000000") ||
			!strings.Contains(err.Error(), "COUNT(*) = 1001, want 1000") {
			t.Errorf("Verify with an extra account: %v", err)
		}
	})
}

// TestContendedPair runs every transfer on the same two accounts, so each
// waits for another's locks: locking lowest id first must leave no
// deadlock, and the locks must keep the total.
func TestContendedPair(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		w := newW(t, map[string]string{pAccounts: "2", pInitial: "50"})
		if _, err := w.Load(ctx, db, 4); err != nil {
			t.Fatal(err)
		}
		if errs := workloadtest.RunClients(t, w, db, 6, 100); len(errs) > 0 {
			t.Fatalf("%d of 600 transfers failed; first: %v", len(errs), errs[0])
		}
		if _, err := w.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
		// Amounts up to 100 against 50 each: balances went negative, which
		// the workload allows.
		t.Logf("%s: balances of 1 and 2: %d, %d", name,
			enginetest.QueryInt(t, db, "SELECT balance FROM "+Table+" WHERE id = 1"),
			enginetest.QueryInt(t, db, "SELECT balance FROM "+Table+" WHERE id = 2"))
	})
}

// TestNotSQL checks the messages on a key-value engine.
func TestNotSQL(t *testing.T) {
	workloadtest.CheckNotSQL(t, newW(t, nil))
}
