package searchload

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/driver"
	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/search"
	"github.com/tierbench/tierbench/engine/search/searchtest"
	"github.com/tierbench/tierbench/workload"
)

// Tests on real nodes. A node takes 20-60 s to start on 2 cores, so each
// flavor starts one, and every workload runs on it in turn (Load makes
// the index anew).

// newClients binds n clients of w to sessions of db, closed when the test
// ends.
func newClients(t *testing.T, w workload.Workload, db engine.DB, n int) []workload.Client {
	t.Helper()
	var out []workload.Client
	for i := range n {
		s, err := db.NewSession(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		c, err := w.NewClient(i, s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func newLoaded(t *testing.T, name string, db engine.DB, params map[string]string) *Workload {
	t.Helper()
	w, err := specs()[name].Build(params)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := w.Load(context.Background(), db, 2)
	if err != nil {
		t.Fatalf("%s load: %v", name, err)
	}
	sw := w.(*Workload)
	if ls.Records != sw.docs {
		t.Errorf("%s load: %d records, want %d", name, ls.Records, sw.docs)
	}
	return sw
}

// verify runs Verify and checks the index holds want documents.
func verify(t *testing.T, w *Workload, db engine.DB, want int64) {
	t.Helper()
	checked, err := w.Verify(context.Background(), db)
	if err != nil {
		t.Fatalf("%s verify: %v", w.name, err)
	}
	if !strings.HasPrefix(checked, "index eventdata holds "+strconv.FormatInt(want, 10)+" documents") {
		t.Errorf("%s verify: %s; want %d documents", w.name, checked, want)
	}
	t.Logf("%s: %s", w.name, checked)
}

func TestOnNodes(t *testing.T) {
	for _, e := range []search.Engine{search.OpenSearch(), search.Elasticsearch()} {
		t.Run(e.Spec().Name, func(t *testing.T) {
			db := searchtest.Open(t, e)
			ctx := context.Background()
			t.Run("ingest", func(t *testing.T) {
				w := newLoaded(t, Ingest, db, map[string]string{"bulk_size": "100", "seed": "1"})
				for _, c := range newClients(t, w, db, 2) {
					for range 3 {
						if op, err := c.Do(ctx); op != 0 || err != nil {
							t.Fatalf("Do = %d, %v; want the bulk op, no error", op, err)
						}
					}
				}
				verify(t, w, db, 600)
			})
			t.Run("search", func(t *testing.T) {
				w := newLoaded(t, Search, db, map[string]string{"docs": "3000", "bulk_size": "500", "seed": "2"})
				seen := map[int]int{}
				for _, c := range newClients(t, w, db, 2) {
					for range 8 {
						op, err := c.Do(ctx)
						if err != nil {
							t.Fatalf("%s: %v", w.Ops()[op], err)
						}
						seen[op]++
					}
				}
				for i, name := range w.Ops() {
					if seen[i] != 4 {
						t.Errorf("%s ran %d times of 16 queries, want 4", name, seen[i])
					}
				}
				if n := w.noHits.Load(); n != 0 || w.queries.Load() != 16 {
					t.Errorf("%d of %d queries matched nothing, want every one to match", n, w.queries.Load())
				}
				verify(t, w, db, 3000)
				n, err := newNode(db.(engine.Search))
				if err != nil {
					t.Fatal(err)
				}
				if b, err := n.storeBytes(ctx); err != nil || b < w.EstimatedBytes() {
					t.Errorf("index of %d documents takes %d bytes (%v), under the estimate %d", w.docs, b, err, w.EstimatedBytes())
				} else {
					t.Logf("index of %d documents: %d bytes, %d a document", w.docs, b, b/w.docs)
				}
			})
			t.Run("ingest-search", func(t *testing.T) {
				w := newLoaded(t, IngestSearch, db, map[string]string{"docs": "1000", "bulk_size": "200", "seed": "3"})
				cs := newClients(t, w, db, 2)
				seen := map[string]int{}
				for _, c := range cs {
					for range 6 {
						op, err := c.Do(ctx)
						if err != nil {
							t.Fatalf("%s: %v", w.Ops()[op], err)
						}
						seen[w.Ops()[op]]++
					}
				}
				if seen[OpBulk] == 0 || seen[OpBulk] == 12 {
					t.Errorf("ops %v: want bulks and queries", seen)
				}
				verify(t, w, db, 1000+int64(seen[OpBulk])*200)
				// A window the driver ends mid-bulk: Verify must allow
				// for the bulks it cut off.
				var clients []driver.Client
				for _, c := range cs {
					clients = append(clients, c)
				}
				res, err := driver.Run(ctx, driver.Config{Ops: w.Ops(), Duration: 3 * time.Second}, clients)
				if err != nil {
					t.Fatal(err)
				}
				if res.Measured.Errors != 0 {
					t.Errorf("%d errors, first %v", res.Measured.Errors, res.FirstError)
				}
				checked, err := w.Verify(ctx, db)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("after a driven window of %d ops: %s", res.Measured.Ops, checked)
			})
			t.Run("sad: a document the mapping refuses", func(t *testing.T) {
				w := newLoaded(t, Ingest, db, map[string]string{"bulk_size": "2"})
				n, err := newNode(db.(engine.Search))
				if err != nil {
					t.Fatal(err)
				}
				b := w.newBulker()
				b.gen = newEventGen(1)
				err = w.bulk(ctx, n, b, 0, 2)
				if err != nil {
					t.Fatal(err)
				}
				// An unmapped field in one of two documents: strict refuses it.
				body := append(appendBulk(nil, b.gen, 2, 1), indexAction+`{"nope":1}`+"\n"...)
				if err := n.do(ctx, "POST", n.bulk, ndjsonBody, body, &b.resp); err != nil {
					t.Fatal(err)
				}
				failed, first, err := failedItems(b.resp.Bytes())
				if err != nil || failed != 1 || !strings.Contains(first, "strict") {
					t.Errorf("failedItems = %d, %q, %v; want the unmapped document refused by the strict mapping", failed, first, err)
				}
			})
		})
	}
}
