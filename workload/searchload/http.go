package searchload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/tierbench/tierbench/engine"
)

// node sends requests to a search node and reads its answers into a
// buffer the caller reuses.
type node struct {
	url  string
	hc   *http.Client
	d    dialect
	bulk string // bulkPath(d)
}

func newNode(s engine.Search) (node, error) {
	n := s.SearchNode()
	d, err := dialectOf(n)
	if err != nil {
		return node{}, err
	}
	hc := n.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	return node{url: n.URL, hc: hc, d: d, bulk: bulkPath(d)}, nil
}

// StatusError is an answer with an HTTP status other than 2xx: the node
// received the request and refused it, or failed.
type StatusError struct {
	Method, Path string
	Status       int
	Body         string // its start
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Body)
}

// maxErrorBody is how much of an error's body an error quotes.
const maxErrorBody = 300

// Content types of request bodies.
const (
	jsonBody   = "application/json"
	ndjsonBody = "application/x-ndjson" // a bulk's lines
)

// do sends body (nil for none) of type ctype and reads the answer into
// resp, reset first. An answer that is not 2xx is a *StatusError.
func (n node) do(ctx context.Context, method, path, ctype string, body []byte, resp *bytes.Buffer) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, n.url+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := n.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	resp.Reset()
	if _, err := resp.ReadFrom(res.Body); err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		b := resp.Bytes()
		return &StatusError{Method: method, Path: path, Status: res.StatusCode, Body: string(b[:min(len(b), maxErrorBody)])}
	}
	return nil
}

// createIndex drops the index if a former run left it and creates it with
// settings and the events' mapping.
func (n node) createIndex(ctx context.Context, settings map[string]any) error {
	var resp bytes.Buffer
	err := n.do(ctx, http.MethodDelete, "/"+IndexName, "", nil, &resp)
	var se *StatusError
	if err != nil && !(errors.As(err, &se) && se.Status == http.StatusNotFound) {
		return err
	}
	body, err := indexBody(n.d, settings)
	if err != nil {
		return err
	}
	return n.do(ctx, http.MethodPut, "/"+IndexName, jsonBody, body, &resp)
}

// refresh makes every document indexed so far visible to searches.
func (n node) refresh(ctx context.Context) error {
	var resp bytes.Buffer
	return n.do(ctx, http.MethodPost, "/"+IndexName+"/_refresh", "", nil, &resp)
}

// getJSON reads the answer of GET path into v.
func (n node) getJSON(ctx context.Context, path string, v any) error {
	var resp bytes.Buffer
	if err := n.do(ctx, http.MethodGet, path, "", nil, &resp); err != nil {
		return err
	}
	if err := json.Unmarshal(resp.Bytes(), v); err != nil {
		return fmt.Errorf("GET %s: %w in %.200q", path, err, resp.String())
	}
	return nil
}

// count returns the number of documents searches see.
func (n node) count(ctx context.Context) (int64, error) {
	var c struct {
		Count *int64 `json:"count"`
	}
	path := "/" + IndexName + "/_count"
	if err := n.getJSON(ctx, path, &c); err != nil {
		return 0, err
	}
	if c.Count == nil {
		return 0, fmt.Errorf("GET %s: no count in the answer", path)
	}
	return *c.Count, nil
}

// storeBytes returns the index's size on disk, primaries and replicas.
func (n node) storeBytes(ctx context.Context) (int64, error) {
	var s struct {
		All struct {
			Total struct {
				Store struct {
					Bytes int64 `json:"size_in_bytes"`
				} `json:"store"`
			} `json:"total"`
		} `json:"_all"`
	}
	err := n.getJSON(ctx, "/"+IndexName+"/_stats/store", &s)
	return s.All.Total.Store.Bytes, err
}

// bulkAnswer is a bulk's answer as bulkPath filters it: the failed items
// only, each under its action's name.
type bulkAnswer struct {
	Errors bool `json:"errors"`
	Items  []map[string]struct {
		Error any `json:"error"`
	} `json:"items"`
}

// failedItems reads a bulk's answer: how many of its documents failed and
// the first failure, as the node put it.
func failedItems(answer []byte) (failed int, first string, err error) {
	var a bulkAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		return 0, "", fmt.Errorf("bulk answer %.200q: %w", answer, err)
	}
	if !a.Errors {
		return 0, "", nil
	}
	for _, it := range a.Items {
		for _, r := range it {
			if r.Error == nil {
				continue
			}
			if failed++; first == "" {
				b, _ := json.Marshal(r.Error)
				first = string(b[:min(len(b), maxErrorBody)])
			}
		}
	}
	if failed == 0 {
		return 0, "", fmt.Errorf("bulk answer says errors but names no failed item: %.200q", answer)
	}
	return failed, first, nil
}

// searchAnswer is what a query's answer is checked for.
type searchAnswer struct {
	TimedOut bool `json:"timed_out"`
	Shards   struct {
		Failed int `json:"failed"`
	} `json:"_shards"`
	Hits struct {
		// Total is a number before Elasticsearch 7, {"value": n, ...} since.
		Total json.RawMessage `json:"total"`
	} `json:"hits"`
}

// searchHits reads a query's answer: the documents that matched. A query
// that timed out or failed on a shard is an error: its answer is partial.
func searchHits(answer []byte) (int64, error) {
	var a searchAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		return 0, fmt.Errorf("search answer %.200q: %w", answer, err)
	}
	if a.TimedOut || a.Shards.Failed > 0 {
		return 0, fmt.Errorf("search answer is partial (timed_out %v, %d shards failed): %.300q", a.TimedOut, a.Shards.Failed, answer)
	}
	t := bytes.TrimSpace(a.Hits.Total)
	if len(t) > 0 && t[0] == '{' {
		var v struct {
			Value int64 `json:"value"`
		}
		if err := json.Unmarshal(t, &v); err != nil {
			return 0, fmt.Errorf("search answer's hits.total %q: %w", t, err)
		}
		return v.Value, nil
	}
	n, err := strconv.ParseInt(string(t), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("search answer's hits.total %q: want a number", t)
	}
	return n, nil
}
