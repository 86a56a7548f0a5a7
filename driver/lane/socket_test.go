package lane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
)

// echoServer serves connections on 127.0.0.1 that answer each 4 bytes
// with them and a '!'; "mute" gets no reply, and "quit" closes the
// connection. It returns a dialler of sockets taken out of Go's netpoller.
func echoServer(t *testing.T) (dial func() *Socket) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 4)
				for {
					if _, err := io.ReadFull(c, b); err != nil || string(b) == "quit" {
						return
					}
					if string(b) == "mute" {
						io.Copy(io.Discard, c)
						return
					}
					c.Write(append(b, '!'))
				}
			}()
		}
	}()
	return func() *Socket {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close() // the socket lives on in the Socket
		s, err := TakeSocket(nc.(*net.TCPConn), "echo")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// roundTrip writes msg (4 bytes) and reads its echo.
func roundTrip(l *Lane, s *Socket, msg string) error {
	if err := s.Write(l, []byte(msg)); err != nil {
		return err
	}
	for len(s.Buffered()) < 5 {
		if err := s.Fill(l, 5); err != nil {
			return err
		}
	}
	if got := string(s.Buffered()[:5]); got != msg+"!" {
		return fmt.Errorf("read %q, want %s!", got, msg)
	}
	s.Consume(5)
	return nil
}

// TestSocket makes a round trip through a Socket taken from a Go
// connection, and checks that a peer which closes is reported as a lost
// connection (io.EOF inside), which engines read as "add the server's
// log".
func TestSocket(t *testing.T) {
	s := echoServer(t)()
	err := Do(context.Background(), func(ctx context.Context) error {
		l := From(ctx)
		defer s.Close(l)
		if err := roundTrip(l, s, "ping"); err != nil {
			return err
		}
		if err := s.Write(l, []byte("quit")); err != nil {
			return err
		}
		if err := s.Fill(l, 1); !errors.Is(err, io.EOF) {
			t.Errorf("after the peer closed: %v; want an error wrapping io.EOF", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSocketLanes runs round trips from one client alone on its lane (its
// socket blocks in read) and from two sharing a lane (they wait in
// epoll), and checks that a client alone on its lane, waiting for a reply
// that never comes, returns once the run is cancelled, in raw system calls
// or not.
func TestSocketLanes(t *testing.T) {
	socket := echoServer(t)
	for _, n := range []int{1, 2} {
		errs := make([]error, n)
		fns := make([]func(context.Context), n)
		for i := range fns {
			s := socket()
			fns[i] = func(ctx context.Context) {
				defer s.Close(From(ctx))
				for range 100 {
					if errs[i] = roundTrip(From(ctx), s, fmt.Sprintf("msg%d", i)); errs[i] != nil {
						return
					}
				}
				if s.blocking != (n == 1) {
					errs[i] = fmt.Errorf("socket blocking %v on a lane of %d", s.blocking, n)
				}
			}
		}
		if err := Run(context.Background(), 1, fns); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(errs...); err != nil {
			t.Errorf("%d clients on a lane: %v", n, err)
		}
	}

	// With a P to spare the solo client waits in raw system calls, which
	// the runtime's preemption signals interrupt every 10 ms; without,
	// in the runtime's.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{2, 1} {
		runtime.GOMAXPROCS(procs)
		s := socket()
		ctx, cancel := context.WithCancel(context.Background())
		got := Do(ctx, func(ctx context.Context) error {
			l := From(ctx)
			defer s.Close(l)
			if l.raw != (procs > 1) {
				t.Errorf("GOMAXPROCS %d: one lane's raw %v", procs, l.raw)
			}
			if err := roundTrip(l, s, "ping"); err != nil {
				return err
			}
			if err := s.Write(l, []byte("mute")); err != nil {
				return err
			}
			cancel()
			return s.Fill(l, 1)
		})
		cancel()
		if !errors.Is(got, context.Canceled) {
			t.Errorf("GOMAXPROCS %d: a solo client waiting for a reply after the run was cancelled: %v, want context.Canceled", procs, got)
		}
	}
}
