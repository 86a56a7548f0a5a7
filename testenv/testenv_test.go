package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSkipFailsUnderNoSkip runs this package's helper test in a child
// process with and without NoSkip: skipped without, failed with.
func TestSkipFailsUnderNoSkip(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Skip(t, "fio is not installed")
		return
	}
	for _, tc := range []struct {
		noSkip string
		fails  bool
		want   string
	}{{"", false, "--- SKIP"}, {"1", true, "install it in scripts/setup.sh"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkipFailsUnderNoSkip$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", NoSkip+"="+tc.noSkip)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.fails || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s=%q: err %v, output:\n%s", NoSkip, tc.noSkip, err, out)
		}
	}
}
