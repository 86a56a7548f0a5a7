package telemetry

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/procfs"
)

// busyChild starts a shell that spins on the CPU; forever when n is 0,
// else for n iterations.
func busyChild(t *testing.T, n int) *exec.Cmd {
	t.Helper()
	script := "while :; do :; done"
	if n > 0 {
		script = "i=0; while [ $i -lt " + strconv.Itoa(n) + " ]; do i=$((i+1)); done"
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// procCPU is pid's user+system time in clock ticks.
func procCPU(t *testing.T, pid int) uint64 {
	t.Helper()
	text, err := readProc(procfs.Path(pid))
	if err != nil {
		t.Fatal(err)
	}
	p, err := procfs.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return p.UTime + p.STime
}

// checkLoadCPU asserts the load generator's figures are those of a process
// that worked: some CPU, and no more than its wall time on every core.
func checkLoadCPU(t *testing.T, lg *LoadGenSummary, name string, wall time.Duration) {
	t.Helper()
	if lg == nil {
		t.Fatal("no load generator summary")
	}
	if lg.Name != name || lg.SharesEngine {
		t.Errorf("load generator %+v: want name %q, not sharing the engine's process", lg, name)
	}
	if lg.CPUSeconds <= 0 || lg.CPUPct <= 0 {
		t.Errorf("load generator %+v: no CPU from a spinning child", lg)
	}
	if limit := wall.Seconds() * float64(runtime.NumCPU()); lg.CPUSeconds > limit {
		t.Errorf("load generator used %.3f s of CPU in %v wall on %d cores", lg.CPUSeconds, wall, runtime.NumCPU())
	}
	if lg.CPUPct > 100*float64(runtime.NumCPU()) {
		t.Errorf("load generator CPU %.0f%% of one core exceeds the host's %d cores", lg.CPUPct, runtime.NumCPU())
	}
}

// A process known when sampling starts is counted from /proc: from its
// first reading to the last, taken by Stop while it still runs.
func TestLoadGeneratorCPUFromProc(t *testing.T) {
	child := busyChild(t, 0)
	t0 := time.Now()
	s, err := Start(context.Background(), Config{LoadName: "spinner", LoadPIDs: []int{child.Process.Pid}, Interval: testInterval})
	if err != nil {
		t.Fatal(err)
	}
	// Let the child use a few clock ticks after the sampler's first
	// reading (whenever the scheduler lets it), then stop while it runs.
	start := procCPU(t, child.Process.Pid)
	for procCPU(t, child.Process.Pid) < start+3 {
		time.Sleep(10 * time.Millisecond)
	}
	rep := s.Stop()
	checkLoadCPU(t, rep.Summary.LoadGen, "spinner", time.Since(t0))
	lg := rep.Summary.LoadGen
	lg.PerOp(1000)
	if want := lg.CPUSeconds / 1000 * 1e6; !near(lg.CPUUsPerOp, want) {
		t.Errorf("CPU per op %.3f µs, want %.3f", lg.CPUUsPerOp, want)
	}
}

// A process that starts inside the window and exits before Stop is counted
// whole, from wait's figure: /proc has nothing of it by then.
func TestLoadGeneratorCPUOfExitedChild(t *testing.T) {
	t0 := time.Now()
	s, err := Start(context.Background(), Config{Interval: testInterval})
	if err != nil {
		t.Fatal(err)
	}
	child := busyChild(t, 200000)
	s.AddLoad("counter", child.Process.Pid)
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	ps := child.ProcessState
	s.LoadExited(child.Process.Pid, ps.UserTime()+ps.SystemTime())
	rep := s.Stop()
	checkLoadCPU(t, rep.Summary.LoadGen, "counter", time.Since(t0))
	if got, want := rep.Summary.LoadGen.CPUSeconds, (ps.UserTime() + ps.SystemTime()).Seconds(); got < want-1e-6 {
		t.Errorf("load generator CPU %.4f s, below the %.4f s wait reported", got, want)
	}
}

// tierbench driving its in-process engine is one process: the summary says
// so rather than split it.
func TestLoadGeneratorSharingTheEngineProcess(t *testing.T) {
	self := os.Getpid()
	s, err := Start(context.Background(), Config{PID: self, LoadName: "tierbench", LoadPIDs: []int{self}, Interval: testInterval})
	if err != nil {
		t.Fatal(err)
	}
	rep := s.Stop()
	if lg := rep.Summary.LoadGen; lg == nil || !lg.SharesEngine || lg.Name != "tierbench" {
		t.Errorf("load generator %+v: want tierbench sharing the engine's process", lg)
	}
}

func TestNoLoadGeneratorNoSummary(t *testing.T) {
	s, err := Start(context.Background(), Config{Interval: testInterval})
	if err != nil {
		t.Fatal(err)
	}
	if lg := s.Stop().Summary.LoadGen; lg != nil {
		t.Errorf("load generator %+v without any process watched", lg)
	}
}

// A thread of this process (a lane) is counted alone: /proc/TID/stat, which
// opens for any thread, would give the whole process's CPU, here twice the
// thread's, since a second thread spins beside it.
func TestLoadGeneratorCPUOfOneThread(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	spin := func(tid chan<- int) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}
	tids := make(chan int, 2)
	go spin(tids)
	go spin(tids)
	lane := <-tids
	<-tids
	threadCPU := func() uint64 {
		st, err := procfs.Read(procfs.ThreadPath(lane))
		if err != nil {
			t.Fatal(err)
		}
		return st.UTime + st.STime
	}
	before := threadCPU()
	s, err := Start(context.Background(), Config{LoadName: "tierbench", LoadThreads: []int{lane}, Interval: testInterval})
	if err != nil {
		t.Fatal(err)
	}
	for threadCPU() < before+5 {
		time.Sleep(10 * time.Millisecond)
	}
	rep := s.Stop()
	lg := rep.Summary.LoadGen
	if lg == nil {
		t.Fatal("no load generator summary for a watched thread")
	}
	ticks := float64(threadCPU() - before)
	if got := lg.CPUSeconds * s.clkTck; got <= 0 || got > ticks+0.5 {
		t.Errorf("the thread's CPU in the window: %.0f ticks, more than the %.0f it used from before Start to after Stop (or none)", got, ticks)
	}
}
