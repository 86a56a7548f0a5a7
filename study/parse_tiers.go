package study

// This file reads tiers: folders, tierbench-provisioned storage (tmpfs,
// loop, pmem) and the modifiers that emulate slower storage.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"gopkg.in/yaml.v3"

	"github.com/tierbench/tierbench/engine/ceph/rbdtier"
	"github.com/tierbench/tierbench/hostenv"
	"github.com/tierbench/tierbench/setting"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/profile"
)

// tiers returns the declared tier names; ok is false when the tiers section
// itself is unusable, so references to tiers cannot be checked.
func (p *parser) tiers(s *Study) ([]string, bool) {
	const example = "disk: {path: /var/tmp/tierbench}"
	e, ok := p.need(p.top, "tiers", p.line, "add tiers: {"+example+"}")
	if !ok {
		return nil, false
	}
	ents, ok := p.entries(e.v, "tiers", "write tiers: {"+example+"}")
	if !ok {
		return nil, false
	}
	if len(ents) == 0 {
		p.addf(e.k.Line, "tiers is empty; declare at least one tier, e.g. %s", example)
		return nil, false
	}
	var names []string
	for _, te := range ents {
		name := te.key
		names = append(names, name)
		if strings.TrimSpace(name) == "" {
			p.addf(te.k.Line, "tier name is empty; give the tier a name such as disk")
			continue
		}
		if err := tier.CheckName(name); err != nil {
			p.addf(te.k.Line, "%v", err)
			continue
		}
		if te.v.Kind == yaml.ScalarNode && !isNull(te.v) {
			p.addf(te.v.Line, "tier %q must be a mapping with a path, not a plain value; write %s: {path: %s}", name, name, te.v.Value)
			continue
		}
		fields, ok := p.entries(te.v, fmt.Sprintf("tier %q", name), fmt.Sprintf("write %s: {path: /absolute/folder}", name))
		if !ok {
			continue
		}
		if t, ok := p.tier(name, te, fields); ok {
			t.Line = te.k.Line
			p.distinct(s.Tiers, t, te.k.Line)
			s.Tiers = append(s.Tiers, t)
		}
	}
	p.rbdClusters(s, names)
	return names, true
}

// distinct refuses a tier that is the same storage as an earlier one: two
// names for one folder (after symlinks) or one PMEM device would compare a
// tier with itself and let one tier's run folders and probes land in the
// other's.
func (p *parser) distinct(earlier []Tier, t Tier, line int) {
	for _, e := range earlier {
		switch {
		case t.Path != "" && e.Path == t.Path:
			p.addf(line, "tier %q is the same folder as tier %q (%s); give each tier its own folder, or use one tier in several placements", t.Name, e.Name, t.Path)
		case sameDevice(t, e):
			p.addf(line, "tier %q uses the same device as tier %q (%s); give each tier its own device", t.Name, e.Name, t.Kind.(tier.OnDevice).UserDevice())
		}
	}
}

// sameDevice reports whether tiers a and b mount the same device of the
// user's (tier.OnDevice).
func sameDevice(a, b Tier) bool {
	da, ok := a.Kind.(tier.OnDevice)
	db, ok2 := b.Kind.(tier.OnDevice)
	return ok && ok2 && filepath.Clean(da.UserDevice()) == filepath.Clean(db.UserDevice())
}

// tierKind is one kind of tier as a study writes it (its kind's Key) and
// how it is read: kind is the kind's zero value, whose Abilities decide
// which modifiers the tier takes (a kind's abilities do not depend on
// its settings where the parser asks them). Adding a kind of tier is its
// type (see tier.Kind) and one row here; see docs/adding-a-tier.md.
type tierKind struct {
	kind  tier.Kind
	parse func(p *parser, name string, e entry, mods map[string]entry) (Tier, bool)
}

// tierKinds is every kind of tier, in the order messages list them.
var tierKinds = []tierKind{
	{tier.FolderSpec{}, (*parser).pathTier},
	{tier.TmpfsSpec{}, (*parser).tmpfsTier},
	{tier.LoopSpec{}, (*parser).loopTier},
	{tier.PmemSpec{}, (*parser).pmemTier},
	{tier.PmemEmulatedSpec{}, (*parser).pmemEmulatedTier},
	{rbdtier.Tier{}, (*parser).rbdTier},
	{tier.StorageClassSpec{}, (*parser).storageClassTier},
}

