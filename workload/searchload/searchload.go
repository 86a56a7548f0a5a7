// Package searchload holds the search engine workloads of the seed's
// Elasticsearch study (issue 13): bulk indexing of generated web access-log
// events shaped like Rally's eventdata track (ingest), a fixed mix of
// queries over them (search), and both at once (ingest-search). They speak
// the engines' HTTP API (engine.Search): OpenSearch, and Elasticsearch
// from 6.x on.
//
// Events are made on the fly from a seeded generator, event i from the
// seed and i alone, into buffers each client reuses, so the load generator
// reads no file and allocates nothing per document.
package searchload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
)

// The workloads' names.
const (
	Ingest       = "ingest"
	Search       = "search"
	IngestSearch = "ingest-search"
)

// Parameter names.
const (
	pBulkSize      = "bulk_size"
	pDocs          = "docs"
	pSearchPercent = "search_percent"
	pSeed          = "seed"
)

// Op names. A bulk op indexes bulk_size documents; each query type is an
// op of its own, so each has its service time.
const (
	OpBulk          = "bulk"
	OpTerm          = "term"
	OpRange         = "range"
	OpDateHistogram = "date_histogram"
	OpTermsAgg      = "terms_agg"
)

// queryOps are the query types, in the order clients take turns through
// them: the fixed mix is one of each in turn.
var queryOps = []string{OpTerm, OpRange, OpDateHistogram, OpTermsAgg}

// Bounds of the parameters: a bulk stays far below the nodes' default
// http.max_content_length of 100 MB (an event is under 1 kB).
const (
	maxBulkSize = 50_000
	maxDocs     = 1_000_000_000
)

// storedBytesPerDoc is a lower bound of an event's share of the index on
// disk (compressed source, inverted index, doc values): 276-291 bytes
// measured on OpenSearch 2.19.1 and 328 on Elasticsearch 6.8.23 after a
// load of 3,000, less for the overhead of larger merged segments.
const storedBytesPerDoc = 150

// docsPerSecond is the figure the ingesting workloads report: each bulk op
// counts bulk_size documents.
var docsPerSecond = &workload.Metric{Name: "docs/s", Op: OpBulk, PerOpParam: pBulkSize}

// Specs returns the three workloads' specs.
func Specs() []workload.Spec {
	bulkSize := setting.Setting{Name: pBulkSize, Kind: setting.Int, Default: "1000", Min: "1", Max: strconv.Itoa(maxBulkSize), Doc: "documents per bulk request (one op of a client)"}
	docs := setting.Setting{Name: pDocs, Kind: setting.Int, Default: "10000", Min: "1", Max: strconv.Itoa(maxDocs), Doc: "documents indexed by the load phase, before the measured window (raise it for an index larger than the page cache)"}
	seed := setting.Setting{Name: pSeed, Kind: setting.Int, Doc: "seed of the events and the clients' choices; unset: random"}
	ingest := []setting.Setting{bulkSize, seed}
	loadBulkSize := bulkSize
	loadBulkSize.Doc = "documents per bulk request of the load phase"
	search := []setting.Setting{docs, loadBulkSize, seed}
	mixed := []setting.Setting{docs, bulkSize,
		{Name: pSearchPercent, Kind: setting.Percent, Default: "50", Doc: "percent of ops that are queries; the others are bulks"}, seed}
	return []workload.Spec{
		{
			Name:   Ingest,
			Model:  engine.ModelSearch,
			Doc:    "bulk indexing of generated web access-log events shaped like Rally's eventdata (about 750 bytes, 23 fields each) into a fresh index; figure: docs/s, bulk service time",
			Params: ingest, Metric: docsPerSecond,
			New: func(p setting.Values) (workload.Workload, error) { return newWorkload(Ingest, p), nil },
		},
		{
			Name:   Search,
			Model:  engine.ModelSearch,
			Doc:    "loads docs eventdata events, then clients query them in a fixed mix, one of each in turn: term (country, 10 hits), range (a time window, 10 hits), date_histogram and terms_agg (top URLs) over a window; figure: ops/s (each op a query), service time per query type",
			Params: search,
			New:    func(p setting.Values) (workload.Workload, error) { return newWorkload(Search, p), nil },
		},
		{
			Name:  IngestSearch,
			Model: engine.ModelSearch,
			Doc: "the seed's ingest plus search: loads docs events, then each op of a client is a query (search_percent) or a bulk, so indexing and querying run at once, as Rally's combined-indexing-and-querying; " +
				"figure: docs/s of the bulks, each query type's rate and service time beside it",
			Params: mixed, Metric: docsPerSecond,
			New: func(p setting.Values) (workload.Workload, error) { return newWorkload(IngestSearch, p), nil },
		},
	}
}

// Workload is one configured search workload, shared by every client of a
// run. Its counters tell Verify how many documents the index must hold.
type Workload struct {
	name          string
	bulkSize      int
	docs          int64 // loaded
	searchPercent int   // of ops; 0 with no queries, 100 with no bulks
	seed          int64
	seeded        bool
	eventSeed     uint64

	next     atomic.Int64 // events claimed: the next event's number
	acked    atomic.Int64 // documents the node acknowledged
	maybe    atomic.Int64 // documents of bulks with no answer: indexed or not
	rejected atomic.Int64 // documents the node refused (failed items)
	bulks    atomic.Int64
	queries  atomic.Int64
	noHits   atomic.Int64 // queries that matched nothing
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Verifier = (*Workload)(nil)
)

