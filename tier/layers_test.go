package tier

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoEngineBelowTheTiers keeps the tiers below the engines: no package
// under tier depends on package engine or one under engine/, directly or
// through another (rbd tiers, which a Ceph cluster serves, live beside it
// in engine/ceph/rbdtier). A package's tests are not counted: a tier's
// test may check itself against a real engine.
func TestNoEngineBelowTheTiers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const engines = "github.com/tierbench/tierbench/engine"
	pkgs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		pkgs++
		for _, d := range strings.Fields(deps) {
			if d == engines || strings.HasPrefix(d, engines+"/") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
	if pkgs < 2 {
		t.Fatalf("go list found %d packages under tier:\n%s", pkgs, out)
	}
}