// tierModifiers make a tier emulate slower storage, or say what it is
// (atomic_write, write_cache, cost; volume_mode: a cluster claim's mode).
var tierModifiers = []string{"latency", "throttle", "profile", "emulate", "atomic_write", "write_cache", "volume_mode", "cost"}

// tierKindKeys lists tierKinds' keys.
func tierKindKeys() []string {
	keys := make([]string, len(tierKinds))
	for i, k := range tierKinds {
		keys[i] = k.kind.Key()
	}
	return keys
}

// kindsWith lists the keys of the kinds whose abilities have has, as
// "a, b or c", for messages.
func kindsWith(has func(tier.Abilities) bool) string {
	var keys []string
	for _, k := range tierKinds {
		if has(k.kind.Abilities()) {
			keys = append(keys, k.kind.Key())
		}
	}
	return orList(keys)
}

// tier reads one tier: exactly one of tierKinds, and optionally the
// modifiers its kind's abilities allow (latency and throttle, or a
// profile in their place: parse_profile.go).
func (p *parser) tier(name string, te entry, fields []entry) (Tier, bool) {
	var kind *entry
	mods := map[string]entry{}
	typo := false
	kinds := tierKindKeys()
	known := append(slices.Clone(kinds), tierModifiers...)
	for i, f := range fields {
		switch {
		case slices.Contains(tierModifiers, f.key):
			mods[f.key] = f
			continue
		case !slices.Contains(kinds, f.key):
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in tier %q", f.key, name), f.key, known, "known keys", "remove it")
			typo = true
			continue
		}
		if kind != nil {
			p.addf(f.k.Line, "tier %q has both %s and %s; give exactly one of %s", name, kind.key, f.key, orList(kinds))
			return Tier{}, false
		}
		kind = &fields[i]
	}
	if kind == nil {
		if typo {
			return Tier{}, false // one typo, one problem
		}
		p.addf(te.k.Line, "tier %q has no path; add path: /absolute/folder (or tmpfs: {size: 1G}, or loop: {backing: ram, size: 1G, fs: ext4})", name)
		return Tier{}, false
	}
	if e, has := mods["cost"]; has {
		p.tierCost(name, e)
	}
	row := tierKinds[slices.IndexFunc(tierKinds, func(k tierKind) bool { return k.kind.Key() == kind.key })]
	abil := row.kind.Abilities()
	t, ok := row.parse(p, name, *kind, mods)
	if abil.OnCluster {
		return t, ok // its modifiers are its own
	}
	if e, has := mods["volume_mode"]; has {
		p.addf(e.k.Line, "tier %q: volume_mode is for a %s tier (a claim's volume mode on a Kubernetes cluster); remove it", name, kindsWith(func(a tier.Abilities) bool { return a.OnCluster }))
		return Tier{}, false
	}
	path, pathOK := p.emulatePath(name, kind.key, abil, mods)
	if !pathOK {
		return Tier{}, false
	}
	t.Emulate = path
	if e, has := mods["atomic_write"]; has {
		ok = p.atomicWrite(name, &t, abil, e) && ok
	}
	if e, has := mods["write_cache"]; has {
		ok = p.writeCache(name, &t, abil, e) && ok
	}
	if e, has := mods["profile"]; has {
		return p.profiled(name, t, ok, kind.key, abil, e, mods)
	}
	if e, has := mods["latency"]; has && !abil.Latency {
		p.addf(e.k.Line, "tier %q: latency is not supported on a%s %s tier, whose speed is %s; place the cluster's components on emulated tiers instead", name, article(kind.key), kind.key, abil.FixedSpeed)
		return Tier{}, false
	}
	if e, has := mods["latency"]; has {
		t.Latency = p.latency(name, e)
		ok = ok && t.Latency != nil
		if t.Latency != nil && path == tier.AtSyncCalls && (t.Latency.Read > 0 || t.Latency.Write > 0) {
			p.addf(mods["emulate"].v.Line, "tier %q: emulate: syscall delays only syncs, and latency asks for read or write delays too; remove read and write, or write emulate: fuse", name)
			return Tier{}, false
		}
	}
	if e, has := mods["throttle"]; has {
		if !abil.Throttle {
			owns := kindsWith(func(a tier.Abilities) bool { return a.Throttle })
			p.addf(e.k.Line, "tier %q: throttle needs a %s tier, whose device tierbench owns; write %s: {%s: {...}, throttle: {...}}", name, owns, name, owns)
			return Tier{}, false
		}
		t.Throttle = p.throttle(name, e)
		ok = ok && t.Throttle != nil
	}
	return t, ok
}

