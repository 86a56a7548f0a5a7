package engine

import (
	"net/http"
)

// ModelSearch is a search engine's HTTP API (OpenSearch, Elasticsearch):
// bulk indexing and queries over JSON documents, reached through Search on
// the DB.
const ModelSearch Model = "search"

// SearchFlavor names the API dialect a search node speaks.
type SearchFlavor string

// The search flavors.
const (
	FlavorOpenSearch    SearchFlavor = "opensearch"
	FlavorElasticsearch SearchFlavor = "elasticsearch"
)

// SearchNode is how a search workload or a standard tool (opensearch-
// benchmark, esrally) reaches a running node.
type SearchNode struct {
	// URL is the node's HTTP base URL, on 127.0.0.1: "http://127.0.0.1:9201".
	URL string
	// Client reaches URL; it carries the node's credentials when it has
	// any, so none ever reaches a command line.
	Client *http.Client
	Flavor SearchFlavor
	// Version is the node's version number ("2.19.1", "6.8.23"): request
	// shapes differ between majors (mapping types before 7).
	Version string
	// Index settings the run's durability and options ask for, which a
	// workload applies to every index it creates: the translog durability
	// ("request" or "async"), its sync_interval when async ("5s"), and the
	// options' shards, replicas and refresh_interval.
	IndexSettings map[string]any
}

// Search is the search data model: the node's endpoint. A search engine's
// DB and each of its sessions implement it (a session is a client's
// handle on the same node), so a workload finds it in Load and NewClient.
type Search interface {
	SearchNode() SearchNode
}

// NeedSearch returns a DB or Session as Search, or an ErrNoModel.
func NeedSearch(v any) (Search, error) {
	s, ok := v.(Search)
	if !ok {
		return nil, noModel("the engine is not a search engine; this workload needs one (opensearch, elasticsearch)")
	}
	return s, nil
}
