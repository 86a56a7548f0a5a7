package study

import (
	"fmt"
	"slices"

	"github.com/dustin/go-humanize"

	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/tier"
)

// An rbd tier: a Ceph block image in a cluster started for the study on
// other tiers (see package engine/ceph/rbdtier).

// clusterRef is one component of an rbd tier's cluster placed on a tier.
type clusterRef struct {
	rbdTier, component, tier string
	line                     int
}

const rbdExample = "rbd: {size: 4GiB, fs: ext4, cluster: {block: ssd, db: pmem, wal: pmem}, options: {db_size: 1GiB}}"

// rbdTier reads rbd: {size, fs, cluster, options}: size is required,
// cluster must place block (db and wal default as engine/ceph has them),
// options are engine/ceph's, one value each.
func (p *parser) rbdTier(name string, e entry, _ map[string]entry) (Tier, bool) {
	m, ok := p.subfields(name, e, []string{"size", "fs", "cluster", "options"}, rbdExample)
	if !ok {
		return Tier{}, false
	}
	spec := rbdtier.Spec{FS: "ext4", Cluster: map[string]string{}, Options: map[string]string{}}
	size, good := p.size(name, m, e, rbdExample, false)
	spec.Size = size
	good = p.filesystem(name, m, &spec.FS) && good
	good = p.rbdCluster(name, e, m, spec.Cluster) && good
	if o, has := m["options"]; has {
		good = p.rbdOptions(name, o, spec.Options) && good
	}
	if !good {
		return Tier{}, false
	}
	if err := rbdtier.Check(p.cat.Ceph(), spec); err != nil {
		p.addf(e.k.Line, "tier %q: %v", name, err)
		return Tier{}, false
	}
	return Tier{Spec: tier.Spec{Name: name, Kind: rbdtier.Tier{Spec: spec, Ceph: p.cat.Ceph()}}}, true
}

// rbdCluster reads cluster: {block: <tier>, db: <tier>, wal: <tier>} into
// into, each component that is left out on the tier of the one it
// defaults to; the tiers are checked by rbdClusters.
func (p *parser) rbdCluster(name string, parent entry, m map[string]entry, into map[string]string) bool {
	spec := p.cat.Ceph().Spec()
	fix := "write cluster: {block: <tier>, db: <tier>, wal: <tier>} (db and wal may be left out)"
	e, has := m["cluster"]
	if !has {
		p.addf(parent.k.Line, "tier %q rbd has no cluster: the tiers its Ceph cluster lives on; %s", name, fix)
		return false
	}
	ents, ok := p.entries(e.v, fmt.Sprintf("tier %q cluster", name), fix)
	if !ok {
		return false
	}
	good := true
	for _, ce := range ents {
		if !spec.HasComponent(ce.key) {
			p.unknown(ce.k.Line, fmt.Sprintf("unknown component %q in tier %q cluster", ce.key, name), ce.key,
				spec.ComponentNames(), "components of Ceph's cluster", "remove it")
			good = false
			continue
		}
		v, ok := p.scalar(ce, fmt.Sprintf("write %s: <tier>", ce.key))
		if !ok {
			good = false
			continue
		}
		into[ce.key] = v
		p.clusterRefs = append(p.clusterRefs, clusterRef{rbdTier: name, component: ce.key, tier: v, line: ce.v.Line})
	}
	if !good {
		return false
	}
	for _, c := range spec.Components {
		if _, ok := into[c.Name]; ok {
			continue
		}
		if c.DefaultsTo == "" {
			p.addf(e.k.Line, "tier %q cluster does not place %s; add %s: <tier>", name, c.Name, c.Name)
			return false
		}
		into[c.Name] = into[c.DefaultsTo]
	}
	return true
}

// rbdOptions reads options: {<option>: <value>} into into, in normal
// form. A list is refused: the cluster is started once per study.
func (p *parser) rbdOptions(name string, e entry, into map[string]string) bool {
	spec := p.cat.Ceph().Spec()
	ents, ok := p.entries(e.v, fmt.Sprintf("tier %q options", name), "write options: {<option>: <value>, ...} (engine ceph's options, see tierbench engines)")
	if !ok {
		return false
	}
	// Ceph's own options: the tier's cluster serves a device, not a run,
	// so it takes no memory limit (the run setting memory).
	names := spec.OptionNames()
	good := true
	for _, oe := range ents {
		opt, found := spec.Option(oe.key)
		if !found {
			p.unknown(oe.k.Line, fmt.Sprintf("unknown option %q in tier %q options", oe.key, name), oe.key,
				names, "options of engine ceph", "remove it")
			good = false
			continue
		}
		v, ok := p.scalar(oe, fmt.Sprintf("write %s: <value>; an rbd tier's cluster is started once per study, so its options are not swept", oe.key))
		if !ok {
			good = false
			continue
		}
		norm, ok := p.settingValue("option", opt, v, oe.v.Line)
		if !ok {
			good = false
			continue
		}
		into[oe.key] = norm
	}
	return good
}

// rbdClusters checks the tiers rbd tiers place their clusters on, once
// every tier is declared: each must be declared, none an rbd tier (a
// cluster on another cluster's image, or its own), and a tmpfs or loop
// tier must hold the device files its cluster makes there.
func (p *parser) rbdClusters(s *Study, declared []string) {
	defer p.rbdDeviceSpace(s)
	for _, r := range p.clusterRefs {
		if !slices.Contains(declared, r.tier) {
			p.unknown(r.line, fmt.Sprintf("tier %q puts its cluster's %s on unknown tier %q", r.rbdTier, r.component, r.tier), r.tier,
				declared, "declared tiers", "declare it under tiers or use a declared tier")
			continue
		}
		if t, ok := s.Tier(r.tier); ok && t.Served() {
			p.addf(r.line, "tier %q puts its cluster's %s on rbd tier %q: a Ceph cluster cannot live on a Ceph image; use a %s tier", r.rbdTier, r.component, r.tier,
				kindsWith(func(a tier.Abilities) bool { return !a.Served && !a.OnCluster }))
		}
	}
}

// rbdDeviceSpace refuses an rbd tier whose cluster's device files are
// larger than a tmpfs or loop tier they are made on (engine/ceph makes
// them at full size, sparse, and the OSD would fill the tier before
// itself). Each cluster is checked alone, as engine/ceph checks free
// space when it starts.
func (p *parser) rbdDeviceSpace(s *Study) {
	for _, t := range s.Tiers {
		rt, ok := rbdtier.Of(t.Kind)
		if !ok {
			continue
		}
		need := rbdtier.DeviceBytes(rt.Ceph, rt.Spec)
		names := make([]string, 0, len(need))
		for name := range need {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			on, ok := s.Tier(name)
			size, kind := on.Size()
			if !ok || size == 0 || on.Abilities().Served || need[name] <= size {
				continue
			}
			p.addf(t.Line, "tier %q: its Ceph cluster's device files need %s on tier %q (%s, %s); make that tier larger, or lower the options block_size, db_size or wal_size of the devices there",
				t.Name, humanize.IBytes(uint64(need[name])), name, kind, humanize.IBytes(uint64(size)))
		}
	}
}
