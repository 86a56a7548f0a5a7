package searchload

import (
	"github.com/tierbench/tierbench/engine"
)

// What standard tools (opensearch-benchmark, esrally: tool/searchbench)
// need to drive these workloads from a track tierbench writes: the same
// index, the same events and the same query shapes as the builtin clients.

// EventWriter writes the workloads' events: event i from the seed and i
// alone, as the builtin clients index them. One goroutine uses it.
type EventWriter struct{ g *eventGen }

// NewEventWriter returns a writer of the events of seed.
func NewEventWriter(seed uint64) *EventWriter { return &EventWriter{g: newEventGen(seed)} }

// AppendEvent appends event i to b as one line of JSON, without a newline.
func (e *EventWriter) AppendEvent(b []byte, i int64) []byte { return e.g.appendEvent(b, i) }

// IndexBody is the body that creates the workloads' index on node: the
// run's index settings (node.IndexSettings) and the events' mapping,
// under type _doc on Elasticsearch before 7.
func IndexBody(node engine.SearchNode) ([]byte, error) {
	d, err := dialectOf(node)
	if err != nil {
		return nil, err
	}
	return indexBody(d, node.IndexSettings)
}

// MappingType is the mapping type a bulk names on node: "_doc" before
// Elasticsearch 7, else "" (typeless).
func MappingType(node engine.SearchNode) (string, error) {
	d, err := dialectOf(node)
	if err != nil || !d.typed {
		return "", err
	}
	return "_doc", nil
}

// Query is one query type's op name and a request body of its shape.
type Query struct {
	Op   string
	Body []byte
}

// FixedQueries returns one body of each query type, in the mix's order,
// over the events 0..events-1: the term query for the most frequent
// country, the others over the middle tenth of the events' time span (a
// builtin client draws the country and the window anew for each query).
func FixedQueries(node engine.SearchNode, events int64) ([]Query, error) {
	d, err := dialectOf(node)
	if err != nil {
		return nil, err
	}
	span := max(events, 1) * eventSpacingMs
	width := min(max(span/10, minWindowMs), span)
	from := eventBase + (span-width)/2
	to := from + width
	return []Query{
		{OpTerm, appendTermQuery(nil, countries[0].iso)},
		{OpRange, appendRangeQuery(nil, from, to)},
		{OpDateHistogram, appendDateHistogram(nil, d, from, to)},
		{OpTermsAgg, appendTermsAgg(nil, from, to)},
	}, nil
}

// IndexedByTool tells Verify that a standard tool drove the run and
// indexed n documents into the index past the workload's clients, by the
// node's own count of indexing operations on it: the tool's bulks never
// reach the counters the clients keep, so Verify would otherwise find
// documents nobody acknowledged.
func (w *Workload) IndexedByTool(n int64) { w.acked.Add(n) }
