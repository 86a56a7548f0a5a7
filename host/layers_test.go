package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/tierbench/tierbench"

// TestHostImportsOnlyHost keeps the host kit at the bottom: no package
// under host depends on a tierbench package outside host, directly or
// through another. A package's tests are not counted (they may use
// testenv).
func TestHostImportsOnlyHost(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		pkgs++
		for _, d := range strings.Fields(deps) {
			if strings.HasPrefix(d, module+"/") && d != module+"/host" && !strings.HasPrefix(d, module+"/host/") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
	if pkgs < 2 {
		t.Fatalf("go list found %d packages under host:\n%s", pkgs, out)
	}
}

// TestOnlyProcMakesProcessGroups checks that no non-test Go file outside
// host/proc starts a process group or session of its own (Setpgid,
// Setsid): every group is made, and so signalled and killed, one way.
func TestOnlyProcMakesProcessGroups(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the module's root: %v", root, err)
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "java") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == filepath.Join(root, "host", "proc") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, word := range []string{"Setpgid", "Setsid"} {
			if strings.Contains(string(b), word) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s sets %s: start the command through host/proc", rel, word)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
