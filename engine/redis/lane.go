package redis

// A session on a lane (driver/lane) speaks RESP itself on a socket of its
// own, out of Go's netpoller, as the pgwire package does for PostgreSQL:
// the same commands as the go-redis path (records.go), each round trip a
// write, an epoll_wait and a read.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"syscall"

	"github.com/tierbench/tierbench/driver/lane"
	"github.com/tierbench/tierbench/engine"
)

// wire is a session's RESP connection on a lane.
type wire struct {
	sock   *lane.Socket
	w      []byte // the commands of the next round trip
	num    []byte // a number's digits
	broken error
}

// laneTarget says why a target's connections are not plain, which
// clients on lanes need (engine.Spec.LaneTarget): rediss:// is TLS.
func laneTarget(u *url.URL) string {
	if u.Scheme == "rediss" {
		return "the target is rediss://, TLS: make it redis://"
	}
	return ""
}

// OnLane reports whether the session can run on a lane: over plain TCP
// (a rediss:// target's TLS records only crypto/tls can read).
func (s *Session) OnLane() bool { return s.d.client.Options().TLSConfig == nil }

// onLane returns the session's lane and RESP connection when ctx runs on
// a lane, dialling and authenticating at the first call; nil otherwise.
func (s *Session) onLane(ctx context.Context) (*lane.Lane, *wire, error) {
	l := lane.From(ctx)
	if l == nil || !s.OnLane() {
		return nil, nil, nil
	}
	if s.wire == nil {
		w, err := s.dialWire(ctx, l)
		if err != nil {
			return nil, nil, err
		}
		s.wire = w
	}
	if s.wire.broken != nil {
		l.Yield() // fails at once, every time: let the lane's others run
		return nil, nil, s.wire.broken
	}
	return l, s.wire, nil
}

// dialWire opens the session's lane connection: a dial through Go (once,
// at the first operation), then AUTH and SELECT as go-redis sends them,
// on the lane.
func (s *Session) dialWire(ctx context.Context, l *lane.Lane) (*wire, error) {
	opts := s.d.client.Options()
	nc, err := (&net.Dialer{Timeout: opts.DialTimeout}).DialContext(ctx, "tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("redis: connect to %s for a lane: %w", opts.Addr, err)
	}
	defer nc.Close() // the socket lives on in sock
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("redis: connection to %s has no descriptor", opts.Addr)
	}
	sock, err := lane.TakeSocket(sc, "redis")
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	w := &wire{sock: sock}
	var sent int
	if opts.Password != "" {
		if opts.Username != "" {
			w.command("auth", []byte(opts.Username), []byte(opts.Password))
		} else {
			w.command("auth", []byte(opts.Password))
		}
		sent++
	}
	if opts.DB != 0 {
		w.command("select", strconv.AppendInt(nil, int64(opts.DB), 10))
		sent++
	}
	if sent > 0 {
		err = w.roundTrip(l)
		for i := 0; i < sent && err == nil; i++ {
			err = w.skip(l)
		}
		clear(w.w) // the password is not kept
		if err != nil {
			sock.Close(l)
			return nil, fmt.Errorf("redis: authenticate a lane's connection: %w", err)
		}
	}
	return w, nil
}

// command appends one command (RESP's array of bulk strings) to w.w.
func (w *wire) command(name string, args ...[]byte) {
	w.header('*', 1+len(args))
	w.bulk([]byte(name))
	for _, a := range args {
		w.bulk(a)
	}
}

func (w *wire) header(kind byte, n int) {
	w.w = append(w.w, kind)
	w.w = strconv.AppendInt(w.w, int64(n), 10)
	w.w = append(w.w, '\r', '\n')
}

func (w *wire) bulk(b []byte) {
	w.header('$', len(b))
	w.w = append(w.w, b...)
	w.w = append(w.w, '\r', '\n')
}

// roundTrip writes the commands built since the last one.
func (w *wire) roundTrip(l *lane.Lane) error {
	err := w.sock.Write(l, w.w)
	w.w = w.w[:0]
	return w.fail(l, err)
}

// fail breaks the connection on an I/O error: what the server sends next
// cannot be matched to a command any more.
func (w *wire) fail(l *lane.Lane, err error) error {
	if err != nil && w.broken == nil {
		w.broken = fmt.Errorf("redis connection closed after: %w", err)
		w.sock.Close(l)
	}
	return err
}

// errReply is an error reply ("-ERR ..."): the command failed, the
// connection is fine.
type errReply string

func (e errReply) Error() string { return "server error: " + string(e) }

// line returns the reply's next line without its CRLF; valid until the
// next read.
func (w *wire) line(l *lane.Lane) ([]byte, error) {
	for {
		b := w.sock.Buffered()
		if i := bytes.Index(b, []byte("\r\n")); i >= 0 {
			w.sock.Consume(i + 2)
			return b[:i], nil
		}
		if err := w.sock.Fill(l, len(b)+64); err != nil {
			return nil, w.fail(l, err)
		}
	}
}