// article is "n" before a key said with a vowel first ("an rbd tier").
func article(key string) string {
	if strings.ContainsRune("aeiour", rune(key[0])) {
		return "n"
	}
	return ""
}

// atomicWrite reads atomic_write: 4KiB into t: a unit the kind can have
// (8B only on persistent memory).
func (p *parser) atomicWrite(name string, t *Tier, abil tier.Abilities, e entry) bool {
	v, ok := p.scalar(e, profile.AtomicWriteFix)
	if !ok {
		return false
	}
	n, err := profile.ParseAtomicWrite(v)
	if err == nil && n < profile.SectorAtomicWrite && !abil.ByteAtomic {
		err = fmt.Errorf("atomic_write %s is below a 512B sector, which only a %s tier writes whole; write atomic_write: 512B or more", v, kindsWith(func(a tier.Abilities) bool { return a.ByteAtomic }))
	}
	if err != nil {
		p.addf(e.v.Line, "tier %q: %v", name, err)
		return false
	}
	t.AtomicWrite = n
	return true
}

// writeCache reads write_cache: volatile|protected into t: whether a
// power cut empties the device's write cache, losing O_DIRECT writes not
// yet flushed. Only a tier the power-loss layer can stand over has one
// that matters.
func (p *parser) writeCache(name string, t *Tier, abil tier.Abilities, e entry) bool {
	const fix = "write write_cache: volatile (a cache a power cut empties) or protected (power-loss protection, or no cache: the default)"
	v, ok := p.scalar(e, fix)
	if !ok {
		return false
	}
	if abil.Layer == tier.LayerNever || abil.Layer == tier.LayerUnmodelled {
		p.addf(e.k.Line, "tier %q: write_cache is for a tier a power cut can cut (a %s tier); remove it", name, kindsWith(func(a tier.Abilities) bool {
			return a.Layer == tier.LayerOnPowerCut || a.Layer == tier.LayerAlways
		}))
		return false
	}
	switch v {
	case "volatile":
		t.VolatileCache = true
	case "protected":
	default:
		p.addf(e.v.Line, "tier %q: write_cache %q is not known; %s", name, v, fix)
		return false
	}
	return true
}

// emulatePath reads emulate: fuse|syscall, how a tier's latency or profile
// is applied ("" when not given: the default of each).
func (p *parser) emulatePath(name, key string, abil tier.Abilities, mods map[string]entry) (tier.LatencyPath, bool) {
	e, has := mods["emulate"]
	if !has {
		return "", true
	}
	v, ok := p.scalar(e, "write emulate: syscall or emulate: fuse")
	if !ok {
		return "", false
	}
	_, lat := mods["latency"]
	_, prof := mods["profile"]
	switch {
	case !slices.Contains(tier.LatencyPaths, v):
		p.unknown(e.v.Line, fmt.Sprintf("tier %q: unknown emulate %q", name, v), v, tier.LatencyPaths, "known ways", "write emulate: syscall (the sync calls alone) or emulate: fuse (every operation, through the FUSE layer)")
		return "", false
	case !lat && !prof:
		p.addf(e.k.Line, "tier %q: emulate says how a latency or profile is applied, and the tier has neither; add profile: NAME or latency: {fsync: ...}, or remove emulate", name)
		return "", false
	case v == string(tier.AtSyncCalls) && abil.Layer == tier.LayerAlways:
		p.addf(e.v.Line, "tier %q: a %s tier is always served through the power-loss layer, a FUSE layer; remove emulate (or write emulate: fuse), or use tmpfs: {size: ...} for a tier whose syncs alone are delayed", name, key)
		return "", false
	}
	return tier.LatencyPath(v), true
}

