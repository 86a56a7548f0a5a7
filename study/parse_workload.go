package study

// The keys of what each run does: the workload and its parameters, the
// data model it needs of the engine, and the client counts.

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/workload"
)

// workload checks the workload's name and parameters: each against its
// declared kind and range, with its line; then, when all passed, what ties
// them together, through the workload's own Build, reported on the
// workload line, so one mistake is not reported twice.
func (p *parser) workload(s *Study) {
	known := sortedCopy(p.cat.WorkloadNames())
	fix := "add workload: {name: <workload>} with one of: " + joinNames(known)
	e, ok := p.need(p.top, "workload", p.line, fix)
	if !ok {
		return
	}
	if e.v.Kind == yaml.ScalarNode {
		p.addf(e.v.Line, "workload must be a mapping with a name and optional overrides, not a plain value; write workload: {name: %s}", e.v.Value)
		return
	}
	ents, ok := p.entries(e.v, "workload", "write workload: {name: <workload>, <param>: <value>, ...}")
	if !ok {
		return
	}
	var nameEnt *entry
	for i := range ents {
		if ents[i].key == "name" {
			nameEnt = &ents[i]
		}
	}
	if nameEnt == nil {
		p.addf(e.k.Line, "workload has no name; add name: <workload>, one of: %s", joinNames(known))
		return
	}
	name, ok := p.scalar(*nameEnt, "write name: <workload>, one of: "+joinNames(known))
	if !ok {
		return
	}
	spec, wOK := p.cat.Workload(name)
	if !wOK {
		p.unknown(nameEnt.v.Line, fmt.Sprintf("unknown workload %q", name), name, known, "known workloads", "use a known workload")
	}
	s.Workload = Workload{Name: name, Params: map[string]string{}, Metric: spec.Metric}
	good := wOK
	for _, pe := range ents {
		if pe.key == "name" || !wOK {
			continue
		}
		st, found := spec.Param(pe.key)
		if !found {
			p.unknown(pe.k.Line, fmt.Sprintf("unknown parameter %q for workload %s", pe.key, name), pe.key,
				spec.ParamNames(), "parameters of "+name, "remove it")
			good = false
			continue
		}
		v, ok := p.scalar(pe, fmt.Sprintf("write %s: <value> or remove it", pe.key))
		if ok {
			_, ok = p.settingValue("workload "+name+" parameter", st, v, pe.v.Line)
		}
		if !ok {
			good = false
			continue
		}
		// As written: a study's parameters are recorded as the user gave
		// them, and the workload reads them through the same Build.
		s.Workload.Params[pe.key] = v
	}
	if good {
		w, err := spec.Build(s.Workload.Params)
		if err != nil {
			p.addf(e.k.Line, "%v", err)
			return
		}
		p.built = w
		if sz, ok := w.(workload.Sizer); ok {
			s.Workload.EstimatedBytes = sz.EstimatedBytes()
		}
	}
}

// model refuses a workload whose data model the engine does not serve
// (tpcb on pebble): every run of the pair could only fail.
func (p *parser) model(s *Study) {
	w, ok := p.cat.Workload(s.Workload.Name)
	if p.spec == nil || !ok || w.Model == "" || len(p.spec.Models) == 0 || p.spec.Serves(w.Model) {
		return
	}
	var fits []string
	for _, name := range sortedCopy(p.cat.EngineNames()) {
		if e, ok := p.cat.EngineSpec(name); ok && e.Serves(w.Model) {
			fits = append(fits, name)
		}
	}
	served := make([]string, len(p.spec.Models))
	for i, m := range p.spec.Models {
		served[i] = string(m)
	}
	p.addf(p.top["workload"].k.Line, "workload %s needs the %s data model, which engine %s does not serve (it serves %s): use one of the engines %s, or a workload for %s (see tierbench workloads)",
		w.Name, w.Model, p.spec.Name, strings.Join(served, ", "), joinNames(fits), p.spec.Name)
}

func (p *parser) clients(s *Study) {
	fix := "write clients: [1, 4, 16] or a single number such as clients: 8"
	e, ok := p.need(p.top, "clients", p.line, "add clients: [1, 4, 16], the client counts to run")
	if !ok {
		return
	}
	items, ok := p.list(e, "clients", fix)
	if !ok {
		return
	}
	once := p.listedOnce("clients")
	for _, n := range items {
		v, ok := p.item(n, "clients", fix)
		if !ok {
			continue
		}
		norm, ok := p.settingValue("", clientCount, v, n.Line)
		if !ok {
			continue
		}
		c, _ := strconv.Atoi(norm)
		if lim, ok := p.built.(workload.ClientLimiter); ok {
			if most, why := lim.MaxClients(); c > most {
				p.addf(n.Line, "clients %d is more than workload %s takes (at most %d): %s", c, s.Workload.Name, most, why)
				continue
			}
		}
		if p.spec != nil && p.spec.MaxClients > 0 && c > p.spec.MaxClients {
			p.addf(n.Line, "clients %d is more than engine %s takes (at most %d): %s; use at most %d clients",
				c, p.spec.Name, p.spec.MaxClients, p.spec.MaxClientsWhy, p.spec.MaxClients)
			continue
		}
		if once.again(norm, norm, n.Line) {
			continue
		}
		s.Clients = append(s.Clients, c)
	}
}

// clientCount is one count of clients.
var clientCount = setting.Setting{Name: "clients", Kind: setting.Int, Min: "1", Default: "8"}
