package emulate

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// passthrough reports whether reads and writes can bypass the server.
func (l Latency) passthrough() bool { return l.Read == 0 && l.Write == 0 }

// fsyncFdatasync is FUSE_FSYNC_FDATASYNC: the kernel sets it in FsyncIn's
// flags when the caller used fdatasync(2) rather than fsync(2).
const fsyncFdatasync = 1

// delays is what every node of one mount shares: the asked latencies and
// the layer's own cost, which calibration sets while the mount serves.
type delays struct {
	read, write time.Duration
	// directWrites: only direct and synchronous writes wait (Latency).
	directWrites bool
	// spread is each operation's log-normal sigma (0: a constant wait).
	readSpread, writeSpread, fsyncSpread float64
	// fsync is atomic because calibration may stand in a target of its own
	// when no fsync latency was asked for.
	fsync atomic.Int64
	// overhead is the layer's own cost around a sleep (the round trip and
	// the sleep's overshoot), taken off every wait.
	overhead atomic.Int64
	// roundTrip is the layer's cost with no sleep (calibration measures
	// it): a wait too short to sleep through spins for what is left of
	// the target after it.
	roundTrip atomic.Int64
	// atOnce are the sync times above one sync in flight (Latency's
	// FsyncAtOnce), and syncing counts the syncs in flight now.
	atOnce  []syncPoint
	syncing atomic.Int32
}

// syncPoint is a SyncsAtOnce as a draw takes it: a median and a sigma.
type syncPoint struct {
	syncs  float64
	median time.Duration
	spread float64
}

func newDelays(l Latency) *delays {
	d := &delays{read: l.Read, write: l.Write, directWrites: l.DirectWrites,
		readSpread: sigma(l.Read, l.ReadP99), writeSpread: sigma(l.Write, l.WriteP99), fsyncSpread: sigma(l.Fsync, l.FsyncP99)}
	d.fsync.Store(int64(l.Fsync))
	for _, a := range l.FsyncAtOnce {
		if a.Syncs > 1 && a.P50 > 0 {
			d.atOnce = append(d.atOnce, syncPoint{float64(a.Syncs), a.P50, sigma(a.P50, a.P99)})
		}
	}
	return d
}

// fsyncTarget is the median and sigma of a sync's time with n syncs in
// flight, itself included: the one-sync figures at 1, the measured
// points' where n is one, in between interpolated on log-log scales (a
// queue's time grows as a power of its depth between two points), and
// the last point's beyond it: the profile says nothing past what it
// measured, so nothing is made up there.
func (d *delays) fsyncTarget(n int) (time.Duration, float64) {
	lo := syncPoint{1, time.Duration(d.fsync.Load()), d.fsyncSpread}
	if n <= 1 || len(d.atOnce) == 0 || lo.median <= 0 {
		return lo.median, lo.spread
	}
	x := float64(n)
	for _, hi := range d.atOnce {
		if x <= hi.syncs {
			f := math.Log(x/lo.syncs) / math.Log(hi.syncs/lo.syncs)
			median := math.Exp(math.Log(float64(lo.median)) + f*(math.Log(float64(hi.median))-math.Log(float64(lo.median))))
			return time.Duration(median), lo.spread + f*(hi.spread-lo.spread)
		}
		lo = hi
	}
	return lo.median, lo.spread
}

// beginSync counts a sync in flight and draws its whole time for the
// syncs in flight with it; end, called once the caller's wait is over,
// counts it out.
func (d *delays) beginSync() (target time.Duration, end func()) {
	n := d.syncing.Add(1)
	median, spread := d.fsyncTarget(int(n))
	return draw(median, spread), func() { d.syncing.Add(-1) }
}

// timedSync is timed for a sync: its time depends on the syncs in flight.
func (d *delays) timedSync(op func()) {
	target, end := d.beginSync()
	defer end()
	start := time.Now()
	op()
	d.finish(target, time.Since(start))
}

// finish waits what is left of target once the backing folder has taken
// spent, less the layer's own cost. A wait shorter than that cost, which
// a sleep would overshoot (a wake-up alone takes tens of µs on a VM),
// spins instead for what is left after the layer's round trip: so a
// target between the round trip and the sleep's cost (a 50-100 µs SSD
// read) is met rather than cut to the round trip.
func (d *delays) finish(target, spent time.Duration) {
	if target <= 0 {
		return
	}
	if w := target - spent - time.Duration(d.overhead.Load()); w > 0 {
		pause(w)
		return
	}
	spin(target - spent - time.Duration(d.roundTrip.Load()))
}

// spinning counts the operations spinning now; at most maxSpinning spin
// at once (half the CPUs, at least one), and the others sleep, so that a
// deep queue of short waits (QD32) does not take every CPU from the
// application and the layer.
var (
	spinning    atomic.Int32
	maxSpinning = int32(max(runtime.NumCPU()/2, 1))
)

