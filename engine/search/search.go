// Package search is tierbench's search engine adapter, declared twice:
// engine opensearch and engine elasticsearch. Each run starts one node on
// 127.0.0.1 (HTTP and transport on free loopback ports, discovery.type
// single-node) with its two components on their tiers:
//
//   - data (path.data): the indices' Lucene segments and their translog,
//     which index.translog.durability syncs.
//   - logs (path.logs): the node's own logs, its GC log, a fatal error's
//     hs_err file, and its console output (console.log).
//
// What is started:
//
//   - opensearch: OpenSearch 2.19 as an embedded node, codelibs'
//     OpenSearchRunner and its jars from Maven Central, through a small main
//     of ours (java/opensearch: io.tierbench.opensearch.Main) that says why a
//     node did not start. The JVM gets the options OpenSearch's own
//     distribution gives it (jvm.options and its launcher's system options).
//   - elasticsearch: the Elasticsearch OSS 6.8.23 distribution, unpacked by
//     the same Maven module, started with its bin/elasticsearch (it runs on
//     JDK 17: its jvm.options pick G1 from JDK 14 on).
//   - with option home, a distribution of your own of the engine's kind
//     (OpenSearch 1.x-2.x, Elasticsearch 6.x-8.x), started with its
//     bin/opensearch or bin/elasticsearch in the same way. Its security
//     plugin, if it has one, is switched off (see below).
//
// A distribution's config folder is copied for each run into a private
// folder, with the relative paths of its jvm.options (logs/gc.log,
// logs/hs_err_pid%p.log, the heap dump folder) turned into the run's logs
// and data folders, since its script runs the JVM in the distribution's
// own folder; the heap is set through <PREFIX>_JAVA_OPTS, the settings
// with -E.
//
// Who can reach the node: it runs as the OS user tierbench (made by
// `make setup`; Elasticsearch refuses root), its folders are 0700 and
// owned by that user, and it listens on 127.0.0.1 only. It has no
// authentication: OpenSearch without its security plugin and Elasticsearch
// OSS have none to switch on (the security plugin needs TLS certificates
// and a security index, which this adapter does not set up), so the per-run
// secret other server engines use has no place to go. Instead the kernel
// closes both ports to every local user but root (tierbench and its
// drivers) and the node's own: an nftables table per run
// (server.LockPorts), recorded in the ledger so `tierbench cleanup` removes
// it after a kill.
//
// A node tierbench did not start is reached with a target
// (http://host:port, no user: such a node has no authentication either);
// the run's durability and options then become the index settings the
// workload creates its index with, as on a node of tierbench's own. That
// is how `tierbench drive` reaches engine opensearch on a Kubernetes
// cluster (container.go: the node in OpenSearch's official image, with
// the same settings as here; only the run's NetworkPolicy keeps other
// pods off it).
package search

import (
	"fmt"
	"strconv"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/host/proc"
	"github.com/tierbench/tierbench/setting"
)

// Components.
const (
	Data = "data"
	Logs = "logs"
)

// Option names.
const (
	optHeap     = "heap"
	optShards   = "shards"
	optReplicas = "replicas"
	optRefresh  = "refresh_interval"
	optHome     = "home"
)

// asyncSyncInterval is index.translog.sync_interval under durability async.
const asyncSyncInterval = "5s"

// Timeouts.
const (
	// startTimeout bounds a node's start, to the first green or yellow
	// cluster health: 25-60 s on 2 busy cores.
	startTimeout = 4 * time.Minute
	// stopGrace is how long a node may take to stop on SIGTERM (closing
	// its shards flushes them) before it is killed.
	stopGrace = 60 * time.Second
)

// Engine opens search nodes of one flavor.
type Engine struct {
	flavor engine.SearchFlavor
}

var (
	_ engine.Engine      = Engine{}
	_ engine.Preflighter = Engine{}
)

// OpenSearch is engine opensearch.
func OpenSearch() Engine { return Engine{flavor: engine.FlavorOpenSearch} }

// Elasticsearch is engine elasticsearch.
func Elasticsearch() Engine { return Engine{flavor: engine.FlavorElasticsearch} }

