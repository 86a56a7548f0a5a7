package searchload

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/engine"
)

func TestDialect(t *testing.T) {
	modern := dialect{intervalKey: "fixed_interval"}
	for _, tc := range []struct {
		name     string
		flavor   engine.SearchFlavor
		version  string
		want     dialect
		wantPath string // "" for an error
	}{
		{"opensearch 2", engine.FlavorOpenSearch, "2.19.1", modern, "/eventdata/_bulk"},
		{"opensearch, any version", engine.FlavorOpenSearch, "", modern, "/eventdata/_bulk"},
		{"elasticsearch 6: typed", engine.FlavorElasticsearch, "6.8.23", dialect{typed: true, intervalKey: "interval"}, "/eventdata/_doc/_bulk"},
		{"elasticsearch 7.1: typeless, interval", engine.FlavorElasticsearch, "7.1.1", dialect{intervalKey: "interval"}, "/eventdata/_bulk"},
		{"elasticsearch 7.17", engine.FlavorElasticsearch, "7.17.0", modern, "/eventdata/_bulk"},
		{"elasticsearch 8 snapshot", engine.FlavorElasticsearch, "8.15.0-SNAPSHOT", modern, "/eventdata/_bulk"},
		{"sad: elasticsearch without a version", engine.FlavorElasticsearch, "", dialect{}, ""},
		{"sad: elasticsearch version not a number", engine.FlavorElasticsearch, "x.y", dialect{}, ""},
		{"sad: unknown flavor", "solr", "9.0", dialect{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := dialectOf(engine.SearchNode{Flavor: tc.flavor, Version: tc.version})
			if tc.wantPath == "" {
				if err == nil {
					t.Fatalf("dialectOf = %+v, want an error", d)
				}
				return
			}
			if err != nil || d != tc.want {
				t.Fatalf("dialectOf = %+v, %v, want %+v", d, err, tc.want)
			}
			if p := bulkPath(d); !strings.HasPrefix(p, tc.wantPath+"?") {
				t.Errorf("bulkPath = %s, want %s?...", p, tc.wantPath)
			}
		})
	}
}

