package telemetry

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestSyncWaitIsToldApartByComponent syncs a file in one component's folder
// in a loop (the test process is the "engine") and expects the sampler to
// see waits on that component, none on another, and the scheduler figures
// of the process. It asserts behaviour only: how large the share is
// depends on the device and the machine's load.
func TestSyncWaitIsToldApartByComponent(t *testing.T) {
	root := t.TempDir()
	wal, data := filepath.Join(root, "wal"), filepath.Join(root, "data")
	for _, d := range []string{wal, data} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(wal, "000001.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	s, err := Start(context.Background(), Config{PID: os.Getpid(), Interval: 100 * time.Millisecond,
		Components: map[string]string{"wal": wal, "data": data}})
	if err != nil {
		t.Fatal(err)
	}
	var syncs atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := f.Write(buf); err != nil {
				t.Errorf("write: %v", err)
				return
			}
			if err := f.Sync(); err != nil {
				t.Errorf("fsync: %v", err)
				return
			}
			syncs.Add(1)
		}
	}()
	// Until the sampler has caught the WAL's fsync a few times, or 20 s.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		if s.syncSeen("wal") >= 3 {
			break
		}
	}
	close(stop)
	<-done
	r := s.Stop()
	sum := r.Summary
	t.Logf("%d fsyncs; %d samples; sync waits %+v; engine %+v", syncs.Load(), sum.SyncSamples, sum.SyncWait, sum.Engine)
	if sum.SyncSamples == 0 {
		t.Fatal("no samples")
	}
	if w := sum.SyncWait["wal"]; w.WaitPct <= 0 || w.MeanWaiting <= 0 {
		t.Errorf("wal: %+v, want waits seen (the test fsynced its file %d times)", w, syncs.Load())
	}
	if w, ok := sum.SyncWait["data"]; !ok || w.WaitPct != 0 {
		t.Errorf("data: %+v (listed %v), want listed with no wait", w, ok)
	}
	if sum.Engine.TreeCPUPct <= 0 {
		t.Errorf("tree cpu %v, want > 0 for a process that wrote and synced", sum.Engine.TreeCPUPct)
	}
}

// syncSeen is how many samples caught a wait on comp so far. It reads the
// sampler's counters while it runs, so only tests call it, and only to
// decide when enough was seen.
func (s *Sampler) syncSeen(comp string) int {
	return int(s.sync.seen(comp))
}

func TestComponentOfLongestFolder(t *testing.T) {
	root := t.TempDir()
	wal := filepath.Join(root, "wal")
	archive := filepath.Join(wal, "archive")
	if err := os.MkdirAll(archive, 0o755); err != nil {
		t.Fatal(err)
	}
	s := newSyncSampler(os.Getpid(), nil, map[string]string{"wal": wal, "wal_archive": archive, "data": filepath.Join(root, "walrus")})
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(wal, "1.log"), "wal"},
		{filepath.Join(archive, "1.log"), "wal_archive"},
		{filepath.Join(root, "walrus-not-a-folder-of-wal"), OtherComponent},
		{filepath.Join(root, "walrus", "x"), "data"},
	} {
		if err := os.MkdirAll(filepath.Dir(tc.file), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.componentOf(os.Getpid(), uint64(f.Fd())); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.file, got, tc.want)
		}
		f.Close()
	}
}

// TestSyncSamplerWatchesEveryEngineProcess: an engine of several
// processes that are not each other's children (Ceph's daemons) has the
// threads of each listed.
func TestSyncSamplerWatchesEveryEngineProcess(t *testing.T) {
	var pids []int
	for range 2 {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	s := newSyncSampler(pids[0], pids[1:], nil)
	s.refresh()
	seen := map[int]bool{}
	for _, th := range s.threads {
		seen[th.pid] = true
	}
	if !seen[pids[0]] || !seen[pids[1]] {
		t.Errorf("threads of processes %v; want both of %v", seen, pids)
	}
}
