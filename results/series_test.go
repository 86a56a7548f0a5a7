package results

import (
	"reflect"
	"testing"
)

func TestSeriesView(t *testing.T) {
	base := Study{Baseline: "a", Placements: []Placement{{Name: "a"}, {Name: "b"}}}
	runs := []Run{{Placement: "a", Driver: "builtin"}, {Placement: "b", Driver: "pgbench"}, {Placement: "a"}}
	for _, c := range []struct {
		name         string
		drivers      []string
		wantSeries   []string
		wantBaseline string
		wantRuns     []string
	}{
		{"no drivers recorded", nil, []string{"a", "b"}, "a", []string{"a", "b", "a"}},
		{"one driver", []string{"pgbench"}, []string{"a", "b"}, "a", []string{"a", "b", "a"}},
		{"two drivers", []string{"builtin", "pgbench"}, []string{"a/builtin", "b/builtin", "a/pgbench", "b/pgbench"}, "a/builtin",
			[]string{"a/builtin", "b/pgbench", "a/builtin"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := base
			st.Drivers = c.drivers
			v, vr := SeriesView(&st, runs)
			var names, runNames []string
			for _, p := range v.Placements {
				names = append(names, p.Name)
			}
			for _, r := range vr {
				runNames = append(runNames, r.Placement)
			}
			if !reflect.DeepEqual(names, c.wantSeries) || v.Baseline != c.wantBaseline || !reflect.DeepEqual(runNames, c.wantRuns) {
				t.Errorf("series %v baseline %q runs %v", names, v.Baseline, runNames)
			}
			if runs[1].Placement != "b" || st.Baseline != "a" {
				t.Error("SeriesView changed its input")
			}
		})
	}
}