func newWorkload(name string, p setting.Values) *Workload {
	w := &Workload{name: name, bulkSize: p.Int(pBulkSize)}
	switch name {
	case Search:
		w.searchPercent = 100
	case IngestSearch:
		w.searchPercent = p.Int(pSearchPercent)
	}
	if name != Ingest {
		w.docs = p.Int64(pDocs)
	}
	w.seed, w.seeded = workload.Seed(p, pSeed)
	w.eventSeed = uint64(w.seed)
	if !w.seeded {
		w.eventSeed = rand.Uint64()
	}
	return w
}

// Ops names the workload's operations: the bulk, the query types, or both.
func (w *Workload) Ops() []string {
	switch w.name {
	case Ingest:
		return []string{OpBulk}
	case Search:
		return queryOps
	}
	return append([]string{OpBulk}, queryOps...)
}

// opIndexes returns the index in Ops of the bulk op and of the first query
// op; -1 where the workload has none.
func (w *Workload) opIndexes() (bulk, firstQuery int) {
	switch w.name {
	case Ingest:
		return 0, -1
	case Search:
		return -1, 0
	}
	return 0, 1
}

// EstimatedBytes is a lower bound of the index the load phase writes:
// nothing for ingest, whose index starts empty.
func (w *Workload) EstimatedBytes() int64 { return w.docs * storedBytesPerDoc }

// Load creates the index with the node's settings for the run and, but
// for ingest, indexes docs events with loaders parallel bulk senders, then
// refreshes it so that queries see them all.
func (w *Workload) Load(ctx context.Context, db engine.DB, loaders int) (workload.LoadStats, error) {
	start := time.Now()
	for _, c := range []*atomic.Int64{&w.next, &w.acked, &w.maybe, &w.rejected, &w.bulks, &w.queries, &w.noHits} {
		c.Store(0)
	}
	s, err := engine.NeedSearch(db)
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: %w", w.name, err)
	}
	n, err := newNode(s)
	if err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: %w", w.name, err)
	}
	if err := n.createIndex(ctx, s.SearchNode().IndexSettings); err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: create index %s: %w", w.name, IndexName, err)
	}
	if err := w.loadEvents(ctx, n, loaders); err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: %w", w.name, err)
	}
	if err := n.refresh(ctx); err != nil {
		return workload.LoadStats{}, fmt.Errorf("%s load: %w", w.name, err)
	}
	return workload.LoadStats{Records: w.docs, Duration: time.Since(start)}, nil
}

// loadEvents indexes events 0..docs-1 in bulks claimed by loaders
// parallel senders; the first failure stops them all.
func (w *Workload) loadEvents(ctx context.Context, n node, loaders int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range max(loaders, 1) {
		wg.Go(func() {
			b := w.newBulker()
			for ctx.Err() == nil {
				first := w.next.Add(int64(w.bulkSize)) - int64(w.bulkSize)
				if first >= w.docs {
					return
				}
				if err := w.bulk(ctx, n, b, first, int(min(int64(w.bulkSize), w.docs-first))); err != nil {
					once.Do(func() { firstErr = err })
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	w.next.Store(w.docs)
	return firstErr
}

// Verify refreshes the index and checks that it holds the documents the
// node acknowledged: no fewer, and no more than those plus the documents
// of bulks with no answer per document (cut off by the measured window's
// end, lost on the way, or failed whole with an HTTP error), which the
// node may or may not have indexed: a bulk the driver cancels at the
// window's end is often still indexed after the client gave up on it.
func (w *Workload) Verify(ctx context.Context, db engine.DB) (string, error) {
	s, err := engine.NeedSearch(db)
	if err != nil {
		return "", fmt.Errorf("%s verify: %w", w.name, err)
	}
	n, err := newNode(s)
	if err != nil {
		return "", fmt.Errorf("%s verify: %w", w.name, err)
	}
	if err := n.refresh(ctx); err != nil {
		return "", fmt.Errorf("%s verify: %w", w.name, err)
	}
	count, err := n.count(ctx)
	if err != nil {
		return "", fmt.Errorf("%s verify: %w", w.name, err)
	}
	acked, maybe := w.acked.Load(), w.maybe.Load()
	if count < acked || count > acked+maybe {
		return "", fmt.Errorf("%s lost or invented documents: index %s holds %d after a refresh, want %d..%d (%d acknowledged, %d in bulks with no answer per document)",
			w.name, IndexName, count, acked, acked+maybe, acked, maybe)
	}
	return fmt.Sprintf("index %s holds %d documents after a refresh: %d acknowledged (%d by the load) + %d of %d in bulks with no answer per document (cut off at the window's end or failed whole); %d refused by the node; %d bulks; %d queries, %d matched nothing",
		IndexName, count, acked, w.docs, count-acked, maybe, w.rejected.Load(), w.bulks.Load(), w.queries.Load(), w.noHits.Load()), nil
}
