package study

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/platform/kube/node"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tool"
)

// Kubernetes is a study's cluster (platform: {kubernetes: {...}}): its
// tiers are the cluster's storage classes, each component a claim from its
// tier's class, the engine a pod and the load generator a Job running
// `tierbench drive` in Image.
type Kubernetes struct {
	// Kubeconfig is the kubeconfig file; empty means $KUBECONFIG, then
	// ~/.kube/config, as kubectl reads them.
	Kubeconfig string
	// Context is the kubeconfig's context to use; empty means its current.
	Context string
	// Namespace holds every object of the study; "default" unless given.
	Namespace string
	// Image is the image with tierbench in it, for the load generator.
	Image string
	// EngineImage overrides the engine's official image (engine.Spec.Image).
	EngineImage string
	// VolumeSize, when set, is every claim's size in bytes; else the data
	// component's claim is sized from the workload's estimate and the
	// others get DefaultVolumeSize.
	VolumeSize int64
	// Line is where platform is declared.
	Line int
}

// platformKeys are the keys of platform: kubernetes.
var platformKeys = []string{"kubeconfig", "context", "namespace", "image", "engine_image", "volume_size"}

// dnsLabel is a Kubernetes object name of the kinds a study names
// (namespaces, storage classes: RFC 1123 labels and subdomains).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// platform reads platform: local (the default) or {kubernetes: {...}},
// and checks that the tiers fit it: storage classes on a cluster, and
// only there.
func (p *parser) platform(s *Study) {
	const example = "platform: {kubernetes: {kubeconfig: ~/.kube/config, namespace: bench, image: registry.example/tierbench:1}}"
	e, declared := p.top["platform"]
	if declared {
		if v := e.v.Value; e.v.Kind == yaml.ScalarNode && v == "local" {
			// this machine, as without the key
		} else if ents, ok := p.entries(e.v, "platform", "write "+example); ok {
			s.Kubernetes = p.kubernetes(e, ents, example)
		}
	}
	var classTiers []string
	for _, t := range s.Tiers {
		if t.Abilities().OnCluster {
			classTiers = append(classTiers, t.Name)
		} else if s.Kubernetes != nil {
			p.addf(t.Line, "tier %q is on this machine, but the study runs on Kubernetes, whose tiers are storage classes; write %s: {storage_class: NAME}", t.Name, t.Name)
		}
	}
	// A platform that was declared but is wrong is reported once, above.
	if len(classTiers) > 0 && s.Kubernetes == nil && !declared && !p.misspelt["platform"] {
		p.addf(s.tierLine(classTiers[0]), "tier %q is a storage class, which lives on a Kubernetes cluster; add %s", classTiers[0], example)
	}
	inProcess := p.spec != nil && p.spec.InProcess
	if s.Kubernetes != nil && inProcess {
		p.addf(s.Kubernetes.Line, "engine %s runs inside tierbench's own process, which on a cluster is the load generator's pod: use a server engine there (see tierbench engines)", p.spec.Name)
	}
	if s.Kubernetes != nil && s.Target != "" {
		p.addf(s.Kubernetes.Line, "a study with target measures a server you run; it places nothing on a cluster: remove platform or target")
	}
	if s.Kubernetes != nil && p.spec != nil && !inProcess {
		p.clusterRuns(s)
	}
}

// clusterRuns refuses what a run on a cluster cannot do yet: an engine
// without a container, another load generator than tierbench's own
// driver (the Job runs tierbench drive), open loop, max_ops, cold cache
// (which drops this machine's page cache, not the node's), and a raw
// block volume for an engine that keeps its components in folders.
func (p *parser) clusterRuns(s *Study) {
	line := s.Kubernetes.Line
	if p.spec.Image == "" {
		var can []string
		for _, name := range sortedCopy(p.cat.EngineNames()) {
			if e, ok := p.cat.EngineSpec(name); ok && e.Image != "" {
				can = append(can, name)
			}
		}
		p.addf(line, "engine %s cannot run on a cluster yet (no container image is known for it); engines that can: %s", p.spec.Name, strings.Join(can, ", "))
	}
	for _, d := range s.Drivers {
		if d == tool.Builtin {
			continue
		}
		why := "the load generator's Job runs tierbench drive"
		if tool.IsBuiltin(d) {
			why += " on its default lanes"
		}
		p.addf(p.lineOf(p.top, "driver", line), "driver %s cannot run on a cluster yet: %s; use driver: builtin", d, why)
	}
	if s.TargetRate > 0 {
		p.addf(p.lineOf(p.top, "target_rate", line), "target_rate (open loop) cannot run on a cluster yet: tierbench drive runs closed loop; remove target_rate")
	}
	if s.MaxOps > 0 {
		p.addf(p.lineOf(p.top, "max_ops", line), "max_ops cannot run on a cluster yet: tierbench drive measures a duration; remove max_ops")
	}
	if slices.Contains(s.Caches, CacheCold) {
		p.addf(p.lineOf(p.top, "cache", line), "cache: cold cannot run on a cluster: it drops the page cache of this machine, not of the engine's node; measure warm")
	}
	for _, t := range s.Tiers {
		if c, ok := tier.ClassOf(t.Spec); ok && c.VolumeMode == "Block" && s.usesTier(t.Name) {
			p.addf(t.Line, "tier %q is volume_mode Block (a raw device), but %s keeps its components in folders: use volume_mode: Filesystem", t.Name, p.spec.Name)
		}
	}
}