func (p *parser) pathTier(name string, e entry, _ map[string]entry) (Tier, bool) {
	v, ok := p.scalar(e, "write path: /absolute/folder")
	if !ok {
		return Tier{}, false
	}
	if err := tier.CheckPath(v); err != nil {
		p.addf(e.v.Line, "tier %q: %v", name, err)
		return Tier{}, false
	}
	real, err := tier.Resolve(v)
	if err != nil {
		p.addf(e.v.Line, "tier %q: %v", name, err)
		return Tier{}, false
	}
	t := Tier{Spec: tier.Spec{Name: name, Path: real, Kind: tier.FolderSpec{}}}
	if real != filepath.Clean(v) {
		t.Given = v
	}
	return t, true
}

func (p *parser) pmemTier(name string, e entry, _ map[string]entry) (Tier, bool) {
	const example = "pmem: {device: /dev/pmem0, fs: xfs, dax: true}"
	m, ok := p.subfields(name, e, []string{"device", "fs", "dax"}, example)
	if !ok {
		return Tier{}, false
	}
	spec := tier.PmemSpec{FS: "xfs"}
	d, has := m["device"]
	if !has {
		p.addf(e.k.Line, "tier %q pmem has no device; write %s", name, example)
		return Tier{}, false
	}
	if spec.Device, ok = p.scalar(d, "write device: /dev/pmem0"); !ok {
		return Tier{}, false
	}
	if f, has := m["fs"]; has {
		if spec.FS, ok = p.scalar(f, "write fs: xfs or fs: ext4"); !ok {
			return Tier{}, false
		}
	}
	if x, has := m["dax"]; has {
		v, ok := p.scalar(x, "write dax: true or dax: false")
		b, err := strconv.ParseBool(v)
		if !ok || err != nil {
			p.addf(x.v.Line, "tier %q: dax %q is not true or false", name, v)
			return Tier{}, false
		}
		spec.DAX = b
	}
	return Tier{Spec: tier.Spec{Name: name, Kind: spec}}, true
}

// pmemEmulatedTier reads pmem_emulated: {path: /dev/shm/folder} or
// {size: 1GiB}: RAM (a folder on tmpfs, or a tmpfs tierbench mounts)
// served through the crash-capable layer in every run, so that it is
// durable as far as that layer models it, where tmpfs alone keeps nothing.
// A folder elsewhere than in RAM is refused: it would be a disk under the
// layer, named as persistent memory.
func (p *parser) pmemEmulatedTier(name string, e entry, _ map[string]entry) (Tier, bool) {
	const example = "pmem_emulated: {path: /dev/shm/tierbench-pmem} or pmem_emulated: {size: 1GiB}"
	m, ok := p.subfields(name, e, []string{"path", "size"}, example)
	if !ok {
		return Tier{}, false
	}
	pe, hasPath := m["path"]
	_, hasSize := m["size"]
	if hasPath == hasSize {
		p.addf(e.k.Line, "tier %q pmem_emulated needs exactly one of path (a folder in RAM) and size (a tmpfs tierbench mounts); write %s", name, example)
		return Tier{}, false
	}
	var t Tier
	if hasPath {
		if t, ok = p.pathTier(name, pe, nil); !ok {
			return Tier{}, false
		}
		if err := tier.CheckInRAM(t.Path); err != nil {
			p.addf(pe.v.Line, "tier %q: pmem_emulated %v; give a folder on tmpfs such as /dev/shm/tierbench-pmem, or size: 1GiB for a tmpfs tierbench mounts", name, err)
			return Tier{}, false
		}
	} else {
		size, ok := p.size(name, m, e, example, true)
		if !ok {
			return Tier{}, false
		}
		t = Tier{Spec: tier.Spec{Name: name}}
		t.Kind = tier.PmemEmulatedSpec{Size: size}
		return t, true
	}
	t.Kind = tier.PmemEmulatedSpec{Path: t.Path}
	return t, true
}

// latency reads latency: {read: 100us, write: 1ms, fsync: 2ms}.
func (p *parser) latency(name string, e entry) *tier.LatencySpec {
	const example = "latency: {read: 100us, write: 1ms, fsync: 2ms}"
	m, ok := p.subfields(name, e, []string{"read", "write", "fsync"}, example)
	if !ok {
		return nil
	}
	var spec tier.LatencySpec
	for key, into := range map[string]*time.Duration{"read": &spec.Read, "write": &spec.Write, "fsync": &spec.Fsync} {
		f, has := m[key]
		if !has {
			continue
		}
		v, ok := p.scalar(f, "write "+key+": 1ms")
		d, err := time.ParseDuration(v)
		if !ok || err != nil || d < 0 || d > time.Minute {
			p.addf(f.v.Line, "tier %q: latency %s %q is not a duration between 0 and 1m; write e.g. %s: 2ms", name, key, v, key)
			return nil
		}
		*into = d
	}
	if spec.Delays() == 0 {
		p.addf(e.k.Line, "tier %q: latency sets nothing; write %s", name, example)
		return nil
	}
	return &spec
}

