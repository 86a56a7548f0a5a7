package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestKill9CleanupResume kills tierbench with -9 in the second of two runs:
// `cleanup` marks the study interrupted in one pass, `run --resume` runs
// only the unfinished cell into the same study, and a second resume is
// refused as bad input.
func TestKill9CleanupResume(t *testing.T) {
	work := t.TempDir()
	ram, disk := ramDir(t), filepath.Join(work, "disk")
	resultsDir := filepath.Join(work, "results")
	text := fmt.Sprintf(tinyStudy, ram, disk)
	for old, new := range map[string]string{"duration: 600ms": "duration: 3s", "clients: [1, 4]": "clients: [1]",
		"durability: [sync, nosync]": "durability: [sync]"} {
		text = strings.Replace(text, old, new, 1)
	}
	st := writeStudy(t, work, text)
	cmd := exec.Command(binary, "run", st, "--results", resultsDir)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(errb.String(), "[2/2") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()

	status := func() (string, string, []string) {
		t.Helper()
		r := tierbench(t, "show", "--results", resultsDir, "--format", "json")
		var got showJSON
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("show json: %v\n%s%s", err, r.stdout, r.stderr)
		}
		var runs []string
		for _, run := range got.Runs {
			runs = append(runs, run.Placement+":"+run.Status)
		}
		return got.Study.ID, got.Study.Status, runs
	}
	id, s, runs := status()
	if s != "running" || len(runs) != 1 {
		t.Fatalf("after kill -9: study %s with runs %v; want running with the first run stored\n%s", s, runs, errb.String())
	}
	if r := tierbench(t, "run", "--resume", id, "--results", resultsDir); r.code != 2 || !strings.Contains(r.stderr, "cleanup") {
		t.Errorf("resume before cleanup: exit %d, want 2 asking for cleanup\n%s", r.code, r.stderr)
	}
	r := tierbench(t, "cleanup")
	if r.code != 0 || !strings.Contains(r.stdout, "study "+id) {
		t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, s, _ = status(); s != "interrupted" {
		t.Errorf("after cleanup the study is %s, want interrupted", s)
	}
	if r = tierbench(t, "cleanup"); !strings.Contains(r.stdout, "nothing to clean up") {
		t.Errorf("cleanup needed a second pass:\n%s", r.stdout)
	}

	r = tierbench(t, "run", "--resume", id, "--results", resultsDir)
	if r.code != 0 || !strings.Contains(r.stderr, "resuming: 1 of 2 runs are already ok") {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	// The round's two runs ran in a shuffled order.
	if gotID, s, runs := status(); gotID != id || s != "done" || strings.Join(slices.Sorted(slices.Values(runs)), " ") != "all-disk:ok wal-ram:ok" {
		t.Errorf("after resume: study %s %s runs %v; want %s done with both runs ok", gotID, s, runs, id)
	}
	if r = tierbench(t, "run", "--resume", id, "--results", resultsDir); r.code != 2 || !strings.Contains(r.stderr, "nothing to resume") {
		t.Errorf("resume of a done study: exit %d\n%s", r.code, r.stderr)
	}
}
