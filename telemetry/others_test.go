package telemetry

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/tierbench/tierbench/testenv"
)

// TestOthersSeeABusyNeighbour: a busy loop outside tierbench's processes
// counts as another process's load, and the run it ran beside is
// disturbed; the same loop as a child of tierbench's is tierbench's own.
func TestOthersSeeABusyNeighbour(t *testing.T) {
	neighbour := testenv.BusyNeighbour(t)[0]
	own := exec.Command("sh", "-c", "while :; do :; done")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { own.Process.Kill(); own.Wait() }()

	s, err := Start(context.Background(), Config{Others: true, Interval: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	o := s.Stop().Summary.Others
	if o == nil {
		t.Fatal("no others' summary")
	}
	t.Logf("others: %.0f%% of a core, %.0f%% of the host, %.1f MiB/s read, %.1f MiB/s written, top %+v", o.CPUPct, o.HostPct, o.ReadMBps, o.WriteMBps, o.Top)
	// Every other process that ran is followed, the top three shown; on
	// a busy machine the neighbour need not be among those.
	found := false
	for k, p := range s.others.byProc {
		found = found || k.pid == neighbour && s.others.byProcCPU[k] > 0
		if k.pid == own.Process.Pid {
			t.Errorf("tierbench's own child %d counted as another process: %+v", k.pid, p)
		}
	}
	if !found {
		t.Errorf("the busy neighbour %d is not counted: %+v", neighbour, o.Top)
	}
	if disturbed, why := o.Disturbed(); !disturbed {
		t.Errorf("a busy neighbour did not disturb the window: %v %q", disturbed, why)
	}
}
