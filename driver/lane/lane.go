// Package lane runs many clients on one goroutine, the way pgbench runs its
// connections on -j threads: each client is a coroutine (iter.Pull) that
// yields when its socket has nothing to read, and the lane waits for all its
// sockets in one epoll_wait.
//
// Why: a client goroutine that blocks in Go's netpoller costs, per round
// trip, a park, a wake-up by whichever thread polled, and the scheduler's
// spinning threads and timer wake-ups around it. Measured on tpcb against
// PostgreSQL (2 cores, 1 client): 21 context switches and about 300 µs of
// client CPU per transaction, against pgbench's 7 and 120 µs. On a lane a
// round trip is a write, an epoll_wait and a read, as in pgbench; on a
// lane of one client, whose socket blocks, a write and a read, as a
// client library's blocking connection (sysbench's).
//
// The sockets must be out of Go's netpoller (a connection taken over from
// its driver and closed there, keeping a duplicate descriptor), or every
// reply would also wake a thread polling for the runtime. A client on a lane
// must wait only through Wait (or Sleep): anything else that blocks (a
// channel, a mutex, a net.Conn) stops every client of the lane until it
// returns.
package lane

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/host/procfs"
)

// Lane is one goroutine's clients and the epoll instance they wait in.
type Lane struct {
	ctx   context.Context
	epfd  int
	wake  int // eventfd, readable once ctx is cancelled
	owner map[int32]*task
	cur   *task // the client running now, nil between clients
	live  int
	ready []*task // yielded without waiting: resumed before the next wait
	// clock is a timerfd armed for the earliest sleeper (Sleep), so an
	// open-loop client's arrival is timed to the nanosecond, where
	// epoll_wait's own timeout counts milliseconds.
	clock    int
	sleepers sleepers
	armed    time.Time // what clock is set to; zero when unset
	// solo is set on a lane of one client: its sockets block in read and
	// write instead of waiting in epoll (Socket), one system call fewer
	// per round trip, as a client library's blocking connection does.
	solo bool
	// raw is set when the lanes leave the Go runtime a P to spare: the
	// lane then waits in raw system calls, its epoll_wait and a solo
	// lane's reads and writes (see Socket.io for why).
	raw bool
}

type task struct {
	next    func() (struct{}, bool)
	stop    func()
	yield   func(struct{}) bool
	waiting bool
	done    bool
	sleep   uint64 // counts the task's Sleeps, to tell a stale sleeper
	asleep  bool   // waiting in Sleep: its socket's events do not wake it
}

type ctxKey struct{}

// From returns the lane the calling client runs on, or nil when it runs
// on a goroutine of its own.
func From(ctx context.Context) *Lane {
	l, _ := ctx.Value(ctxKey{}).(*Lane)
	return l
}

// ErrStopped is returned by Wait when the lane stops its clients.
var ErrStopped = errors.New("lane stopped")

// ThreadWatch hears of the OS threads that lanes run on, so that the
// clients' CPU time can be told from the rest of the process's (tierbench's
// telemetry, its progress line, the Go runtime's work for them).
type ThreadWatch interface {
	// LaneThreads names every lane's thread, in one call before any client
	// starts.
	LaneThreads(tids []int)
	// LaneThreadEnded gives a thread's whole CPU time as its lane ends,
	// before the thread runs anything else.
	LaneThreadEnded(tid int, cpu time.Duration)
}

// Run runs every fn to completion, spread round-robin over n lanes (one
// goroutine each; n is clamped to [1, len(fns)]). Each fn gets a context
// that carries its lane (From) and is cancelled with ctx. A fn must not
// panic: recover in it.
func Run(ctx context.Context, n int, fns []func(context.Context)) error {
	return RunWatched(ctx, n, fns, nil)
}

