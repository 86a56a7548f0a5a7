// Package catalog lists every engine and workload tierbench ships. It is the
// one place that imports them all, so adding an engine is one line here.
package catalog

import (
	"maps"
	"slices"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ceph"
	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
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

// Ceph is the engine rbd tiers' clusters are made of, handed to
// engine/ceph/rbdtier from here, the one list of engines.
func (c *Catalog) Ceph() rbdtier.Ceph { return ceph.Engine{} }

// Engine returns the engine implementation by name.
func (c *Catalog) Engine(name string) (engine.Engine, bool) {
	e, ok := c.engines[name]
	return e, ok
}

// EngineSpec returns an engine's Spec.
func (c *Catalog) EngineSpec(name string) (engine.Spec, bool) {
	e, ok := c.engines[name]
	if !ok {
		return engine.Spec{}, false
	}
	return e.Spec(), true
}

// EngineNames lists engines, sorted.
func (c *Catalog) EngineNames() []string { return slices.Sorted(maps.Keys(c.engines)) }

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
func (c *Catalog) ToolNames() []string { return slices.Sorted(maps.Keys(c.tools)) }

// WorkloadNames lists workloads, sorted.
func (c *Catalog) WorkloadNames() []string { return slices.Sorted(maps.Keys(c.workloads)) }