// Spec declares the engine's components, durability modes and options.
func (e Engine) Spec() engine.Spec {
	s := engine.Spec{
		Name:   string(e.flavor),
		Models: []engine.Model{engine.ModelSearch},
		Components: []engine.Component{
			{Name: Data, Role: engine.RoleData, Doc: "path.data: the indices' Lucene segments and their translog"},
			{Name: Logs, Role: engine.RoleLogs, Doc: "path.logs: the node's logs, GC log and console output"},
		},
		Modes: []engine.Mode{
			{Durability: engine.Sync, Doc: "index.translog.durability request: each bulk's shard operations are in the translog and fsynced before the bulk is acknowledged (concurrent bulks share an fsync). Nothing acknowledged is lost on a node crash, an OS crash or power loss.", Survives: []string{engine.CrashProcess, engine.CrashPower}},
			{Durability: engine.Async, Doc: "index.translog.durability async, sync_interval " + asyncSyncInterval + ": a bulk is acknowledged once its operations are in the translog (buffered in the JVM, written out as the buffer fills), unsynced; the translog is fsynced every " + asyncSyncInterval + " and at each flush. A node crash loses the operations still buffered; an OS crash or power loss loses up to the last " + asyncSyncInterval + " of acknowledged documents."},
		},
		Options: []setting.Setting{
			{Name: optHeap, Kind: setting.Size, Memory: true, Default: "1GiB", Min: "256MiB", Doc: "JVM heap (-Xms and -Xmx; below 256MiB a node only collects garbage, or does not start); the page cache holds the segments beside it"},
			{Name: optShards, Kind: setting.Int, Default: "1", Min: "1", Max: "1024", Doc: "index.number_of_shards of the workload's index"},
			{Name: optReplicas, Kind: setting.Int, Default: "0", Min: "0", Max: "8", Doc: "index.number_of_replicas; on one node a replica is never assigned (the index stays yellow)"},
			{Name: optRefresh, Kind: setting.Duration, Default: "1s", Min: "1ms", Values: []string{refreshNever}, Doc: "index.refresh_interval: how often new documents become searchable (-1: never)"},
			{Name: optHome, Kind: setting.String, Default: "", Doc: "a distribution folder of your own to start instead of the bundled node (its bin/" + string(e.flavor) + " is run as OS user tierbench; its security plugin is switched off)"},
		},
		MaxClients: 128,
		MemoryNeed: func(o engine.Options) (int64, []string) {
			heap := o.Size(optHeap)
			return heap + directMemory(heap) + jvmOwn, []string{optHeap, "direct memory (" + optHeap + "/2)", humanize.IBytes(jvmOwn) + " of the JVM's own (metaspace, code, thread stacks, the collector's tables)"}
		},
	}
	s.TargetSchemes = []string{"http"}
	switch e.flavor {
	case engine.FlavorOpenSearch:
		s.Image = Image
		s.Doc = "OpenSearch 2.19 single node (embedded runner from Maven Central, or your distribution with option home) on 127.0.0.1 as OS user tierbench, no authentication of its own, so the kernel closes its ports to other local users (nftables); workloads ingest, search, ingest-search"
		s.MaxClientsWhy = "indexing pressure caps the bytes of bulks in flight at 10% of the heap: 128 clients with bulks of 1,000 event documents (~0.7 MB) fill a 1GiB heap's share; more are rejected (429)"
	default:
		s.Doc = "Elasticsearch OSS 6.8.23 single node (from Maven Central, or your distribution with option home) on 127.0.0.1 as OS user tierbench, no authentication of its own, so the kernel closes its ports to other local users (nftables); workloads ingest, search, ingest-search"
		s.MaxClientsWhy = "Elasticsearch 6.8 queues at most 200 shard-level bulk requests (thread_pool.write.queue_size) beyond the ones its write threads run; more are rejected (429)"
	}
	return s
}

// settings are a run's options and durability, checked.
type settings struct {
	heap       int64
	shards     int
	replicas   int
	refresh    string
	home       string
	durability string // index.translog.durability: request | async
}

