package procfs

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SelfCPU is the calling process's user and system CPU time so far, from
// getrusage(2): microseconds, where /proc/self/stat counts clock ticks
// (10 ms), too coarse for a benchmark's CPU per operation.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0 // RUSAGE_SELF with a valid pointer cannot fail
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ThreadCPU is the calling OS thread's CPU time since it started
// (CLOCK_THREAD_CPUTIME_ID, in ns); 0 if it cannot be read. Meaningful to
// a goroutine locked to its thread (runtime.LockOSThread).
func ThreadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