// spin waits d without sleeping, or sleeps when enough others spin; only
// for waits shorter than a sleep's own cost, so it burns at most that
// much CPU per operation.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	if spinning.Add(1) > maxSpinning {
		spinning.Add(-1)
		pause(d)
		return
	}
	defer spinning.Add(-1)
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// timed runs op and waits the rest of a draw around target (spread is
// the operation's sigma).
func (d *delays) timed(target time.Duration, spread float64, op func()) {
	target = draw(target, spread)
	start := time.Now()
	op()
	d.finish(target, time.Since(start))
}

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// sigma is the log-normal sigma that puts the 99th percentile of draws
// with median p50 at p99; 0 (a constant) when p99 is not above p50.
func sigma(p50, p99 time.Duration) float64 {
	if p50 <= 0 || p99 <= p50 {
		return 0
	}
	return math.Log(float64(p99)/float64(p50)) / z99
}

// draw is one operation's time: target itself, or a log-normal draw with
// median target, capped at 100 times the median so that one draw from far
// in the tail cannot stall a run.
func draw(target time.Duration, spread float64) time.Duration {
	if spread == 0 || target <= 0 {
		return target
	}
	f := math.Min(math.Exp(spread*rand.NormFloat64()), 100)
	return time.Duration(float64(target) * f)
}

// pause waits d.
//
// It sleeps the OS thread in clock_nanosleep(2) until an absolute deadline,
// with the thread's timer slack at its minimum, rather than in time.Sleep:
// the Go timer wakes up about 0.15 ms late on this kind of machine, and the
// kernel's default 50 µs timer slack adds to every emulated operation. The
// handler already holds a thread for the backing syscall, so this costs no
// more threads than go-fuse uses anyway. (The clock_nanosleep system call
// also tells these waits from the Go runtime's own nanosleeps in
// /proc/PID/task/TID/syscall, which the tests use.)
//
// It deliberately ignores FUSE interrupts: the kernel sends one whenever the
// calling thread gets any signal (Go programs get SIGURG for preemption all
// the time), and answering EINTR would turn a signal into a failed fsync,
// which PostgreSQL treats as a reason to PANIC. A real device does not fail
// an I/O because the caller got a signal.
func pause(d time.Duration) {
	if d <= 0 {
		return
	}
	// The slack is per thread, and goroutines move between threads: set it
	// on the thread that is about to sleep.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		time.Sleep(d)
		return
	}
	deadline := unix.NsecToTimespec(now.Nano() + int64(d))
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &deadline, nil) == unix.EINTR {
	}
}

// SyncTimer makes syncs take what a Latency's Fsync and FsyncP99 ask, for
// a delay layer other than the FUSE mount (package syncdelay, which
// delays the fsync system call itself): the same draws and the same
// whole-time rule, the backing sync's own time included, less that
// layer's own overhead around each wait.
type SyncTimer struct{ d *delays }

// NewSyncTimer times syncs at l's fsync latency; overhead is what the
// layer costs around a wait (its round trip and the sleep's overshoot),
// roundTrip its cost without one (see delays.finish).
func NewSyncTimer(l Latency, overhead, roundTrip time.Duration) *SyncTimer {
	d := newDelays(Latency{Fsync: l.Fsync, FsyncP99: l.FsyncP99, FsyncAtOnce: l.FsyncAtOnce})
	d.overhead.Store(int64(overhead))
	d.roundTrip.Store(int64(roundTrip))
	return &SyncTimer{d}
}

// Time runs op, a sync, and waits the rest of one draw; started is when
// the caller asked for it (the layer's own work before op counts).
func (t *SyncTimer) Time(started time.Time, op func()) {
	target, end := t.Begin()
	defer end()
	op()
	t.Finish(target, time.Since(started))
}

// Begin counts a sync in flight and draws its whole time for the syncs in
// flight with it (Latency.FsyncAtOnce); call end once its wait is over.
func (t *SyncTimer) Begin() (target time.Duration, end func()) { return t.d.beginSync() }

// Draw is one sync's whole time, as if it were the only one in flight.
func (t *SyncTimer) Draw() time.Duration {
	return draw(time.Duration(t.d.fsync.Load()), t.d.fsyncSpread)
}

// Finish waits what is left of target once spent has passed, less the
// layer's own cost: it sleeps, spins for less than that cost, or returns.
func (t *SyncTimer) Finish(target, spent time.Duration) { t.d.finish(target, spent) }

// Sleeps reports whether Finish(target, spent) would sleep, rather than
// spin or return at once: a caller that must not block for long (the
// supervisor's receiving loop) hands such a wait to a goroutine.
func (t *SyncTimer) Sleeps(target, spent time.Duration) bool {
	return target-spent-time.Duration(t.d.overhead.Load()) > 0
}

// SleepOvershootAt is how late a pause of d wakes up here, the median of
// a few: a delay layer's share of overhead that is not its round trip. It
// depends on d: on a VM an idle vCPU first polls, then halts, so a long
// sleep wakes later than a short one (here 22 µs at 30-60 µs, 31 µs at
// 100 µs, 40 µs from 150 µs on); measure it at the waits to be made.
func SleepOvershootAt(d time.Duration) time.Duration { return overshoot(max(d, time.Microsecond), 15) }

// overshoot is the median of how late n pauses of d wake up.
func overshoot(d time.Duration, n int) time.Duration {
	late := make([]time.Duration, n)
	for i := range late {
		start := time.Now()
		pause(d)
		late[i] = time.Since(start) - d
	}
	slices.Sort(late)
	return max(late[n/2], 0)
}