// throttle reads throttle: {read_iops, write_iops, read_bps, write_bps}.
func (p *parser) throttle(name string, e entry) *tier.ThrottleSpec {
	const example = "throttle: {write_iops: 500, write_bps: 100MiB}"
	m, ok := p.subfields(name, e, []string{"read_iops", "write_iops", "read_bps", "write_bps"}, example)
	if !ok {
		return nil
	}
	var spec tier.ThrottleSpec
	for key, into := range map[string]*int64{"read_iops": &spec.ReadIOPS, "write_iops": &spec.WriteIOPS, "read_bps": &spec.ReadBPS, "write_bps": &spec.WriteBPS} {
		f, has := m[key]
		if !has {
			continue
		}
		v, ok := p.scalar(f, "write "+key+": <number>")
		if !ok {
			return nil
		}
		// Bytes per second may use units (100MiB); operations per second
		// are a whole number.
		st := setting.Setting{Name: key, Kind: setting.Int, Min: "1", Default: "1000"}
		if strings.HasSuffix(key, "_bps") {
			st.Kind, st.Default = setting.Size, "100MiB"
		}
		norm, err := st.Parse(v)
		if err != nil {
			p.addf(f.v.Line, "tier %q: throttle %v", name, err)
			return nil
		}
		*into, _ = strconv.ParseInt(norm, 10, 64)
	}
	if spec == (tier.ThrottleSpec{}) {
		p.addf(e.k.Line, "tier %q: throttle sets nothing; write %s", name, example)
		return nil
	}
	return &spec
}

// subfields reads a provisioned tier's settings, rejecting unknown keys.
func (p *parser) subfields(name string, e entry, known []string, example string) (map[string]entry, bool) {
	ents, ok := p.entries(e.v, fmt.Sprintf("tier %q %s", name, e.key), "write "+example)
	if !ok {
		return nil, false
	}
	out := map[string]entry{}
	good := true
	for _, f := range ents {
		if !slices.Contains(known, f.key) {
			p.unknown(f.k.Line, fmt.Sprintf("unknown key %q in tier %q %s", f.key, name, e.key), f.key, known, "known keys", "remove it")
			good = false
			continue
		}
		out[f.key] = f
	}
	return out, good
}

// size reads a positive size such as 512M or 2GiB. A tier in RAM may not
// be larger than the machine's memory: it could never be filled, and a
// study sized to it would swap or be killed rather than measure.
func (p *parser) size(name string, m map[string]entry, parent entry, example string, inRAM bool) (int64, bool) {
	e, ok := m["size"]
	if !ok {
		p.addf(parent.k.Line, "tier %q %s has no size; write %s", name, parent.key, example)
		return 0, false
	}
	v, ok := p.scalar(e, "write size: 1GiB")
	if !ok {
		return 0, false
	}
	norm, err := tierSize.Parse(v)
	if err != nil {
		p.addf(e.v.Line, "tier %q: %v", name, err)
		return 0, false
	}
	n, _ := strconv.ParseInt(norm, 10, 64)
	if total := hostenv.MemoryBytes(); inRAM && total > 0 && uint64(n) > total {
		p.addf(e.v.Line, "tier %q: size %s is more than this machine's memory (%s), and the tier lives in RAM; make it smaller", name, v, humanize.IBytes(total))
		return 0, false
	}
	return n, true
}

// tierSize is a tier's size, read as every size in a study is.
var tierSize = setting.Setting{Name: "size", Kind: setting.Size, Default: "1GiB"}

func (p *parser) tmpfsTier(name string, e entry, _ map[string]entry) (Tier, bool) {
	const example = "tmpfs: {size: 1GiB}"
	m, ok := p.subfields(name, e, []string{"size"}, example)
	if !ok {
		return Tier{}, false
	}
	size, ok := p.size(name, m, e, example, true)
	if !ok {
		return Tier{}, false
	}
	return Tier{Spec: tier.Spec{Name: name, Kind: tier.TmpfsSpec{Size: size}}}, true
}