// TestIndexBody checks the index's settings pass through as the node gave
// them and its mapping is typed (_doc) only on Elasticsearch 6.
func TestIndexBody(t *testing.T) {
	settings := map[string]any{"index.translog.durability": "async", "index.translog.sync_interval": "5s", "index.number_of_replicas": 0}
	for _, d := range []dialect{{typed: true, intervalKey: "interval"}, {intervalKey: "fixed_interval"}} {
		b, err := indexBody(d, settings)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Settings map[string]any             `json:"settings"`
			Mappings map[string]json.RawMessage `json:"mappings"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if body.Settings["index.translog.durability"] != "async" || body.Settings["index.translog.sync_interval"] != "5s" || len(body.Settings) != 3 {
			t.Errorf("settings = %v, want %v", body.Settings, settings)
		}
		mapping := body.Mappings
		if _, typed := mapping["_doc"]; typed != d.typed {
			t.Errorf("typed %v: mappings %s", d.typed, b)
		}
		if d.typed {
			if err := json.Unmarshal(mapping["_doc"], &mapping); err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []string{`"geo_point"`, `"ip"`, `"date"`, `"keyword"`, `"integer"`} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("mapping lacks %s: %s", want, b)
			}
		}
		if string(mapping["dynamic"]) != `"strict"` {
			t.Errorf("mapping's dynamic = %s, want strict", mapping["dynamic"])
		}
	}
	if b, err := indexBody(dialect{}, nil); err != nil || !bytes.Contains(b, []byte(`"settings":{}`)) {
		t.Errorf("no settings: %s, %v", b, err)
	}
}

// TestMappingCoversEvents checks every leaf of an event is in the mapping
// with a type, so the strict mapping accepts events.
func TestMappingCoversEvents(t *testing.T) {
	var ev map[string]any
	if err := json.Unmarshal(newEventGen(3).appendEvent(nil, 5), &ev); err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, doc, mapping map[string]any)
	walk = func(prefix string, doc, mapping map[string]any) {
		props, _ := mapping["properties"].(map[string]any)
		for k, v := range doc {
			m, ok := props[k].(map[string]any)
			if !ok {
				t.Errorf("field %s%s is not mapped", prefix, k)
				continue
			}
			if m["type"] == "geo_point" {
				continue
			}
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub, m)
			} else if m["type"] == nil {
				t.Errorf("field %s%s has no type", prefix, k)
			}
		}
	}
	walk("", ev, eventMapping())
}

// TestBulkBody checks a bulk's body is NDJSON: an action line, then the
// event, per document, each line valid JSON, ending in a newline.
func TestBulkBody(t *testing.T) {
	g := newEventGen(9)
	body := appendBulk(nil, g, 100, 3)
	if !bytes.HasSuffix(body, []byte("\n")) {
		t.Fatalf("bulk body does not end in a newline: %q", body[max(0, len(body)-20):])
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6 (action and document for 3 events)", len(lines))
	}
	for i := 0; i < len(lines); i += 2 {
		if lines[i] != `{"index":{}}` {
			t.Errorf("line %d = %s, want the index action", i, lines[i])
		}
		if want := string(newEventGen(9).appendEvent(nil, 100+int64(i/2))); lines[i+1] != want {
			t.Errorf("line %d is not event %d", i+1, 100+i/2)
		}
		if !json.Valid([]byte(lines[i+1])) {
			t.Errorf("line %d is not JSON: %s", i+1, lines[i+1])
		}
	}
	reused := appendBulk(body[:0], g, 100, 3)
	if !bytes.Equal(reused, appendBulk(nil, newEventGen(9), 100, 3)) {
		t.Error("a bulk built in a reused buffer differs")
	}
}

// TestQueries checks each query's body: valid JSON in the shape asked.
func TestQueries(t *testing.T) {
	from, to := eventTime(1000), eventTime(2000)
	for _, tc := range []struct {
		name string
		body []byte
		want []string
	}{
		{"term", appendTermQuery(nil, "DE"), []string{`"size":10`, `{"term":{"nginx.access.geoip.country_iso_code":"DE"}}`}},
		{"range", appendRangeQuery(nil, from, to), []string{`"size":10`, `"gte":1704067210000,"lt":1704067220000,"format":"epoch_millis"`}},
		{"date_histogram modern", appendDateHistogram(nil, dialect{intervalKey: "fixed_interval"}, from, to), []string{`"size":0`, `"fixed_interval":"200ms"`, `"field":"@timestamp"`}},
		{"date_histogram 6.x", appendDateHistogram(nil, dialect{typed: true, intervalKey: "interval"}, from, to), []string{`"interval":"200ms"`}},
		{"terms_agg", appendTermsAgg(nil, from, to), []string{`"size":0`, `"terms":{"field":"nginx.access.url","size":10}`, `"range"`}},
	} {
		if !json.Valid(tc.body) {
			t.Errorf("%s: not JSON: %s", tc.name, tc.body)
		}
		for _, w := range tc.want {
			if !bytes.Contains(tc.body, []byte(w)) {
				t.Errorf("%s: %s lacks %s", tc.name, tc.body, w)
			}
		}
	}
}

func TestFailedItems(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		failed       int
		first        string
		bad          bool
	}{
		{"all indexed", `{"errors":false}`, 0, "", false},
		{"two failed", `{"errors":true,"items":[{"index":{"error":{"type":"mapper_parsing_exception","reason":"x"}}},{"index":{"error":{"type":"es_rejected_execution_exception"}}}]}`,
			2, `{"reason":"x","type":"mapper_parsing_exception"}`, false},
		{"sad: not JSON", `<html>`, 0, "", true},
		{"sad: errors without items", `{"errors":true}`, 0, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failed, first, err := failedItems([]byte(tc.answer))
			if (err != nil) != tc.bad || failed != tc.failed || first != tc.first {
				t.Errorf("failedItems = %d, %q, %v; want %d, %q, error %v", failed, first, err, tc.failed, tc.first, tc.bad)
			}
		})
	}
}

func TestSearchHits(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		hits         int64
		bad          bool
	}{
		{"7.x and OpenSearch", `{"took":3,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":10000,"relation":"gte"},"hits":[]}}`, 10000, false},
		{"6.x", `{"took":3,"timed_out":false,"_shards":{"total":5,"failed":0},"hits":{"total":42,"max_score":1.0,"hits":[]}}`, 42, false},
		{"none", `{"timed_out":false,"_shards":{"failed":0},"hits":{"total":{"value":0}}}`, 0, false},
		{"sad: timed out", `{"timed_out":true,"_shards":{"failed":0},"hits":{"total":1}}`, 0, true},
		{"sad: a shard failed", `{"timed_out":false,"_shards":{"failed":1},"hits":{"total":1}}`, 0, true},
		{"sad: no total", `{"timed_out":false,"_shards":{"failed":0},"hits":{}}`, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := searchHits([]byte(tc.answer))
			if (err != nil) != tc.bad || n != tc.hits {
				t.Errorf("searchHits = %d, %v; want %d, error %v", n, err, tc.hits, tc.bad)
			}
		})
	}
}
