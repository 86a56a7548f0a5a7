package telemetry

// Reading is what one reading of the sources added, handed to
// Config.OnSample as it is taken: each tier's newest disk sample, the
// host's and the engine's. A source without a new sample (the first
// reading, a tier without a device, an unreadable source) is absent.
type Reading struct {
	Tiers  map[string]TierSample
	Host   *HostSample
	Engine *EngineSample
}

// TierSample is a tier's newest disk sample and the kernel's name for its
// device ("vda", "loop3").
type TierSample struct {
	Device string
	DiskSample
}

// sampleMarks are how many samples each source held before a reading.
type sampleMarks struct {
	disks        map[string]int
	host, engine int
}

func (s *Sampler) marks() sampleMarks {
	m := sampleMarks{disks: make(map[string]int, len(s.disks)), host: len(s.host.samples), engine: len(s.engine.samples)}
	for name, d := range s.disks {
		m.disks[name] = len(d.samples)
	}
	return m
}

// newSince is the samples added since m, and whether there are any.
func (s *Sampler) newSince(m sampleMarks) (Reading, bool) {
	r := Reading{Tiers: map[string]TierSample{}}
	any := false
	for tier, name := range s.tierDev {
		if d := s.disks[name]; d != nil && len(d.samples) > m.disks[name] {
			r.Tiers[tier] = TierSample{Device: name, DiskSample: d.samples[len(d.samples)-1]}
			any = true
		}
	}
	if n := len(s.host.samples); n > m.host {
		h := s.host.samples[n-1]
		r.Host, any = &h, true
	}
	if n := len(s.engine.samples); n > m.engine {
		e := s.engine.samples[n-1]
		r.Engine, any = &e, true
	}
	return r, any
}