func (p *parser) loopTier(name string, e entry, _ map[string]entry) (Tier, bool) {
	const example = "loop: {backing: ram, size: 1GiB, fs: ext4}"
	m, ok := p.subfields(name, e, []string{"backing", "size", "fs", "mount_options"}, example)
	if !ok {
		return Tier{}, false
	}
	spec := tier.LoopSpec{Backing: "disk", FS: "ext4"}
	good := true
	if b, ok := m["backing"]; ok {
		v, ok := p.scalar(b, "write backing: ram or backing: disk")
		if ok && v != "ram" && v != "disk" {
			p.addf(b.v.Line, "tier %q: backing %q must be ram or disk", name, v)
			good = false
		}
		spec.Backing = v
		good = good && ok
	}
	size, ok := p.size(name, m, e, example, spec.Backing == "ram")
	spec.Size = size
	good = good && ok
	good = p.filesystem(name, m, &spec.FS) && good
	if o, ok := m["mount_options"]; ok {
		v, ok := p.scalar(o, `write mount_options: "noatime"`)
		spec.MountOptions = v
		good = good && ok
	}
	if !good {
		return Tier{}, false
	}
	return Tier{Spec: tier.Spec{Name: name, Kind: spec}}, true
}

// filesystem reads the fs a tier tierbench formats is made with, when
// given, into fs: one tierbench can make.
func (p *parser) filesystem(name string, m map[string]entry, fs *string) bool {
	f, has := m["fs"]
	if !has {
		return true
	}
	v, ok := p.scalar(f, "write fs: ext4 or fs: xfs")
	if ok && !slices.Contains(tier.FilesystemNames(), v) {
		p.addf(f.v.Line, "tier %q: fs %q is not supported; use %s", name, v, strings.Join(tier.FilesystemNames(), " or "))
		return false
	}
	*fs = v
	return ok
}

// tierSizes refuses a tmpfs or loop tier smaller than the data a placement
// puts on it: the workload's lower bound of its data set (workload.Sizer) against
// the tier's size. The engine's first component holds the data set (data,
// or Ignite's persistence); logs are not counted, so only a tier that is
// clearly too small is refused. Folders are checked against their free
// space by Preflight; a PMEM device's size is known only once mounted.
func (p *parser) tierSizes(s *Study) {
	need, data := s.Workload.EstimatedBytes, s.DataComponent
	if need <= 0 || data == "" {
		return
	}
	done := map[string]bool{}
	for _, pl := range s.Placements {
		name, ok := pl.Components[data]
		if !ok || done[name] {
			continue
		}
		done[name] = true
		t, ok := s.Tier(name)
		if !ok {
			continue
		}
		size, kind := t.Size()
		if size > 0 && size < need {
			p.addf(t.Line, "tier %q (%s, %s) is smaller than the data placement %q puts on it: workload %s loads at least %s; make the tier at least %s or load a smaller data set",
				name, kind, humanize.IBytes(uint64(size)), pl.Name, s.Workload.Name, humanize.IBytes(uint64(need)), humanize.IBytes(uint64(need)))
		}
	}
}

// engineFiles refuses a tmpfs or loop tier that cannot hold the files an
// engine preallocates on it (engine.Spec.TierBytes: ceph's device files),
// under any placement and any swept option value: the run could only fail
// when its OSDs are made.
func (p *parser) engineFiles(s *Study) {
	if p.spec == nil || p.spec.TierBytes == nil {
		return
	}
	reported := map[string]bool{}
	for _, pl := range s.Placements {
		for _, set := range p.optionSets {
			for name, need := range p.spec.TierBytes(pl.Components, set.options) {
				t, ok := s.Tier(name)
				if !ok || reported[name] {
					continue
				}
				if size, kind := t.Size(); size > 0 && size < need {
					reported[name] = true
					p.addf(t.Line, "tier %q (%s, %s) cannot hold the %s of files engine %s makes on it under placement %q; make the tier at least %s or lower the engine's size options (see tierbench engines)",
						name, kind, humanize.IBytes(uint64(size)), humanize.IBytes(uint64(need)), p.spec.Name, pl.Name, humanize.IBytes(uint64(need)))
				}
			}
		}
	}
}
