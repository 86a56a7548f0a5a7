package engine

import (
	"os"
	"strings"
	"testing"
)

// TestPowerModelValues checks that a power model's crash value reads back
// as written, and that values naming no model, a model of another kind or
// a probability out of range are refused.
func TestPowerModelValues(t *testing.T) {
	for _, c := range []struct {
		name string
		keep float64
		want string
	}{{"", 0, "power"}, {PowerTorn, 0.5, "power:torn"}, {PowerSurvive, 0.3, "power:survive=0.3"}, {PowerReorder, 0.25, "power:reorder=0.25"}} {
		v := CrashValue(c.name, c.keep)
		if v != c.want {
			t.Errorf("CrashValue(%q, %v) = %q, want %q", c.name, c.keep, v, c.want)
		}
		k, name, keep, err := SplitCrash(v)
		if err != nil || k.Name != CrashPower || name != c.name || (name != "" && keep != c.keep) {
			t.Errorf("SplitCrash(%q) = %v, %q, %v, %v", v, k.Name, name, keep, err)
		}
	}
	for _, bad := range []string{"power:tron", "process:torn", "power:torn=1", "power:survive=0", "power:survive=x", "boom"} {
		if _, _, _, err := SplitCrash(bad); err == nil {
			t.Errorf("SplitCrash(%q) took it", bad)
		}
	}
}

// TestPowerModelLabels checks that docs/crash-runs.md's table of models
// says, for each model, what ModelLabel says it does not model: show, the
// report and the docs agree.
func TestPowerModelLabels(t *testing.T) {
	b, err := os.ReadFile("../docs/crash-runs.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, m := range PowerModels {
		name := "`power`"
		if m.Name != "" {
			name = "`{power: " + m.Name + "}`"
		}
		row := ""
		for _, line := range strings.Split(doc, "\n") {
			if strings.HasPrefix(line, "| "+name+" |") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("docs/crash-runs.md has no row for %s", name)
			continue
		}
		if !strings.HasSuffix(row, "| "+m.DoesNot+" |") {
			t.Errorf("docs/crash-runs.md's row for %s does not end with what it leaves out, %q:\n%s", name, m.DoesNot, row)
		}
		if label := ModelLabel(CrashValue(m.Name, DefaultKeep)); !strings.Contains(label, "not modelled: "+m.DoesNot) {
			t.Errorf("ModelLabel of %s = %q", name, label)
		}
	}
}
