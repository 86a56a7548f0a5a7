package lane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pair returns a connected pair of stream sockets, the first non-blocking;
// both are closed when the test ends.
func pair(t *testing.T) (mine, peer int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// readOne waits on the lane until fd has a byte and returns it.
func readOne(ctx context.Context, fd int) (byte, error) {
	var b [1]byte
	for {
		n, err := unix.Read(fd, b[:])
		switch {
		case err == unix.EAGAIN:
			if err := From(ctx).Wait(fd, false); err != nil {
				return 0, err
			}
		case err != nil:
			return 0, err
		case n == 0:
			return 0, errors.New("closed")
		default:
			return b[0], nil
		}
	}
}

// TestClientsShareALane runs 6 clients on 2 lanes, each echoing 50 bytes
// its peer sends one at a time, and checks every client saw its bytes in
// order: a client waiting on one socket never holds up the others.
func TestClientsShareALane(t *testing.T) {
	const clients, rounds = 6, 50
	ctx := context.Background()
	var fns []func(context.Context)
	var peers sync.WaitGroup
	got := make([][]byte, clients)
	errs := make([]error, clients)
	for i := range clients {
		mine, peer := pair(t)
		fns = append(fns, func(ctx context.Context) {
			if From(ctx) == nil {
				errs[i] = errors.New("no lane in the client's context")
				return
			}
			for range rounds {
				b, err := readOne(ctx, mine)
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = append(got[i], b)
				if _, err := unix.Write(mine, []byte{b}); err != nil {
					errs[i] = err
					return
				}
			}
		})
		// The peer sends the next byte only after the echo of the last:
		// the clients' round trips interleave on their lanes.
		peers.Go(func() {
			var echo [1]byte
			for r := range rounds {
				unix.Write(peer, []byte{byte(i*rounds + r)})
				if n, err := unix.Read(peer, echo[:]); n != 1 || err != nil {
					errs[i] = fmt.Errorf("peer %d: echo %d: %v", i, r, err)
					return
				}
			}
		})
	}
	if err := Run(ctx, 2, fns); err != nil {
		t.Fatal(err)
	}
	peers.Wait()
	for i := range clients {
		if errs[i] != nil {
			t.Errorf("client %d: %v", i, errs[i])
			continue
		}
		for r, b := range got[i] {
			if b != byte(i*rounds+r) {
				t.Errorf("client %d round %d got %d, want %d", i, r, b, i*rounds+r)
				break
			}
		}
	}
}

// threadLog is a ThreadWatch that keeps what it hears.
type threadLog struct {
	mu    sync.Mutex
	named []int
	cpu   map[int]time.Duration
}

func (w *threadLog) LaneThreads(tids []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.named = append(w.named, tids...)
}

func (w *threadLog) LaneThreadEnded(tid int, cpu time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cpu[tid] = cpu
}

// TestRunWatchedNamesThreads runs 4 clients on 2 lanes: both lanes' threads
// are named before any client runs, each client runs on one of them, and
// each thread's CPU time is given as its lane ends.
func TestRunWatchedNamesThreads(t *testing.T) {
	watch := &threadLog{cpu: map[int]time.Duration{}}
	var mu sync.Mutex
	ranOn := map[int]bool{}
	fns := make([]func(context.Context), 4)
	for i := range fns {
		fns[i] = func(context.Context) {
			mu.Lock()
			defer mu.Unlock()
			watch.mu.Lock()
			if len(watch.named) != 2 {
				t.Errorf("a client ran with %d threads named, want both", len(watch.named))
			}
			watch.mu.Unlock()
			ranOn[unix.Gettid()] = true
		}
	}
	if err := RunWatched(context.Background(), 2, fns, watch); err != nil {
		t.Fatal(err)
	}
	if len(watch.named) != 2 || watch.named[0] == watch.named[1] {
		t.Fatalf("threads named %v, want two", watch.named)
	}
	for tid := range ranOn {
		if !slices.Contains(watch.named, tid) {
			t.Errorf("a client ran on thread %d, not a lane's (%v)", tid, watch.named)
		}
	}
	for _, tid := range watch.named {
		if cpu, ok := watch.cpu[tid]; !ok || cpu <= 0 {
			t.Errorf("thread %d ended with CPU %s (told: %v)", tid, cpu, ok)
		}
	}
}

// TestCancelWakesWaiters cancels the context while clients wait on sockets
// that never become readable: every Wait returns the context's error and
// Run returns.
func TestCancelWakesWaiters(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got []error
	waiting := make(chan struct{}, 3)
	var fns []func(context.Context)
	for range 3 {
		mine, _ := pair(t)
		fns = append(fns, func(ctx context.Context) {
			waiting <- struct{}{}
			err := From(ctx).Wait(mine, false)
			mu.Lock()
			got = append(got, err)
			mu.Unlock()
		})
	}
	go func() {
		for range 3 {
			<-waiting
		}
		cancel()
	}()
	if err := Run(ctx, 1, fns); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d clients returned from Wait, want 3", len(got))
	}
	for _, err := range got {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Wait returned %v, want context.Canceled", err)
		}
	}
}

