package stats

import (
	"strings"
	"testing"
)

// TestMeetsNeed: yes when the lower tolerance bound clears the need, no
// when the rounds say it is missed too often, may with what would decide
// it otherwise; one round or no spread decides nothing.
func TestMeetsNeed(t *testing.T) {
	entry := func(caps ...float64) *CapacityEntry {
		g := &Group{throughputs: caps, N: len(caps)}
		return &CapacityEntry{OpsS: geoMean(caps), group: g}
	}
	for _, c := range []struct {
		name  string
		e     *CapacityEntry
		need  float64
		want  string
		holds string
	}{
		{"well above, steady", entry(2000, 2050, 1980, 2020, 2010), 1500, "yes", "in at least 95% of rounds"},
		{"at 1.05x with 10% spread", entry(1050, 1160, 950, 1100, 990, 1080), 1000, "no", "of rounds would fall below"},
		{"above, too few rounds to bound", entry(1200, 1260, 1150), 1000, "may", "more rounds at this spread would decide"},
		{"one round", entry(5000), 1000, "may", "run at least 2"},
		{"one round, below", entry(500), 1000, "no", "below the need"},
		{"no spread", entry(2000, 2000, 2000), 1000, "may", "no spread"},
	} {
		t.Run(c.name, func(t *testing.T) {
			judgeNeed([]*CapacityEntry{c.e}, c.need)
			if c.e.MeetsNeed != c.want || !strings.Contains(c.e.NeedWhy, c.holds) {
				t.Errorf("%s: %s, want %s with %q", c.e.MeetsNeed, c.e.NeedWhy, c.want, c.holds)
			}
		})
	}
}
