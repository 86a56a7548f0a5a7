package searchload

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
)

// bulker builds and sends bulks, reusing its buffers: one goroutine's.
type bulker struct {
	gen  *eventGen
	body []byte
	resp bytes.Buffer
}

func (w *Workload) newBulker() *bulker {
	return &bulker{gen: newEventGen(w.eventSeed), body: make([]byte, 0, w.bulkSize*1024)}
}

// bulk indexes events first..first+count-1 in one request and counts the
// outcome for Verify. A bulk with failed items is an error: the op failed,
// though the node kept its other documents.
func (w *Workload) bulk(ctx context.Context, n node, b *bulker, first int64, count int) error {
	b.body = appendBulk(b.body[:0], b.gen, first, count)
	w.bulks.Add(1)
	if err := n.do(ctx, http.MethodPost, n.bulk, ndjsonBody, b.body, &b.resp); err != nil {
		w.maybe.Add(int64(count))
		return fmt.Errorf("bulk of events %d..%d: %w", first, first+int64(count)-1, err)
	}
	failed, firstFailure, err := failedItems(b.resp.Bytes())
	if err != nil {
		w.maybe.Add(int64(count))
		return fmt.Errorf("bulk of events %d..%d: %w", first, first+int64(count)-1, err)
	}
	w.acked.Add(int64(count - failed))
	w.rejected.Add(int64(failed))
	if failed > 0 {
		return fmt.Errorf("bulk of events %d..%d: %d of %d documents failed, the first: %s",
			first, first+int64(count)-1, failed, count, firstFailure)
	}
	return nil
}

// NewClient returns client id bound to session s, which reaches the node.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSearch(s)
	if err != nil {
		return nil, fmt.Errorf("%s client %d: %w", w.name, id, err)
	}
	n, err := newNode(q)
	if err != nil {
		return nil, fmt.Errorf("%s client %d: %w", w.name, id, err)
	}
	c := &client{w: w, n: n, rng: workload.NewRand(w.seed, w.seeded, streamClients, uint64(id)), turn: id}
	c.opBulk, c.opQuery = w.opIndexes()
	if c.opBulk >= 0 {
		c.bulker = w.newBulker()
	}
	return c, nil
}

const streamClients = 0x5EA2C4

// client issues one bulk or one query per Do; one goroutine uses it.
type client struct {
	w       *Workload
	n       node
	rng     *rand.Rand
	bulker  *bulker // nil with no bulks
	opBulk  int     // index of the bulk op in Ops, -1 if none
	opQuery int     // index of the first query op in Ops, -1 if none
	turn    int     // the next query type, in turn
	query   []byte
	resp    bytes.Buffer
}

// Do sends a bulk of the next bulk_size events, or the next query of the
// mix, as search_percent decides.
func (c *client) Do(ctx context.Context) (int, error) {
	if c.opQuery < 0 || (c.opBulk >= 0 && c.rng.IntN(100) >= c.w.searchPercent) {
		size := int64(c.w.bulkSize)
		first := c.w.next.Add(size) - size
		return c.opBulk, c.w.bulk(ctx, c.n, c.bulker, first, c.w.bulkSize)
	}
	q := c.turn % len(queryOps)
	c.turn++
	return c.opQuery + q, c.search(ctx, q)
}

// minWindowMs is the shortest time window a query covers.
const minWindowMs = 100 * eventSpacingMs

// window picks a tenth of the events claimed so far, by their timestamps:
// [from, to) in epoch milliseconds.
func (c *client) window() (from, to int64) {
	span := max(c.w.next.Load(), 1) * eventSpacingMs
	width := min(max(span/10, minWindowMs), span)
	from = eventBase + c.rng.Int64N(span-width+1)
	return from, from + width
}

// search sends query type q (an index into queryOps) and checks the answer.
func (c *client) search(ctx context.Context, q int) error {
	from, to := c.window()
	switch queryOps[q] {
	case OpTerm:
		c.query = appendTermQuery(c.query[:0], pickCountry(c.rng))
	case OpRange:
		c.query = appendRangeQuery(c.query[:0], from, to)
	case OpDateHistogram:
		c.query = appendDateHistogram(c.query[:0], c.n.d, from, to)
	case OpTermsAgg:
		c.query = appendTermsAgg(c.query[:0], from, to)
	}
	if err := c.n.do(ctx, http.MethodPost, searchPath, jsonBody, c.query, &c.resp); err != nil {
		return fmt.Errorf("%s query %s: %w", queryOps[q], c.query, err)
	}
	hits, err := searchHits(c.resp.Bytes())
	if err != nil {
		return fmt.Errorf("%s query %s: %w", queryOps[q], c.query, err)
	}
	c.w.queries.Add(1)
	if hits == 0 {
		c.w.noHits.Add(1)
	}
	return nil
}
