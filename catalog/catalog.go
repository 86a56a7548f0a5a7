// Package catalog lists every engine and workload tierbench ships. It is the
// one place that imports them all, so adding an engine is one line here.
package catalog

import (
	"sort"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph"
	"github.com/tierbench/tierbench/engine/ignite"
	"github.com/tierbench/tierbench/engine/mariadb"
	"github.com/tierbench/tierbench/engine/pebble"
	"github.com/tierbench/tierbench/engine/postgres"
	"github.com/tierbench/tierbench/engine/redis"
	"github.com/tierbench/tierbench/engine/search"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/tool/pgbench"
	"github.com/tierbench/tierbench/tool/radosbench"
	"github.com/tierbench/tierbench/tool/searchbench"
	"github.com/tierbench/tierbench/tool/sysbench"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/analytics"
	"github.com/tierbench/tierbench/workload/bank"
	"github.com/tierbench/tierbench/workload/cachekv"
	"github.com/tierbench/tierbench/workload/crdb"
	"github.com/tierbench/tierbench/workload/messaging"
	"github.com/tierbench/tierbench/workload/objects"
	"github.com/tierbench/tierbench/workload/oltp"
	"github.com/tierbench/tierbench/workload/radosload"
	"github.com/tierbench/tierbench/workload/searchload"
	"github.com/tierbench/tierbench/workload/tpcb"
	"github.com/tierbench/tierbench/workload/tpcc"
	"github.com/tierbench/tierbench/workload/ycsb"
)

// Catalog holds engines and workloads by name.
type Catalog struct {
	engines   map[string]engine.Engine
	workloads map[string]workload.Spec
	tools     map[string]tool.Tool
}

// Default returns the catalog of everything built in.
func Default() *Catalog {
	c := &Catalog{engines: map[string]engine.Engine{}, workloads: map[string]workload.Spec{}, tools: map[string]tool.Tool{}}
	for _, t := range []struct {
		tool      tool.Tool
		preflight func() error
	}{{pgbench.Tool(), pgbench.Preflight}, {sysbench.Tool(), sysbench.Preflight},
		{searchbench.OSB.Tool(), searchbench.OSB.Preflight}, {searchbench.Rally.Tool(), searchbench.Rally.Preflight},
		{radosbench.Tool(), radosbench.Preflight}} {
		t.tool.Preflight = t.preflight
		c.tools[t.tool.Name] = t.tool
	}
	for _, e := range []engine.Engine{pebble.Engine{}, postgres.Engine{}, mariadb.Engine{}, redis.Engine{}, ignite.Engine{}, search.OpenSearch(), search.Elasticsearch(), ceph.Engine{}} {
		c.engines[e.Spec().Name] = e
	}
	for _, w := range append(append(ycsb.Specs(), tpcb.Spec(), tpcc.Spec(), analytics.Spec(), messaging.Spec(), bank.Spec(), crdb.KVSpec(), crdb.BankSpec(), crdb.MovrSpec()), oltp.Specs()...) {
		c.workloads[w.Name] = w
	}
	for _, w := range cachekv.Specs() {
		c.workloads[w.Name] = w
	}
	for _, w := range searchload.Specs() {
		c.workloads[w.Name] = w
	}
	c.workloads[objects.Name] = objects.Spec()
	c.workloads[radosload.Name] = radosload.Spec()
	return c
}

// Engine returns the engine implementation by name.
func (c *Catalog) Engine(name string) (engine.Engine, bool) {
	e, ok := c.engines[name]
	return e, ok
}

// EngineSpec returns an engine's Spec, with its client bound.
func (c *Catalog) EngineSpec(name string) (engine.Spec, bool) {
	e, ok := c.engines[name]
	if !ok {
		return engine.Spec{}, false
	}
	s := e.Spec()
	if b, ok := clientBounds[name]; ok && s.MaxClients == 0 {
		s.MaxClients, s.MaxClientsWhy = b.max, b.why
	}
	return s, true
}

// clientBound is the most clients a study may run on one engine, and why.
type clientBound struct {
	max int
	why string
}

// driverWhy is what bounds clients of tierbench's own driver on any engine:
// each client is a goroutine with its own HDR histograms per operation type
// (about 0.2 MB each, twice over for the swap each second), so 1000 clients
// of ycsb-a took 2 GB and minutes of merging on a 2-core machine.
const driverWhy = "each client is a goroutine of tierbench with its own HDR histograms, about 1 MB per client: beyond this, memory grows by gigabytes and the figures measure Go's scheduler, not the storage"

// serverWhy is what bounds clients of the SQL servers tierbench starts.
const serverWhy = "tierbench starts the server with 500 connections, a fixed number because they size its shared memory, and they must also hold the load phase's connections and tierbench's own"

// clientBounds decides, in one place, how many clients each engine takes.
// The counts are whole-machine limits, not tuning: they refuse a study that
// cannot run (a server out of connections) or would measure the driver
// instead of the storage.
var clientBounds = map[string]clientBound{
	"pebble":   {1024, "pebble runs inside tierbench, and " + driverWhy},
	"redis":    {1024, driverWhy + "; redis-server itself would take 10000"},
	"postgres": {480, serverWhy},
	"mariadb":  {480, serverWhy},
	"ignite":   {512, "clients are threads of the one client JVM, each with its own HDR histograms in the client's heap, 512 MiB by default (option heap)"},
	"ceph":     {512, "the S3 gateway serves requests on 512 threads (rgw_thread_pool_size): more clients queue inside it, and " + driverWhy},
}

// EngineNames lists engines, sorted.
func (c *Catalog) EngineNames() []string { return sortedKeys(c.engines) }

// Workload returns a workload's Spec.
func (c *Catalog) Workload(name string) (workload.Spec, bool) {
	w, ok := c.workloads[name]
	return w, ok
}

// Tool returns a standard tool usable as a driver.
func (c *Catalog) Tool(name string) (tool.Tool, bool) {
	t, ok := c.tools[name]
	return t, ok
}

// ToolNames lists the standard tools, sorted.
func (c *Catalog) ToolNames() []string { return sortedKeys(c.tools) }

// WorkloadNames lists workloads, sorted.
func (c *Catalog) WorkloadNames() []string { return sortedKeys(c.workloads) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
