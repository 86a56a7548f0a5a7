package searchload

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// IndexName is the index the workloads write and query.
const IndexName = "eventdata"

// dialect is what differs in requests between the nodes' versions.
type dialect struct {
	// typed: Elasticsearch before 7 wants a mapping type, here _doc, in
	// mappings and in the bulk path.
	typed bool
	// intervalKey names a date histogram's fixed bucket width:
	// fixed_interval from Elasticsearch 7.2 on (and on OpenSearch), the
	// older interval before.
	intervalKey string
}

// dialectOf reads the node's flavor and version. OpenSearch forked from
// Elasticsearch 7.10, so every OpenSearch version speaks the modern dialect.
func dialectOf(n engine.SearchNode) (dialect, error) {
	modern := dialect{intervalKey: "fixed_interval"}
	if n.Flavor == engine.FlavorOpenSearch {
		return modern, nil
	}
	if n.Flavor != engine.FlavorElasticsearch {
		return dialect{}, fmt.Errorf("search node flavor %q: want %s or %s", n.Flavor, engine.FlavorOpenSearch, engine.FlavorElasticsearch)
	}
	major, minor, err := majorMinor(n.Version)
	if err != nil {
		return dialect{}, err
	}
	switch {
	case major < 7:
		return dialect{typed: true, intervalKey: "interval"}, nil
	case major == 7 && minor < 2:
		return dialect{intervalKey: "interval"}, nil
	}
	return modern, nil
}

// majorMinor parses "6.8.23" (or "8.15.0-SNAPSHOT") into 6, 8.
func majorMinor(version string) (major, minor int, err error) {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("search node version %q: want major.minor[.patch]", version)
	}
	if major, err = strconv.Atoi(parts[0]); err == nil {
		minor, err = strconv.Atoi(parts[1])
	}
	if err != nil {
		return 0, 0, fmt.Errorf("search node version %q: want major.minor[.patch]", version)
	}
	return major, minor, nil
}

// keyword is an exact-value string field.
var keyword = map[string]any{"type": "keyword", "ignore_above": 1024}

// object is a mapping of nested fields.
func object(props map[string]any) map[string]any { return map[string]any{"properties": props} }

// eventMapping maps every field an event has, as eventdata maps them:
// strings are keywords but the raw agent, which is text, and the mapping
// is strict, so a field the generator writes and the mapping lacks fails
// the bulk instead of being guessed.
func eventMapping() map[string]any {
	long := map[string]any{"type": "long"}
	return map[string]any{
		"dynamic": "strict",
		"properties": map[string]any{
			"@timestamp": map[string]any{"type": "date"},
			"offset":     long,
			"source":     keyword,
			"beat":       object(map[string]any{"hostname": keyword}),
			"nginx": object(map[string]any{"access": object(map[string]any{
				"agent": map[string]any{"type": "text", "norms": false},
				"user_agent": object(map[string]any{"major": keyword, "os": keyword, "os_major": keyword,
					"name": keyword, "os_name": keyword, "device": keyword}),
				"remote_ip": map[string]any{"type": "ip"},
				"geoip": object(map[string]any{"continent_name": keyword, "city_name": keyword,
					"country_name": keyword, "country_iso_code": keyword, "location": map[string]any{"type": "geo_point"}}),
				"referrer":      keyword,
				"url":           keyword,
				"body_sent":     object(map[string]any{"bytes": long}),
				"method":        keyword,
				"response_code": map[string]any{"type": "integer"},
				"http_version":  keyword,
			})}),
		},
	}
}

// indexBody is the body of the request that creates the index: the
// node's settings for the run and the events' mapping.
func indexBody(d dialect, settings map[string]any) ([]byte, error) {
	var mappings any = eventMapping()
	if d.typed {
		mappings = map[string]any{"_doc": mappings}
	}
	if settings == nil {
		settings = map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"settings": settings, "mappings": mappings})
	if err != nil {
		return nil, fmt.Errorf("index %s: settings %v: %w", IndexName, settings, err)
	}
	return b, nil
}

