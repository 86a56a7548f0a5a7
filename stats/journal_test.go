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
		{"a commit log on a device", map[string]string{"store": "ram", "log": "disk"}, tel, 2010, "disk", true},
		{"a commit log on tmpfs has no device", map[string]string{"store": "disk", "log": "ram"}, tel, 0, "ram", false},
		{"no commit log", map[string]string{"store": "disk"}, tel, 0, "", false},
		{"no telemetry", map[string]string{"log": "disk"}, nil, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The roles an engine declared; those of a study stored before
			// roles are results' (RoleOf).
			st := &results.Study{Roles: map[string]engine.Role{"store": engine.RoleData, "log": engine.RoleCommitLog}}
			w, _, tier, ok := JournalWrites(st, results.Run{Components: tc.components, Telemetry: tc.telemetry})
			if w != tc.writes || tier != tc.tier || ok != tc.ok {
				t.Errorf("JournalWrites = %v, %q, %v; want %v, %q, %v", w, tier, ok, tc.writes, tc.tier, tc.ok)
			}
		})
	}
}
