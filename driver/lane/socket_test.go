package lane

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
)

// TestSocket writes and reads a round trip through a Socket taken from a
// Go connection, and checks that a peer which closes is reported as a
// lost connection (io.EOF inside), which engines read as "add the
// server's log".
func TestSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err == nil {
			c.Write(append(b, '!'))
		}
		c.Close()
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := TakeSocket(nc.(*net.TCPConn), "echo")
	nc.Close() // the socket lives on in s
	if err != nil {
		t.Fatal(err)
	}
	err = Do(context.Background(), func(ctx context.Context) error {
		l := From(ctx)
		defer s.Close(l)
		if err := s.Write(l, []byte("ping")); err != nil {
			return err
		}
		for len(s.Buffered()) < 5 {
			if err := s.Fill(l, 5); err != nil {
				return err
			}
		}
		if got := string(s.Buffered()[:5]); got != "ping!" {
			t.Errorf("read %q, want ping!", got)
		}
		s.Consume(5)
		err := s.Fill(l, 1)
		if !errors.Is(err, io.EOF) {
			t.Errorf("after the peer closed: %v; want an error wrapping io.EOF", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