// bulkPath is where bulks of events go. Documents get ids from the node,
// as eventdata's do: the append-only case.
func bulkPath(d dialect) string {
	p := "/" + IndexName
	if d.typed {
		p += "/_doc"
	}
	// The node answers with the failed items only: an answer of kilobytes
	// to parse per bulk, not one line per document.
	return p + "/_bulk?filter_path=errors,items.*.error"
}

// indexAction is a bulk's action line for one document: the index and
// type come from the path.
const indexAction = `{"index":{}}` + "\n"

// appendBulk appends the bulk body of events first..first+n-1: an action
// line and a document line each (NDJSON, ending in a newline).
func appendBulk(b []byte, g *eventGen, first int64, n int) []byte {
	for i := first; i < first+int64(n); i++ {
		b = append(b, indexAction...)
		b = g.appendEvent(b, i)
		b = append(b, '\n')
	}
	return b
}

// searchPath is where queries go. The shard request cache is off: a
// repeated aggregation would be answered from memory, and this workload
// measures what the index's storage serves.
const searchPath = "/" + IndexName + "/_search?request_cache=false"

// Query fields.
const (
	fieldTime    = "@timestamp"
	fieldCountry = "nginx.access.geoip.country_iso_code"
	fieldURL     = "nginx.access.url"
)

// hitsPerQuery is how many documents a term or range query fetches.
const hitsPerQuery = 10

// appendTermQuery appends a query for the events from one country,
// fetching the first hits' documents.
func appendTermQuery(b []byte, iso string) []byte {
	b = append(b, `{"size":`...)
	b = strconv.AppendInt(b, hitsPerQuery, 10)
	b = append(b, `,"query":{"term":{"`+fieldCountry+`":"`...)
	b = append(b, iso...)
	return append(b, `"}}}`...)
}

// appendWindow appends a range filter on the timestamp, [from, to) in
// epoch milliseconds.
func appendWindow(b []byte, from, to int64) []byte {
	b = append(b, `{"range":{"`+fieldTime+`":{"gte":`...)
	b = strconv.AppendInt(b, from, 10)
	b = append(b, `,"lt":`...)
	b = strconv.AppendInt(b, to, 10)
	return append(b, `,"format":"epoch_millis"}}}`...)
}

// appendRangeQuery appends a query for the events of a time window,
// fetching the first hits' documents.
func appendRangeQuery(b []byte, from, to int64) []byte {
	b = append(b, `{"size":`...)
	b = strconv.AppendInt(b, hitsPerQuery, 10)
	b = append(b, `,"query":`...)
	b = appendWindow(b, from, to)
	return append(b, '}')
}

// histogramBuckets is how many buckets a date histogram has.
const histogramBuckets = 50

// appendDateHistogram appends a count of a window's events per
// 1/histogramBuckets of it, as a dashboard's traffic chart asks.
func appendDateHistogram(b []byte, d dialect, from, to int64) []byte {
	width := max((to-from)/histogramBuckets, 1)
	b = append(b, `{"size":0,"query":`...)
	b = appendWindow(b, from, to)
	b = append(b, `,"aggs":{"per_interval":{"date_histogram":{"field":"`+fieldTime+`","`...)
	b = append(b, d.intervalKey...)
	b = append(b, `":"`...)
	b = strconv.AppendInt(b, width, 10)
	return append(b, `ms","min_doc_count":0}}}}`...)
}

// appendTermsAgg appends the most requested pages of a window, as a
// dashboard's top-URLs table asks.
func appendTermsAgg(b []byte, from, to int64) []byte {
	b = append(b, `{"size":0,"query":`...)
	b = appendWindow(b, from, to)
	return append(b, `,"aggs":{"top_urls":{"terms":{"field":"`+fieldURL+`","size":10}}}}`...)
}
