package stats

import (
	"testing"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/telemetry"
)

func TestJournalWrites(t *testing.T) {
	tel := &telemetry.Summary{Tiers: map[string]telemetry.TierSummary{
		"disk": {Device: "vda", DiskRates: telemetry.DiskRates{WriteIOPS: 2010, FlushesPerS: 900}},
		"ram":  {Device: ""},
	}}
	for _, tc := range []struct {
		name       string
		components map[string]string
		telemetry  *telemetry.Summary
		writes     float64
		tier       string
		ok         bool
	}{
		{"postgres wal", map[string]string{"data": "ram", "wal": "disk"}, tel, 2010, "disk", true},
		{"mariadb redo", map[string]string{"data": "ram", "redo": "disk"}, tel, 2010, "disk", true},
		{"journal on tmpfs has no device", map[string]string{"data": "disk", "wal": "ram"}, tel, 0, "ram", false},
		{"no journal component", map[string]string{"data": "disk"}, tel, 0, "", false},
		{"no telemetry", map[string]string{"wal": "disk"}, nil, 0, "", false},
		{"a commit log by its declared role", map[string]string{"store": "ram", "log": "disk"}, tel, 2010, "disk", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Studies stored before roles name their components; a newer
			// one carries what its engine declared.
			st := &results.Study{}
			if _, named := tc.components["store"]; named {
				st.Roles = map[string]engine.Role{"store": engine.RoleData, "log": engine.RoleCommitLog}
			}
			w, _, tier, ok := JournalWrites(st, results.Run{Components: tc.components, Telemetry: tc.telemetry})
			if w != tc.writes || tier != tc.tier || ok != tc.ok {
				t.Errorf("JournalWrites = %v, %q, %v; want %v, %q, %v", w, tier, ok, tc.writes, tc.tier, tc.ok)
			}
		})
	}
}