// RunWatched is Run with each lane locked to an OS thread of its own for
// its whole life, told to watch (when not nil). A lane's clients run as
// coroutines on its goroutine and, past their first operation's set-up,
// wait in system calls rather than in Go's scheduler, so the lock costs
// nothing measurable (docs/drivers.md) and the thread's CPU time is
// theirs.
func RunWatched(ctx context.Context, n int, fns []func(context.Context), watch ThreadWatch) error {
	n = max(1, min(n, len(fns)))
	groups := make([][]func(context.Context), n)
	for i, fn := range fns {
		groups[i%n] = append(groups[i%n], fn)
	}
	lanes := make([]*Lane, n)
	for i := range lanes {
		l, err := open(ctx)
		if err != nil {
			for _, o := range lanes[:i] {
				o.close()
			}
			return err
		}
		l.raw = n < runtime.GOMAXPROCS(0)
		lanes[i] = l
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	tids, named := make(chan int, n), make(chan struct{})
	for i, l := range lanes {
		wg.Go(func() {
			defer l.close()
			if watch != nil {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				tid := unix.Gettid()
				tids <- tid
				<-named
				defer func() { watch.LaneThreadEnded(tid, procfs.ThreadCPU()) }()
			}
			errs[i] = l.run(groups[i])
		})
	}
	if watch != nil {
		all := make([]int, n)
		for i := range all {
			all[i] = <-tids
		}
		watch.LaneThreads(all)
		close(named)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// epollWait waits in the lane's epoll, in a raw system call if l.raw: a
// signal, the runtime's preemption among them, ends it with EINTR
// (epoll_wait is never restarted, signal(7)).
func (l *Lane) epollWait(events []unix.EpollEvent, timeout int) (int, error) {
	if !l.raw {
		return unix.EpollWait(l.epfd, events, timeout)
	}
	// epoll_pwait with no signal mask is epoll_wait, which arm64 lacks.
	n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(timeout), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// Do runs f alone on a lane of its own and returns its error: one call on
// a client that waits through Wait, outside a driven run.
func Do(ctx context.Context, f func(context.Context) error) error {
	var err error
	if lerr := Run(ctx, 1, []func(context.Context){func(ctx context.Context) { err = f(ctx) }}); lerr != nil {
		return lerr
	}
	return err
}

func open(ctx context.Context) (*Lane, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("lane: epoll_create: %w", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("lane: eventfd: %w", err)
	}
	clock, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		unix.Close(wake)
		unix.Close(epfd)
		return nil, fmt.Errorf("lane: timerfd_create: %w", err)
	}
	l := &Lane{epfd: epfd, wake: wake, clock: clock, owner: map[int32]*task{}}
	for _, fd := range []int{wake, clock} {
		if err := l.ctl(unix.EPOLL_CTL_ADD, fd, unix.EPOLLIN); err != nil {
			l.close()
			return nil, err
		}
	}
	l.ctx = context.WithValue(ctx, ctxKey{}, l)
	return l, nil
}

func (l *Lane) close() {
	unix.Close(l.clock)
	unix.Close(l.wake)
	unix.Close(l.epfd)
}

func (l *Lane) ctl(op, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(l.epfd, op, fd, &ev); err != nil {
		return fmt.Errorf("lane: epoll_ctl on descriptor %d: %w", fd, err)
	}
	return nil
}

// run starts every client, then resumes each when its socket is ready,
// until all have returned.
func (l *Lane) run(fns []func(context.Context)) error {
	stopWake := context.AfterFunc(l.ctx, func() {
		var one = [8]byte{1}
		unix.Write(l.wake, one[:])
	})
	defer stopWake()
	tasks := make([]*task, len(fns))
	for i, fn := range fns {
		t := &task{}
		t.next, t.stop = iter.Pull(func(yield func(struct{}) bool) {
			t.yield = yield
			fn(l.ctx)
		})
		tasks[i] = t
	}
	defer func() {
		for _, t := range tasks {
			t.stop()
		}
	}()
	l.live = len(tasks)
	l.solo = len(tasks) == 1
	for _, t := range tasks {
		l.resume(t)
	}
	events := make([]unix.EpollEvent, 64)
	cancelled := false
	for l.live > 0 {
		timeout := -1
		if len(l.ready) > 0 {
			timeout = 0 // poll, then resume the yielded
		}
		n, err := l.epollWait(events, timeout)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("lane: epoll_wait: %w", err)
		}
		for _, ev := range events[:n] {
			if int(ev.Fd) == l.clock {
				if err := l.fire(); err != nil {
					return err
				}
				continue
			}
			if int(ev.Fd) == l.wake {
				if !cancelled {
					cancelled = true
					l.ctl(unix.EPOLL_CTL_DEL, l.wake, 0)
					for _, t := range tasks {
						if t.waiting {
							l.resume(t)
						}
					}
				}
				continue
			}
			switch t := l.owner[ev.Fd]; {
			case t == nil:
			case t.waiting && !t.asleep:
				l.resume(t)
			case t.done:
				// A finished client's socket that turned readable (the
				// server closed it) would wake every wait from now on.
				l.Release(int(ev.Fd))
			}
		}
		ready := l.ready
		l.ready = nil
		for _, t := range ready {
			l.resume(t)
		}
	}
	return nil
}

// resume runs t until it waits again or returns.
func (l *Lane) resume(t *task) {
	l.cur, t.waiting = t, false
	_, alive := t.next()
	l.cur = nil
	if !alive {
		t.done = true
		l.live--
	}
}

// Wait yields the calling client until fd can be read (or written, with
// write), and returns ctx's error once the lane's context is cancelled.
// The first Wait on fd adds it to the lane's epoll; Release removes it.
func (l *Lane) Wait(fd int, write bool) error {
	t := l.cur
	if t == nil {
		return errors.New("lane: Wait called outside a client of the lane")
	}
	if err := l.ctx.Err(); err != nil {
		return err
	}
	key := int32(fd)
	events := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if write {
		events |= unix.EPOLLOUT
	}
	switch o := l.owner[key]; {
	case o == nil:
		if err := l.ctl(unix.EPOLL_CTL_ADD, fd, events); err != nil {
			return err
		}
		l.owner[key] = t
	case o != t:
		return fmt.Errorf("lane: descriptor %d belongs to another client", fd)
	case write:
		if err := l.ctl(unix.EPOLL_CTL_MOD, fd, events); err != nil {
			return err
		}
		defer l.ctl(unix.EPOLL_CTL_MOD, fd, unix.EPOLLIN|unix.EPOLLRDHUP)
	}
	t.waiting = true
	if !t.yield(struct{}{}) {
		return ErrStopped
	}
	return l.ctx.Err()
}

// Sleep yields the calling client until the monotonic clock passes at
// (at once if it has), and returns ctx's error once the lane's context is
// cancelled: an open-loop client's wait for its next arrival. Its socket
// turning readable meanwhile does not wake it (between request and reply
// nothing arrives unasked; a server that closed the socket keeps it
// readable, and the lane polls it until the sleep ends).
func (l *Lane) Sleep(at time.Time) error {
	t := l.cur
	if t == nil {
		return errors.New("lane: Sleep called outside a client of the lane")
	}
	if err := l.ctx.Err(); err != nil {
		return err
	}
	if !time.Now().Before(at) {
		return nil
	}
	t.sleep++
	heap.Push(&l.sleepers, sleeper{at: at, t: t, n: t.sleep})
	if err := l.arm(); err != nil {
		return err
	}
	t.waiting, t.asleep = true, true
	alive := t.yield(struct{}{})
	t.asleep = false
	if !alive {
		return ErrStopped
	}
	return l.ctx.Err()
}

// sleeper is a task in Sleep; n is its Sleep's count, since a task woken
// by cancellation leaves its entry behind.
type sleeper struct {
	at time.Time
	t  *task
	n  uint64
}

// sleepers is a min-heap on at (container/heap).
type sleepers []sleeper

func (s sleepers) Len() int           { return len(s) }
func (s sleepers) Less(i, j int) bool { return s[i].at.Before(s[j].at) }
func (s sleepers) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s *sleepers) Push(x any)        { *s = append(*s, x.(sleeper)) }
func (s *sleepers) Pop() any {
	old := *s
	x := old[len(old)-1]
	*s = old[:len(old)-1]
	return x
}

// arm sets the clock to the earliest sleeper's time, if it changed.
func (l *Lane) arm() error {
	if len(l.sleepers) == 0 || l.sleepers[0].at.Equal(l.armed) {
		return nil
	}
	l.armed = l.sleepers[0].at
	d := max(time.Until(l.armed), time.Nanosecond) // 0 would disarm it
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(l.clock, 0, &spec, nil); err != nil {
		return fmt.Errorf("lane: timerfd_settime: %w", err)
	}
	return nil
}

// fire resumes every sleeper whose time has come, then re-arms the clock.
func (l *Lane) fire() error {
	var buf [8]byte
	unix.Read(l.clock, buf[:]) // the expiry count; EAGAIN if re-armed since
	l.armed = time.Time{}
	now := time.Now()
	for len(l.sleepers) > 0 && !l.sleepers[0].at.After(now) {
		s := heap.Pop(&l.sleepers).(sleeper)
		if s.t.waiting && s.t.sleep == s.n && !s.t.done {
			l.resume(s.t)
		}
	}
	return l.arm()
}

// Yield lets the lane's other clients run before the calling one goes on:
// for a client that would otherwise not wait at all (its connection broke
// and every operation fails at once), which would keep the others from
// ever running.
func (l *Lane) Yield() error {
	t := l.cur
	if t == nil {
		return errors.New("lane: Yield called outside a client of the lane")
	}
	l.ready = append(l.ready, t)
	if !t.yield(struct{}{}) {
		return ErrStopped
	}
	return l.ctx.Err()
}

// Release removes fd from the lane's epoll; call it before closing fd.
func (l *Lane) Release(fd int) {
	if _, ok := l.owner[int32(fd)]; ok {
		delete(l.owner, int32(fd))
		l.ctl(unix.EPOLL_CTL_DEL, fd, 0)
	}
}
