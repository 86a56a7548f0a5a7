// Package catalog lists every engine and workload tierbench ships. It is the
// one place that imports them all, so adding an engine is one line here.
package catalog

import (
	"sort"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/engine/ignite"
	"github.com/tierbench/tierbench/engine/mariadb"
	"github.com/tierbench/tierbench/engine/pebble"
	"github.com/tierbench/tierbench/engine/postgres"
	"github.com/tierbench/tierbench/engine/redis"
	"github.com/tierbench/tierbench/tool"
	"github.com/tierbench/tierbench/tool/pgbench"
	"github.com/tierbench/tierbench/tool/sysbench"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/bank"
	"github.com/tierbench/tierbench/workload/cachekv"
	"github.com/tierbench/tierbench/workload/oltp"
	"github.com/tierbench/tierbench/workload/tpcb"
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
	for _, t := range []tool.Tool{pgbench.Tool(), sysbench.Tool()} {
		c.tools[t.Name] = t
	}
	for _, e := range []engine.Engine{pebble.Engine{}, postgres.Engine{}, mariadb.Engine{}, redis.Engine{}, ignite.Engine{}} {
		c.engines[e.Spec().Name] = e
	}
	for _, w := range append(append(ycsb.Specs(), tpcb.Spec(), bank.Spec()), oltp.Specs()...) {
		c.workloads[w.Name] = w
	}
	for _, w := range cachekv.Specs() {
		c.workloads[w.Name] = w
	}
	return c
}

// Open returns the engine implementation by name.
func (c *Catalog) Open(name string) (engine.Engine, bool) {
	e, ok := c.engines[name]
	return e, ok
}

// Engine returns an engine's Spec.
func (c *Catalog) Engine(name string) (engine.Spec, bool) {
	e, ok := c.engines[name]
	if !ok {
		return engine.Spec{}, false
	}
	return e.Spec(), true
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