// refreshNever is index.refresh_interval's word for never.
const refreshNever = "-1"

func (e Engine) parseSettings(cfg engine.Config) (settings, error) {
	var s settings
	switch cfg.Durability {
	case engine.Sync:
		s.durability = "request"
	case engine.Async:
		s.durability = "async"
	default:
		return s, fmt.Errorf("durability %q is not supported (use sync or async)", cfg.Durability)
	}
	o := cfg.Options
	s.heap, s.shards, s.replicas = o.Size(optHeap), o.Int(optShards), o.Int(optReplicas)
	s.refresh = o.Text(optRefresh)
	if d := o.Duration(optRefresh); s.refresh != refreshNever {
		// In the units Elasticsearch reads (Go's 1m0s is not one).
		s.refresh = fmt.Sprintf("%dms", d.Milliseconds())
		if d%time.Second == 0 {
			s.refresh = fmt.Sprintf("%ds", d/time.Second)
		}
	}
	s.home = o.String(optHome)
	return s, nil
}

// indexSettings are the settings a workload gives the indices it creates
// (engine.SearchNode.IndexSettings); a new map each time, the caller's
// to change.
func (s settings) indexSettings() map[string]any {
	m := map[string]any{
		"index.number_of_shards":    s.shards,
		"index.number_of_replicas":  s.replicas,
		"index.refresh_interval":    s.refresh,
		"index.translog.durability": s.durability,
	}
	if s.durability == "async" {
		m["index.translog.sync_interval"] = asyncSyncInterval
	}
	return m
}

// javaOpts are the JVM's own flags: its heap, in MiB; its direct memory
// held to directMemory; and no /tmp/hsperfdata_USER folder, which the JVM
// leaves behind (empty) when it exits (tierbench reads no jstat).
func (s settings) javaOpts() []string {
	mib := strconv.FormatInt(s.heap>>20, 10) + "m"
	return []string{"-Xms" + mib, "-Xmx" + mib, "-XX:MaxDirectMemorySize=" + strconv.FormatInt(directMemory(s.heap), 10), noPerfData}
}

// directMemory is the most the node's NIO and Netty buffers may hold
// outside the heap: half of it, as OpenSearch's and Elasticsearch's
// launchers set when their options do not (JvmErgonomics). The runner is
// started with plain java, which would otherwise allow as much as the
// heap again, beyond any memory limit sized for the heap.
func directMemory(heap int64) int64 { return heap / 2 }

// jvmOwn is what a node's JVM holds beside its heap and direct memory
// (metaspace, compiled code, thread stacks, G1's tables). Under a 1280
// MiB limit, a 1 GiB heap's node ingesting with 16 clients held 1.24 GiB
// of anonymous memory, its pre-touched heap and 218 MiB beside it, and
// stalled at the limit (1 op/s, p50 19 s), where a pod's is OOM-killed.
const jvmOwn = 256 << 20

// noPerfData keeps a JVM from making /tmp/hsperfdata_USER.
const noPerfData = "-XX:-UsePerfData"

// Preflight reports whether java, the OS user the node runs as, nft and
// the bundled node (make setup) are where Open looks for them, so a study
// is refused before it creates anything.
func (e Engine) Preflight() error { return e.PreflightOptions(e.Spec().MustResolveOptions(nil)) }

// ServerUser is the OS user the node runs as (none when tierbench is not
// root), for study preflight's check that it can reach the tiers' folders.
func (Engine) ServerUser() (label, user string) {
	u, _ := runAs()
	return "the search node", u
}

// PreflightOptions is Preflight for a run's options: with option home, the
// named distribution instead of the bundled node.
func (e Engine) PreflightOptions(options engine.Options) error {
	if _, err := findJava(); err != nil {
		return err
	}
	if _, err := runAs(); err != nil {
		return err
	}
	// nft closes the node's ports to other local users (server.LockPorts).
	if _, err := proc.Find("nftables", "nft", "/usr/sbin/nft"); err != nil {
		return err
	}
	if home := options.String(optHome); home != "" {
		_, err := inspect(home, e.flavor)
		return err
	}
	_, err := e.bundled()
	return err
}