// StorageClasses maps each storage_class tier to its class.
func (s *Study) StorageClasses() map[string]string {
	out := map[string]string{}
	for _, t := range s.Tiers {
		if c, ok := tier.ClassOf(t.Spec); ok {
			out[t.Name] = c.Class
		}
	}
	return out
}

// usesTier reports whether a placement puts a component on tier name.
func (s *Study) usesTier(name string) bool {
	for _, pl := range s.Placements {
		if slices.Contains(pl.TierNames(), name) {
			return true
		}
	}
	return false
}

func (p *parser) kubernetes(e entry, ents []entry, example string) *Kubernetes {
	if len(ents) != 1 || ents[0].key != "kubernetes" {
		p.addf(e.k.Line, "platform is local (the default) or kubernetes; write %s", example)
		return nil
	}
	fields, ok := p.entries(ents[0].v, "platform kubernetes", "write "+example)
	if !ok {
		return nil
	}
	k := &Kubernetes{Namespace: "default", Line: e.k.Line}
	good := true
	for _, f := range fields {
		if !slices.Contains(platformKeys, f.key) {
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in platform kubernetes", f.key), f.key, platformKeys, "known keys", "remove it")
			good = false
			continue
		}
		v, ok := p.scalar(f, fmt.Sprintf("write %s: VALUE", f.key))
		if !ok {
			good = false
			continue
		}
		v = strings.TrimSpace(v)
		switch f.key {
		case "kubeconfig":
			k.Kubeconfig = v
		case "context":
			k.Context = v
		case "namespace":
			if !dnsLabel.MatchString(v) || len(v) > 63 || strings.Contains(v, ".") {
				p.addf(f.v.Line, "platform kubernetes namespace %s is not a namespace name (lower-case letters, digits and '-', at most 63)", tier.Excerpt(v))
				good = false
			}
			k.Namespace = v
		case "image":
			k.Image = v
		case "engine_image":
			k.EngineImage = v
		case "volume_size":
			norm, ok := p.settingValue("platform kubernetes", volumeSize, v, f.v.Line)
			good = good && ok
			k.VolumeSize, _ = strconv.ParseInt(norm, 10, 64)
		}
	}
	if good {
		engineName := ""
		if p.spec != nil {
			engineName = p.spec.Name
		}
		labImages(k, engineName)
	}
	if k.Image == "" && good {
		p.addf(ents[0].k.Line, "platform kubernetes has no image: the image with tierbench in it runs the load generator (`tierbench drive`) as a Job; add image: REGISTRY/tierbench:TAG (docs/kubernetes.md)")
		good = false
	}
	if !good {
		return nil
	}
	return k
}

// storageClassTier reads a tier on a cluster: storage_class: NAME, and
// optionally volume_mode: Filesystem | Block.
func (p *parser) storageClassTier(name string, kind entry, mods map[string]entry) (Tier, bool) {
	v, ok := p.scalar(kind, "write storage_class: NAME")
	if !ok {
		return Tier{}, false
	}
	v = strings.TrimSpace(v)
	if !dnsLabel.MatchString(v) || len(v) > 253 {
		p.addf(kind.v.Line, "tier %q: storage_class %s is not a storage class name (lower-case letters, digits, '-' and '.', at most 253)", name, tier.Excerpt(v))
		return Tier{}, false
	}
	spec := tier.StorageClassSpec{Class: v, VolumeMode: "Filesystem"}
	for _, key := range slices.Sorted(maps.Keys(mods)) { // one problem, the same each time
		e := mods[key]
		if key != "volume_mode" {
			p.addf(e.k.Line, "tier %q: %s is not supported on a storage_class tier, whose speed is the cluster's; remove it", name, key)
			return Tier{}, false
		}
		m, ok := p.scalar(e, "write volume_mode: Filesystem or Block")
		if !ok {
			return Tier{}, false
		}
		if m != "Filesystem" && m != "Block" {
			p.addf(e.v.Line, "tier %q: volume_mode %q must be Filesystem or Block", name, m)
			return Tier{}, false
		}
		spec.VolumeMode = m
	}
	return Tier{Spec: tier.Spec{Name: name, Kind: spec}}, true
}

// tierLine is where tier name is declared (0 if it is not).
func (s *Study) tierLine(name string) int {
	if t, ok := s.Tier(name); ok {
		return t.Line
	}
	return 0
}

// lineOf is the line of top-level key, or def when the study has none.
func (p *parser) lineOf(top map[string]entry, key string, def int) int {
	if e, ok := top[key]; ok {
		return e.k.Line
	}
	return def
}

// volumeSize is the size of each claim a cluster run makes.
var volumeSize = setting.Setting{Name: "volume_size", Kind: setting.Size, Min: "1MiB", Default: "20GiB"}

// labImages gives a study on the lab node (its kubeconfig is the one
// `tierbench cluster up` wrote on this machine) the images cluster up
// built, where the study names none: tierbench's own for the load
// generator, the engine's if the node has one. Elsewhere the study names
// its images, or the engine's official one is used.
func labImages(k *Kubernetes, engineName string) {
	info, running := node.Running()
	if !running || k.Kubeconfig == "" || !samePath(k.Kubeconfig, info.Kubeconfig) {
		return
	}
	if k.Image == "" {
		k.Image = info.Images["tierbench"]
	}
	if k.EngineImage == "" && engineName != "" {
		k.EngineImage = info.Images[engineName]
	}
}

// samePath reports whether a and b name the same file.
func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
