package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTemplate checks that a template is built once for goroutines that
// ensure it together, that a failed build leaves no marker and is redone,
// and that a template folder without its marker (a build that was killed)
// is thrown away and built again.
func TestTemplate(t *testing.T) {
	ctx := context.Background()
	var builds atomic.Int32
	fail := errors.New("bootstrap failed")
	failNext := true
	tmpl := Template{Dir: filepath.Join(t.TempDir(), "scratch", "tmpl"), Build: func(ctx context.Context, dir string) (string, error) {
		builds.Add(1)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		if failNext {
			failNext = false
			return "", fail
		}
		return "v1", os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644)
	}}
	if _, err := tmpl.Ensure(ctx); !errors.Is(err, fail) {
		t.Fatalf("failed build: %v", err)
	}
	if _, err := os.Stat(tmpl.Dir + ".done"); err == nil {
		t.Error("marker written after a failed build")
	}
	var wg sync.WaitGroup
	versions := make([]string, 4)
	for i := range versions {
		wg.Go(func() {
			v, err := tmpl.Ensure(ctx)
			if err != nil {
				t.Error(err)
			}
			versions[i] = v
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 2 {
		t.Errorf("%d builds, want 2 (the failed one, then one for four Ensures)", n)
	}
	for _, v := range versions {
		if v != "v1" {
			t.Errorf("versions %q, want v1 from each", versions)
		}
	}

	// A build killed half way: its folder, no marker.
	if err := os.Remove(tmpl.Dir + ".done"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmpl.Dir, "half"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := tmpl.Ensure(ctx); err != nil || v != "v1" || builds.Load() != 3 {
		t.Errorf("after a killed build: %q, %v, %d builds", v, err, builds.Load())
	}
	if _, err := os.Stat(filepath.Join(tmpl.Dir, "half")); err == nil {
		t.Error("the killed build's folder was kept")
	}
}

// TestTemplateProcesses checks that two processes never build one
// template at once: both run this test binary's helper, which builds
// slowly and logs when it begins and ends; the log must show one build.
func TestTemplateProcesses(t *testing.T) {
	dir := t.TempDir()
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestTemplateHelperProcess$")
		cmds[i].Env = append(os.Environ(), "TIERBENCH_TEMPLATE_TEST="+dir)
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "builds.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "begin") || !strings.HasPrefix(lines[1], "end") {
		t.Errorf("builds log %q: want one build, begun and ended", b)
	}
}

// TestTemplateHelperProcess is TestTemplateProcesses's other process.
func TestTemplateHelperProcess(t *testing.T) {
	dir := os.Getenv("TIERBENCH_TEMPLATE_TEST")
	if dir == "" {
		t.Skip("run by TestTemplateProcesses")
	}
	log := func(what string) {
		f, err := os.OpenFile(filepath.Join(dir, "builds.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "%s-%d\n", what, os.Getpid())
		f.Close()
	}
	tmpl := Template{Dir: filepath.Join(dir, "tmpl"), Build: func(ctx context.Context, dir string) (string, error) {
		log("begin")
		// Long enough for the other process to reach the lock meanwhile.
		time.Sleep(300 * time.Millisecond)
		log("end")
		return "v", os.Mkdir(dir, 0o755)
	}}
	if _, err := tmpl.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
}
