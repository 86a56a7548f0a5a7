package results

import (
	"slices"
	"strings"
)

// Series are what a study compares: its placements, each with each driver
// when it ran more than one ("all-disk/pgbench"), each in every swept
// combination of options and cache state ("all-disk heap=2g cold"). A
// series is compared with the baseline placement run by the study's first
// driver in the same combination (Placement.Baseline), so a swept option
// never mixes into a placement's ratio.
func (s *Study) Series() []Placement {
	variants := s.settings()
	if len(s.Drivers) <= 1 && len(variants) == 1 {
		return s.Placements
	}
	var out []Placement
	for _, set := range variants {
		v := strings.Join(set, " ")
		for _, d := range s.drivers() {
			for _, p := range s.Placements {
				out = append(out, Placement{Name: s.seriesName(p.Name, d, v), Components: p.Components, Durability: p.Durability,
					Baseline: s.seriesName(s.Baseline, s.drivers()[0], v), Settings: set, Of: s.seriesName(p.Name, d, "")})
			}
		}
	}
	return out
}

// drivers are the study's drivers, the builtin one when none is recorded.
func (s *Study) drivers() []string {
	if len(s.Drivers) == 0 {
		return []string{BuiltinDriver}
	}
	return s.Drivers
}

// seriesName names placement p run by driver d in swept combination v.
func (s *Study) seriesName(p, d, v string) string {
	if len(s.Drivers) > 1 {
		p += "/" + d
	}
	if v != "" {
		p += " " + v
	}
	return p
}

// SeriesOf names the series a run belongs to.
func (s *Study) SeriesOf(r Run) string {
	return s.seriesName(r.Placement, r.DriverOf(), s.VariantOf(r))
}

// BaselineSeries is the series the first combination is compared with:
// the baseline placement with the study's first driver and first swept
// values. Each series has its own in Placement.Baseline (BaselineOf).
func (s *Study) BaselineSeries() string {
	return s.seriesName(s.Baseline, s.drivers()[0], strings.Join(s.settings()[0], " "))
}

// BaselineOf names the series p is compared with.
func (s *Study) BaselineOf(p Placement) string {
	if p.Baseline != "" {
		return p.Baseline
	}
	return s.Baseline
}

// Dim is one swept dimension: an option axis, or the cache state when two
// were measured.
type Dim struct {
	// Name is the option's name, or "cache state".
	Name string
	// Labels are its values as shown ("heap=2g", "cold"), the first being
	// the one the others are compared with.
	Labels []string
}

// CacheDim names the cache-state dimension; CrashDim the crash kind's.
const (
	CacheDim = "cache state"
	CrashDim = "crash"
)

// Dims are the study's swept dimensions in matrix order, the first
// varying slowest. In a SeriesView they are kept for the reports, which
// compare each value of a dimension with its first.
func (s *Study) Dims() []Dim {
	if s.view != nil {
		return s.view
	}
	var out []Dim
	for _, a := range s.Axes {
		d := Dim{Name: a.Name}
		for _, l := range a.Labels {
			d.Labels = append(d.Labels, a.Name+"="+l)
		}
		out = append(out, d)
	}
	if len(s.Caches) > 1 {
		out = append(out, Dim{Name: CacheDim, Labels: s.Caches})
	}
	if len(s.Crashes) > 1 {
		d := Dim{Name: CrashDim}
		for _, k := range s.Crashes {
			d.Labels = append(d.Labels, "crash="+k)
		}
		out = append(out, d)
	}
	if len(s.TargetRates) > 1 {
		d := Dim{Name: RateDim}
		for _, r := range s.TargetRates {
			d.Labels = append(d.Labels, RateLabel(r))
		}
		out = append(out, d)
	}
	return out
}

// settings expands the swept dimensions into combinations, each a label
// per dimension; one empty combination when nothing is swept.
func (s *Study) settings() [][]string {
	out := [][]string{nil}
	if s.view != nil {
		return out
	}
	for _, d := range s.Dims() {
		var next [][]string
		for _, set := range out {
			for _, l := range d.Labels {
				next = append(next, append(slices.Clone(set), l))
			}
		}
		out = next
	}
	return out
}

// Variants labels the study's swept combinations in matrix order
// ("heap=2g cold"); a study that sweeps nothing has one variant, "".
func (s *Study) Variants() []string {
	var out []string
	for _, set := range s.settings() {
		out = append(out, strings.Join(set, " "))
	}
	return out
}

// WithoutCrash drops the crash kind from swept labels (a series'
// Settings, or a variant split on spaces): what a crash run shares with
// the runs without a crash it is set beside.
func WithoutCrash(labels []string) string {
	var keep []string
	for _, l := range labels {
		if !strings.HasPrefix(l, "crash=") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " ")
}

// SettingsOrder lists the study's swept combinations without the crash
// kind, in matrix order, each once: the settings a crash table sets
// apart ("full_page_writes=false"); one "" when nothing else is swept.
func (s *Study) SettingsOrder() []string {
	var out []string
	for _, set := range s.settings() {
		if l := WithoutCrash(set); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// VariantOf labels the swept combination run r ran in.
func (s *Study) VariantOf(r Run) string {
	if s.view != nil {
		return ""
	}
	var set []string
	for _, a := range s.Axes {
		l := r.Options[a.Name]
		if i := slices.Index(a.Values, l); i >= 0 {
			l = a.Labels[i]
		}
		set = append(set, a.Name+"="+l)
	}
	if len(s.Caches) > 1 {
		set = append(set, r.Cache)
	}
	if len(s.Crashes) > 1 {
		set = append(set, "crash="+r.CrashKind())
	}
	if len(s.TargetRates) > 1 {
		set = append(set, RateLabel(r.TargetRate))
	}
	return strings.Join(set, " ")
}

// SeriesView returns the study and runs as reports read them: when the
// study ran several drivers or swept options or cache states, each series
// is a placement of its own (Series), compared with its own baseline
// (Placement.Baseline), and the swept dimensions stay readable through
// Dims and Placement.Settings. Otherwise it returns st and runs unchanged.
func SeriesView(st *Study, runs []Run) (*Study, []Run) {
	if len(st.Drivers) <= 1 && len(st.settings()) == 1 {
		return st, runs
	}
	v := *st
	v.Placements, v.Baseline, v.Drivers = st.Series(), st.BaselineSeries(), nil
	v.view = st.Dims()
	if v.view == nil {
		v.view = []Dim{}
	}
	out := make([]Run, len(runs))
	for i, r := range runs {
		r.Placement = st.SeriesOf(r)
		out[i] = r
	}
	return &v, out
}

// IsBaseline reports whether series p is a baseline: the one it is
// compared with is itself.
func (s *Study) IsBaseline(p Placement) bool { return p.Name == s.BaselineOf(p) }

// BaselineText names the baseline for a reader: the placement, and in a
// study that swept options or cache states, that each combination has its
// own ("all-sata, in the same heap and cache state").
func (s *Study) BaselineText() string {
	dims := s.Dims()
	if len(dims) == 0 {
		return s.Baseline
	}
	name := s.Baseline
	for _, p := range s.Placements {
		if p.Name == s.Baseline && p.Of != "" {
			name = p.Of
		}
	}
	var names []string
	for _, d := range dims {
		names = append(names, d.Name)
	}
	return name + ", in the same " + strings.Join(names, " and ")
}
