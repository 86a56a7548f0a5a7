package enginetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimeoutUnmounts runs a child test binary that mounts a tmpfs tier
// and is stuck past its -timeout of 4 s: the watchdog of Main unmounts
// it and removes the shared folder before the binary dies, which would
// have left both.
func TestTimeoutUnmounts(t *testing.T) {
	if out := os.Getenv("ENGINETEST_TIMEOUT_CHILD"); out != "" {
		dir := MountTmpfs(t, "1m")
		if err := os.WriteFile(out, []byte(dir), 0o644); err != nil {
			t.Fatal(err)
		}
		select {}
	}
	NeedRootForTiers(t)
	out := filepath.Join(t.TempDir(), "mounted")
	cmd := exec.Command(os.Args[0], "-test.run=^TestTimeoutUnmounts$", "-test.timeout=4s", "-test.v")
	cmd.Env = append(os.Environ(), "ENGINETEST_TIMEOUT_CHILD="+out)
	log, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(log), "testenv: undid tmpfs ") {
		t.Fatalf("child: %v, want it failed after the watchdog's unmount:\n%s", err, log)
	}
	dir, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the child mounted nothing: %v\n%s", err, log)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), " "+string(dir)+" ") {
		t.Errorf("%s is still mounted:\n%s", dir, log)
	}
	shared := filepath.Dir(string(dir))
	if _, err := os.Stat(shared); err == nil {
		t.Errorf("the child's shared folder %s is still there", shared)
		os.RemoveAll(shared)
	}
}