// TestMisuse: Wait outside a client, and on another client's socket.
func TestMisuse(t *testing.T) {
	ctx := context.Background()
	if err := (&Lane{}).Wait(0, false); err == nil || !strings.Contains(err.Error(), "outside a client") {
		t.Errorf("Wait outside a client: %v", err)
	}
	mine, peer := pair(t)
	unix.Write(peer, []byte{1})
	var second error
	// The lane starts its clients in order: the first waits on mine (and
	// is resumed once it is readable), then the second tries to.
	err := Run(ctx, 1, []func(context.Context){
		func(ctx context.Context) { From(ctx).Wait(mine, false) },
		func(ctx context.Context) { second = From(ctx).Wait(mine, false) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if second == nil || !strings.Contains(second.Error(), "belongs to another client") {
		t.Errorf("Wait on another client's socket: %v", second)
	}
	if err := Do(ctx, func(ctx context.Context) error { return errors.New("f's own") }); err == nil || err.Error() != "f's own" {
		t.Errorf("Do returned %v, want f's error", err)
	}
}

// TestYieldTakesTurns: clients that never wait but yield run in turns.
func TestYieldTakesTurns(t *testing.T) {
	var order []byte
	client := func(name byte) func(context.Context) {
		return func(ctx context.Context) {
			for range 3 {
				order = append(order, name)
				if err := From(ctx).Yield(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}
	if err := Run(context.Background(), 1, []func(context.Context){client('a'), client('b')}); err != nil {
		t.Fatal(err)
	}
	if string(order) != "ababab" {
		t.Errorf("order %q, want ababab", order)
	}
}

// TestSleep puts clients to sleep for different deadlines on one lane and
// checks each wakes at or after its own, in deadline order, and that a
// socket of a sleeping client turning readable does not wake it early.
func TestSleep(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	delays := []time.Duration{30 * time.Millisecond, 5 * time.Millisecond, 0, 15 * time.Millisecond}
	var order []int
	early := make([]error, len(delays))
	mine, peer := pair(t)
	var fns []func(context.Context)
	for i, d := range delays {
		fns = append(fns, func(ctx context.Context) {
			l := From(ctx)
			if i == 0 {
				// Own a socket, then sleep while its peer writes to it.
				if err := l.Wait(mine, false); err != nil {
					early[i] = err
					return
				}
				unix.Read(mine, make([]byte, 1))
				unix.Write(peer, []byte{1})
			}
			at := start.Add(d)
			if err := l.Sleep(at); err != nil {
				early[i] = err
			} else if now := time.Now(); now.Before(at) {
				early[i] = fmt.Errorf("woke %s before its time", at.Sub(now))
			}
			order = append(order, i)
		})
	}
	unix.Write(peer, []byte{1})
	if err := Run(ctx, 1, fns); err != nil {
		t.Fatal(err)
	}
	for i, err := range early {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	if want := []int{2, 1, 3, 0}; fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("woke in order %v, want %v (by deadline)", order, want)
	}
}

// TestCancelWakesSleepers cancels a lane whose clients sleep for an hour.
func TestCancelWakesSleepers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	errs := make([]error, 3)
	var fns []func(context.Context)
	for i := range errs {
		fns = append(fns, func(ctx context.Context) {
			errs[i] = From(ctx).Sleep(time.Now().Add(time.Hour))
		})
	}
	time.AfterFunc(10*time.Millisecond, cancel)
	if err := Run(ctx, 1, fns); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("client %d: Sleep = %v, want context.Canceled", i, err)
		}
	}
}
