package study

import (
	"fmt"
	"path/filepath"

	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/profile"
)

// profiled reads profile: NAME or profile: FILE (relative to the study
// file's folder) on tier t of kind key, in place of latency and
// throttle: the tier's layering (tier.Layering) applies its latencies at
// the sync calls or through the FUSE layer (t.Emulate; "" is the
// profile's default), its IOPS and bandwidth caps through the block I/O
// controller on a kind that can be throttled (tier.ApplyProfile).
func (p *parser) profiled(name string, t Tier, ok bool, key string, abil tier.Abilities, e entry, mods map[string]entry) (Tier, bool) {
	for _, other := range []string{"latency", "throttle"} {
		if o, has := mods[other]; has {
			p.addf(o.k.Line, "tier %q has both profile and %s; a profile sets the tier's latency and caps: remove %s, or remove profile and keep %s", name, other, other, other)
			return Tier{}, false
		}
	}
	if !abil.Profile {
		p.addf(e.k.Line, "tier %q: profile is not supported on a%s %s tier, whose speed is %s; place the cluster's components on emulated tiers instead", name, article(key), key, abil.FixedSpeed)
		return Tier{}, false
	}
	ref, good := p.scalar(e, "write profile: "+profile.Names()[0]+" or profile: ./my-device.yaml")
	if !good {
		return Tier{}, false
	}
	dir := ""
	if p.file != "" {
		dir = filepath.Dir(p.file)
	}
	prof, err := profile.Load(ref, dir)
	if err != nil {
		p.addf(e.v.Line, "tier %q: %v", name, err)
		return Tier{}, false
	}
	if !ok {
		return Tier{}, false
	}
	t.Profile = &prof
	return t, true
}

// ProfileNotes says, for each tier with a profile, what of the profile the
// tier does not apply, one line each (validate prints them).
func (s *Study) ProfileNotes() []string {
	var out []string
	for _, t := range s.Tiers {
		if t.Profile == nil {
			continue
		}
		for _, n := range t.Stack.NotApplied {
			out = append(out, fmt.Sprintf("tier %s: profile %s: not applied: %s", t.Name, t.Profile.Name, n))
		}
	}
	return out
}
