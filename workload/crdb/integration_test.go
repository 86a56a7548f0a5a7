package crdb

import (
	"context"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/enginetest"
	"github.com/tierbench/tierbench/workload/workloadtest"
)

// TestKVRun writes with 4 clients, then reads only, on each distribution:
// every hash or sequential read finds the row of a key written by then
// (zipfian: most do), and Verify counts one
// row per key written (zipfian: at most). A mixed run then counts its
// reads. Batches of 4 exercise the multi-row upsert and IN list.
func TestKVRun(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		for _, dist := range []string{distHash, distSequential, distZipfian} {
			w := newKVTest(t, map[string]string{pDistribution: dist, pBatch: "4", pBlockBytes: "64", pSeed: "5"})
			if _, err := w.Load(ctx, db, 1); err != nil {
				t.Fatal(err)
			}
			if errs := workloadtest.RunClients(t, w, db, 4, 100); len(errs) > 0 {
				t.Fatalf("%s: %d of 400 writes failed; first: %v", dist, len(errs), errs[0])
			}
			rows := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+KVTable)
			if dist != distZipfian && rows != 1600 {
				t.Errorf("%s: %d rows after 400 writes of 4 keys, want 1600", dist, rows)
			}
			if blocks := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+KVTable+" WHERE LENGTH(v) <> 64"); blocks != 0 {
				t.Errorf("%s: %d values not of 64 bytes", dist, blocks)
			}
			w.readPercent = 100
			if errs := workloadtest.RunClients(t, w, db, 4, 100); len(errs) > 0 {
				t.Fatalf("%s: %d of 400 reads failed; first: %v", dist, len(errs), errs[0])
			}
			// Zipfian reads, as cockroach's, draw from the whole key space:
			// the hot keys are written, a cold one may not be.
			if empty := w.empty.Load(); w.reads.Load() != 400 || (dist != distZipfian && empty != 0) || empty > 80 {
				t.Errorf("%s: %d reads, %d found no row: want 400 reads that find a written key (zipfian: most)", dist, w.reads.Load(), empty)
			}
			w.readPercent = 50
			if errs := workloadtest.RunClients(t, w, db, 4, 100); len(errs) > 0 {
				t.Fatalf("%s: %d of 400 mixed ops failed; first: %v", dist, len(errs), errs[0])
			}
			if r := w.reads.Load() - 400; r < 140 || r > 260 {
				t.Errorf("%s: %d reads of 400 ops at read_percent 50", dist, r)
			}
			checked, err := w.Verify(ctx, db)
			if err != nil {
				t.Fatalf("%s: Verify: %v", dist, err)
			}
			t.Logf("%s %s: %s", name, dist, checked)
		}
		// A row lost behind the workload's back: Verify says so.
		enginetest.Exec(t, db, "DELETE FROM "+KVTable+" WHERE k = (SELECT MIN(k) FROM (SELECT k FROM "+KVTable+") AS t)")
		w := newKVTest(t, nil)
		w.committed.Store(1 << 40)
		if _, err := w.Verify(ctx, db); err == nil || !strings.Contains(err.Error(), "lost or invented rows") {
			t.Errorf("Verify with rows missing: %v", err)
		}
	})
}

// TestBankRun loads 1,000 accounts, runs 4 clients x 300 transfers and
// verifies the total; 4 clients over 3 accounts make every transfer
// contend; a balance changed by hand fails Verify.
func TestBankRun(t *testing.T) {
	enginetest.ForEachSQL(t, func(t *testing.T, name string, db engine.DB) {
		ctx := context.Background()
		for _, rows := range []string{"1000", "3"} {
			w, err := BankSpec().Build(map[string]string{pRows: rows, pSeed: "7"})
			if err != nil {
				t.Fatal(err)
			}
			b := w.(*Bank)
			stats, err := b.Load(ctx, db, 3)
			if err != nil {
				t.Fatal(err)
			}
			if stats.Records != b.rows {
				t.Errorf("loaded %d accounts, want %d", stats.Records, b.rows)
			}
			if n := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+BankTable+" WHERE LENGTH(payload) = 100"); n != b.rows {
				t.Errorf("%d payloads of 100 bytes, want %d", n, b.rows)
			}
			if errs := workloadtest.RunClients(t, b, db, 4, 300); len(errs) > 0 {
				t.Fatalf("%s accounts: %d of 1200 transfers failed; first: %v", rows, len(errs), errs[0])
			}
			checked, err := b.Verify(ctx, db)
			if err != nil {
				t.Fatalf("%s accounts: Verify: %v", rows, err)
			}
			t.Logf("%s: %s", name, checked)
			if moved := enginetest.QueryInt(t, db, "SELECT COUNT(*) FROM "+BankTable+" WHERE balance <> 0"); moved < b.rows/2 {
				t.Errorf("only %d of %d accounts changed balance", moved, b.rows)
			}
		}
		w, _ := BankSpec().Build(map[string]string{pRows: "3"})
		enginetest.Exec(t, db, "UPDATE "+BankTable+" SET balance = balance + 1 WHERE id = 0")
		if _, err := w.(*Bank).Verify(ctx, db); err == nil || !strings.Contains(err.Error(), "invariant broken") {
			t.Errorf("Verify with a balance raised by 1: %v", err)
		}
	})
}

// TestNotSQL checks the messages on a key-value engine.
func TestNotSQL(t *testing.T) {
	workloadtest.CheckNotSQL(t, newKVTest(t, nil))
	w, _ := BankSpec().Build(nil)
	workloadtest.CheckNotSQL(t, w)
}
