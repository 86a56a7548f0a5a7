package lane

import (
	"fmt"
	"io"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Socket is a connection's descriptor taken out of Go's netpoller, read
// into one buffer and written by a client on a lane: the part every wire
// protocol on lanes shares (engine/postgres/pgwire, engine/redis's RESP).
// The protocol parses Buffered and says how many bytes it needs next.
// Used by one client.
type Socket struct {
	fd   int
	peer string // for errors: "postgres", "redis"
	buf  []byte // buf[pos:end] is unread
	pos  int
	end  int
	// sent is set after a write: the reply cannot be there yet, so the
	// first read waits in the lane instead of trying (one system call
	// fewer per round trip).
	sent bool
	// blocking is set once the socket blocks (a solo lane's): reads and
	// writes wait in the kernel, for at most soloPoll, then look at the
	// lane's context and wait again.
	blocking bool
}

// soloPoll bounds a blocking read or write on a solo lane, so that a
// cancelled run's client notices within it.
const soloPoll = 100 * time.Millisecond

// suit makes the socket block on a solo lane and not on a lane of many.
func (s *Socket) suit(l *Lane) error {
	if l.solo == s.blocking {
		return nil
	}
	return s.block(l.solo)
}

// block makes the socket block, for at most soloPoll per call, or (on a
// lane of many, after a solo one) not block again.
func (s *Socket) block(on bool) error {
	if on {
		tv := unix.NsecToTimeval(int64(soloPoll))
		for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
			if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, opt, &tv); err != nil {
				return fmt.Errorf("socket to %s: timeout: %w", s.peer, err)
			}
		}
	}
	if err := unix.SetNonblock(s.fd, !on); err != nil {
		return fmt.Errorf("socket to %s: %w", s.peer, err)
	}
	s.blocking = on
	return nil
}

// await waits until the socket can be read (or written): in the lane's
// epoll, or on a solo lane in the read or write itself (a blocking socket
// whose wait ran out or was interrupted: the lane's context says whether
// to wait again).
func (s *Socket) await(l *Lane, write bool) error {
	if err := s.suit(l); err != nil {
		return err
	}
	if s.blocking {
		return l.ctx.Err()
	}
	return l.Wait(s.fd, write)
}

// TakeSocket duplicates sc's descriptor (close-on-exec, non-blocking as Go
// left it), so the socket lives on once the caller closes sc, out of Go's
// netpoller. peer names the server in errors.
func TakeSocket(sc syscall.Conn, peer string) (*Socket, error) {
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, derr := -1, error(nil)
	if err := raw.Control(func(s uintptr) {
		fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, fmt.Errorf("duplicate the socket: %w", derr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Socket{fd: fd, peer: peer, buf: make([]byte, 8192)}, nil
}

// Write writes all of b, waiting in l while the socket's buffer is full.
func (s *Socket) Write(l *Lane, b []byte) error {
	if err := s.suit(l); err != nil {
		return err
	}
	for off := 0; off < len(b); {
		n, err := s.io(l, unix.SYS_WRITE, b[off:])
		switch {
		case err == unix.EAGAIN || err == unix.EINTR && s.blocking:
			if err := s.await(l, true); err != nil {
				return err
			}
			continue
		case err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("write to %s: %w", s.peer, err)
		}
		off += n
	}
	s.sent = true
	return nil
}

// Buffered is what was read and not consumed; valid until the next Fill.
func (s *Socket) Buffered() []byte { return s.buf[s.pos:s.end] }

// Consume marks the first n buffered bytes as read.
func (s *Socket) Consume(n int) { s.pos += n }

// Fill reads more from the socket, waiting in l when nothing is there,
// with room for need unread bytes in all. It moves the buffered bytes, so
// slices of Buffered taken before it are stale.
func (s *Socket) Fill(l *Lane, need int) error {
	if s.pos == s.end {
		s.pos, s.end = 0, 0
		sent := s.sent
		s.sent = false
		if sent && !l.solo {
			if err := l.Wait(s.fd, false); err != nil {
				return err
			}
		}
	}
	if s.pos+need > len(s.buf) { // no room for it after pos
		dst := s.buf
		if need > len(s.buf) {
			dst = make([]byte, need+4096)
		}
		s.end = copy(dst, s.buf[s.pos:s.end])
		s.buf, s.pos = dst, 0
	}
	for {
		n, err := s.io(l, unix.SYS_READ, s.buf[s.end:])
		switch {
		case err == unix.EAGAIN || err == unix.EINTR && s.blocking:
			if err := s.await(l, false); err != nil {
				return err
			}
		case err == unix.EINTR:
		case err != nil:
			return fmt.Errorf("read from %s: %w", s.peer, err)
		case n == 0:
			// io.EOF inside, so engines know a lost connection
			// (server.ConnLost) and add the server's log.
			return fmt.Errorf("%s closed the connection: %w", s.peer, io.EOF)
		default:
			s.end += n
			return nil
		}
	}
}

// io makes a round trip's system calls, read(2) or write(2) (trap) of p.
// On a solo lane whose lanes leave the runtime a P to spare (Lane.raw),
// the socket blocks in a raw system call: the runtime is not told that the
// thread waits, so it keeps its P. With the runtime told, its monitor thread
// (sysmon) hands the P of a thread waiting over 20 µs to another thread,
// and each hand-off keeps the monitor waking every 20 µs: 3,000 times a
// second at 1 client on MariaDB, against under 200 with raw calls, which
// took 0.85x the process's CPU per transaction (docs/drivers.md).
//
// A raw call holds its P for at most soloPoll (the socket's timeout), and
// less when the runtime needs the P: its preemption signal, sent every
// 10 ms to a goroutine that seems to run on, ends the call with EINTR (a
// socket with a timeout is not restarted, signal(7)), and the next call's
// prologue yields. The wait then starts again, its timeout too, so an
// interrupted wait looks at the lane's context first, as one that ran out
// does: a cancelled run's client still returns.
func (s *Socket) io(l *Lane, trap uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	call := unix.Syscall
	if s.blocking && l.raw {
		call = unix.RawSyscall
	}
	n, _, errno := call(trap, uintptr(s.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// WriteNow writes b without a lane, for a last message before Close
// (a Terminate, a QUIT); it may write nothing if the socket is full.
func (s *Socket) WriteNow(b []byte) {
	if s.fd >= 0 {
		unix.Write(s.fd, b)
	}
}

// Close removes the socket from l's epoll (l may be nil once the lane has
// ended) and closes it. It may be called again.
func (s *Socket) Close(l *Lane) {
	if s.fd < 0 {
		return
	}
	if l != nil {
		l.Release(s.fd)
	}
	unix.Close(s.fd)
	s.fd = -1
}
