package report

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/tier"
	"github.com/tierbench/tierbench/tier/profile"
)

// TestFidelityBesideTheTier: a tier that emulated a profile and was
// probed shows each figure asked against achieved, in show's tier list
// and in the report's tier table, beside what it cannot represent.
func TestFidelityBesideTheTier(t *testing.T) {
	rows := []profile.Row{
		{Figure: "fsync p50 (µs, QD1)", Asked: 2000, Achieved: 1958, Error: -0.021},
		{Figure: "read p50 (µs, QD1)", Asked: 9, Achieved: 11, Error: 0.22},
	}
	st := &results.Study{Placements: []results.Placement{{Name: "a"}}, Durability: []string{"sync"}, Clients: []int{1},
		Tiers: map[string]tier.Info{"ssd": {Name: "ssd", Path: "/mnt/ssd", FSType: "fuse.tierbench-latency", Device: "tmpfs",
			Durable: true, Emulated: true, Emulation: "profile optane-p4800x, latency (FUSE): read p50 9µs; profile optane-p4800x is faster than the FUSE layer's floor",
			Profile: "optane-p4800x", Fidelity: rows}}}
	var out strings.Builder
	if err := Show(&out, st, nil); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(out.String()), " ")
	want := "ssd: profile optane-p4800x asked/achieved: fsync p50 (µs, QD1) 2000/1958 (-2%), read p50 (µs, QD1) 9.00/11.0 (+22%)"
	if !strings.Contains(text, want) {
		t.Errorf("show lacks %q:\n%s", want, out.String())
	}
	if !strings.Contains(text, "faster than the FUSE layer's floor") {
		t.Errorf("show does not say what the profile cannot represent:\n%s", out.String())
	}
	if got := fidelityText(st.Tiers["ssd"]); !strings.Contains(got, "(+22%)") {
		t.Errorf("the report's tier cell: %q", got)
	}
}