// head reads a reply's first line: its kind and number (an integer's
// value, a bulk string's length, an array's count; -1 for null). An error
// reply is returned as an errReply.
func (w *wire) head(l *lane.Lane) (byte, int64, error) {
	ln, err := w.line(l)
	if err != nil {
		return 0, 0, err
	}
	if len(ln) == 0 {
		return 0, 0, w.fail(l, errors.New("redis sent an empty line"))
	}
	switch ln[0] {
	case '+':
		return '+', 0, nil
	case '-':
		return '-', 0, errReply(ln[1:])
	case ':', '$', '*':
		n, err := strconv.ParseInt(string(ln[1:]), 10, 64)
		if err != nil {
			return 0, 0, w.fail(l, fmt.Errorf("redis sent %q: %w", ln, err))
		}
		return ln[0], n, nil
	}
	return 0, 0, w.fail(l, fmt.Errorf("redis sent an unexpected reply %q", ln))
}

// body returns a bulk string's n bytes (and consumes its CRLF); valid
// until the next read.
func (w *wire) body(l *lane.Lane, n int64) ([]byte, error) {
	need := int(n) + 2
	for len(w.sock.Buffered()) < need {
		if err := w.sock.Fill(l, need); err != nil {
			return nil, w.fail(l, err)
		}
	}
	b := w.sock.Buffered()[:n]
	w.sock.Consume(need)
	return b, nil
}

// skip reads one whole reply and returns only its error, if it is one.
func (w *wire) skip(l *lane.Lane) error {
	kind, n, err := w.head(l)
	if err != nil {
		return err
	}
	switch {
	case kind == '$' && n >= 0:
		_, err = w.body(l, n)
	case kind == '*':
		for i := int64(0); i < n && err == nil; i++ {
			if err = w.skip(l); errors.As(err, new(errReply)) {
				err = nil // an element that is an error is still read whole
			}
		}
	}
	return err
}

// count reads an array reply, skipping its elements, and returns how many
// there were (0 for a null array).
func (w *wire) count(l *lane.Lane) (int64, error) {
	kind, n, err := w.head(l)
	if err != nil {
		return 0, err
	}
	if kind != '*' {
		return 0, w.fail(l, fmt.Errorf("redis sent a %q reply where an array belongs", kind))
	}
	for i := int64(0); i < n; i++ {
		if err := w.skip(l); err != nil && !errors.As(err, new(errReply)) {
			return 0, err
		}
	}
	return max(n, 0), nil
}

// laneInsert is Insert on a lane: HSET and ZADD in one round trip.
func (s *Session) laneInsert(l *lane.Lane, w *wire, key []byte, fields [][]byte) error {
	w.header('*', 2+2*len(fields))
	w.bulk([]byte("hset"))
	w.bulk(key)
	for i, f := range fields {
		w.bulk(s.fieldBytes(i))
		w.bulk(f)
	}
	w.command("zadd", []byte(IndexKey), strconv.AppendInt(w.num[:0], int64(JavaHash(key)), 10), key)
	if err := w.roundTrip(l); err != nil {
		return err
	}
	return errors.Join(w.skip(l), w.skip(l))
}

// laneUpdate is Update on a lane: one HSET.
func (s *Session) laneUpdate(l *lane.Lane, w *wire, key []byte, fields []engine.Field) error {
	w.header('*', 2+2*len(fields))
	w.bulk([]byte("hset"))
	w.bulk(key)
	for _, f := range fields {
		w.bulk(s.fieldBytes(f.Index))
		w.bulk(f.Value)
	}
	if err := w.roundTrip(l); err != nil {
		return err
	}
	return w.skip(l)
}

// laneRead is Read on a lane: HGETALL, found when the hash has fields.
func (s *Session) laneRead(l *lane.Lane, w *wire, key []byte) (bool, error) {
	w.command("hgetall", key)
	if err := w.roundTrip(l); err != nil {
		return false, err
	}
	n, err := w.count(l)
	return n > 0, err
}

// laneScan is Scan on a lane: the index's keys in one round trip, then
// their HGETALLs pipelined in a second.
func (s *Session) laneScan(l *lane.Lane, w *wire, start []byte, count int) (int, error) {
	w.command("zrangebyscore", []byte(IndexKey), strconv.AppendInt(w.num[:0], int64(JavaHash(start)), 10),
		[]byte("+inf"), []byte("limit"), []byte("0"), []byte(strconv.Itoa(count)))
	if err := w.roundTrip(l); err != nil {
		return 0, err
	}
	kind, n, err := w.head(l)
	if err != nil {
		return 0, err
	}
	if kind != '*' {
		return 0, w.fail(l, fmt.Errorf("redis sent a %q reply where the index's keys belong", kind))
	}
	if n <= 0 {
		return 0, nil
	}
	// The keys go straight into the HGETALLs of the second round trip.
	for i := int64(0); i < n; i++ {
		kind, size, err := w.head(l)
		if err != nil {
			return 0, err
		}
		if kind != '$' || size < 0 {
			return 0, w.fail(l, fmt.Errorf("redis sent a %q reply where a key belongs", kind))
		}
		b, err := w.body(l, size)
		if err != nil {
			return 0, err
		}
		w.command("hgetall", b)
	}
	if err := w.roundTrip(l); err != nil {
		return 0, err
	}
	found := 0
	var first error
	for range n {
		n, err := w.count(l)
		switch {
		case err != nil && w.broken != nil:
			return found, err
		case err != nil && first == nil:
			first = err
		case n > 0:
			found++
		}
	}
	return found, first
}

// fieldBytes is field i's name as bytes ("field3").
func (s *Session) fieldBytes(i int) []byte {
	for len(s.nameBytes) <= i {
		s.nameBytes = append(s.nameBytes, []byte("field"+strconv.Itoa(len(s.nameBytes))))
	}
	return s.nameBytes[i]
}
