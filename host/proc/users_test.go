package proc

import (
	"fmt"
	"os"
	"os/user"
	"testing"
)

// TestRemoveEmptyPerfData removes a JVM's perf-data folder only when it
// is empty, and names the user a process runs as.
func TestRemoveEmptyPerfData(t *testing.T) {
	name := fmt.Sprintf("tierbench-test-%d", os.Getpid())
	dir := "/tmp/hsperfdata_" + name
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(dir+"/123", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	RemoveEmptyPerfData(name)
	if _, err := os.Stat(dir + "/123"); err != nil {
		t.Fatalf("a running JVM's file went: %v", err)
	}
	if err := os.Remove(dir + "/123"); err != nil {
		t.Fatal(err)
	}
	RemoveEmptyPerfData(name)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the empty folder stays: %v", err)
	}
	if me, err := user.Current(); err != nil {
		t.Fatal(err)
	} else if got := OwnerName(os.Getpid()); got != me.Username {
		t.Errorf("OwnerName of this test = %q, want %q", got, me.Username)
	}
	if got := OwnerName(-1); got != "" {
		t.Errorf("OwnerName of no process = %q, want \"\"", got)
	}
}
