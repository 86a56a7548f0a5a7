package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tierbench/tierbench/engine"
)

// IndexKey is the sorted set YCSB's Redis binding keeps every key in, scored
// by the key's Java hashCode, for scans.
const IndexKey = "_indices"

// Session serves the records data model on one connection, as YCSB's Redis
// binding does:
//
//	Insert  HSET key field0 v0 ... ; ZADD _indices hash(key) key
//	Read    HGETALL key (found when the hash is not empty)
//	Update  HSET key fieldI vI ...
//	Scan    ZRANGEBYSCORE _indices hash(start) +inf LIMIT 0 count, then
//	        HGETALL of each key
//
// Two differences, both of round trips only: Insert sends HSET and ZADD in
// one pipeline (YCSB waits for each), and Scan pipelines its HGETALLs.
//
// Argument slices are kept and reused; replies to HGETALL are streamed past
// (the fields' bytes are read from the socket, not kept), so an operation
// allocates go-redis's command, the boxing of its arguments and, for each
// field read, the small io.LimitedReader go-redis copies it through (about
// 20 allocations per Read of 10 fields, 18 per Insert, 3 per Update).
// Not safe for concurrent use.
type Session struct {
	d    *DB
	conn *goredis.Conn
	pipe goredis.Pipeliner

	closeOnce sync.Once
	closeErr  error

	hset    []any  // "hset", key, field0, v0, ...: Insert and Update
	hsetN   int    // fields hset is laid out for, or -1
	zadd    [4]any // "zadd", _indices, score, key
	hgetall [2]any // "hgetall", key
	zrange  [7]any // "zrangebyscore", _indices, score, "+inf", "limit", 0, count
	names   []any  // boxed field names by index
	batch   []any  // InsertBatch and Scan arguments, all commands at once
	sink    sink   // Read's reply
	sinks   []sink // Scan's replies
	scratch *[4096]byte

	wire      *wire    // the RESP connection on a lane (lane.go), if any
	nameBytes [][]byte // field names as bytes, for wire
}

var (
	_ engine.Records      = (*Session)(nil)
	_ engine.FieldsReader = (*Session)(nil)
	_ engine.RecordsSetup = (*Session)(nil)
	_ engine.Explainer    = (*Session)(nil)
)

// SetupRecords readies the server for a load. A server tierbench started is
// empty; a target server keeps what earlier runs loaded (and whatever else
// is in its database), so its database is emptied with FLUSHDB, as the SQL
// engines drop usertable: keys and the scan index of a larger earlier load
// would otherwise linger. Redis has no schema: fields is not needed.
func (s *Session) SetupRecords(ctx context.Context, fields int) error {
	if s.d.target == nil {
		return nil
	}
	if err := s.conn.FlushDB(ctx).Err(); err != nil {
		return fmt.Errorf("redis FLUSHDB of the target's database %d before the load: %w", s.d.client.Options().DB, s.d.explain(err))
	}
	return nil
}

func newSession(d *DB, conn *goredis.Conn) *Session {
	s := &Session{d: d, conn: conn, pipe: conn.Pipeline(), hsetN: -1, scratch: new([4096]byte)}
	s.zadd = [4]any{"zadd", IndexKey, nil, nil}
	s.hgetall = [2]any{"hgetall", nil}
	s.zrange = [7]any{"zrangebyscore", IndexKey, nil, "+inf", "limit", 0, nil}
	s.sink.scratch = s.scratch
	return s
}

// Close returns the session's connection; the server keeps running.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.d.forget(s)
		if s.wire != nil {
			s.wire.sock.Close(nil) // the lane has ended: its epoll is closed
		}
		if err := s.conn.Close(); err != nil && !errors.Is(err, goredis.ErrClosed) {
			s.closeErr = fmt.Errorf("redis session close: %w", err)
		}
	})
	return s.closeErr
}

// Explain adds to an error on the session's connection what the server's
// log says when it died or dropped the connection (engine.Explainer).
func (s *Session) Explain(err error) error { return s.d.explain(err) }

// fieldName returns field i's name ("field3") boxed once per session, so
// building arguments boxes only keys and values, and sessions share no lock.
func (s *Session) fieldName(i int) any {
	for len(s.names) <= i {
		s.names = append(s.names, "field"+strconv.Itoa(len(s.names)))
	}
	return s.names[i]
}

// hsetArgs fills s.hset for a whole record; the field names stay in place
// between calls with the same field count.
func (s *Session) hsetArgs(key any, fields [][]byte) []any {
	if s.hsetN != len(fields) {
		s.hset = append(s.hset[:0], "hset", nil)
		for i := range fields {
			s.hset = append(s.hset, s.fieldName(i), nil)
		}
		s.hsetN = len(fields)
	}
	s.hset[1] = key
	for i, f := range fields {
		s.hset[3+2*i] = f
	}
	return s.hset
}

// Insert writes a whole record and adds its key to the scan index.
func (s *Session) Insert(ctx context.Context, key []byte, fields [][]byte) error {
	if len(fields) == 0 {
		return fmt.Errorf("redis insert %q: a record needs at least one field", key)
	}
	if l, w, err := s.onLane(ctx); err != nil || w != nil {
		if err == nil {
			err = s.laneInsert(l, w, key, fields)
		}
		return s.failed("insert", key, err)
	}
	k := any(key)
	hset := goredis.NewIntCmd(ctx, s.hsetArgs(k, fields)...)
	s.zadd[2], s.zadd[3] = float64(JavaHash(key)), k
	zadd := goredis.NewIntCmd(ctx, s.zadd[:]...)
	_ = s.pipe.Process(ctx, hset)
	_ = s.pipe.Process(ctx, zadd)
	_, err := s.pipe.Exec(ctx)
	s.release(s.hset, s.zadd[2:])
	if err == nil {
		err = errors.Join(hset.Err(), zadd.Err())
	}
	if err != nil {
		return fmt.Errorf("redis insert %q: %w", key, s.d.explain(err))
	}
	return nil
}

// InsertBatch writes records in one pipeline of HSET and ZADD per record.
func (s *Session) InsertBatch(ctx context.Context, keys [][]byte, fields [][][]byte) error {
	if len(keys) != len(fields) {
		return fmt.Errorf("redis insert batch: %d keys but %d records", len(keys), len(fields))
	}
	if len(keys) == 0 {
		return nil
	}
	need := 0
	for i := range keys {
		if len(fields[i]) == 0 {
			return fmt.Errorf("redis insert %q: a record needs at least one field", keys[i])
		}
		need += 2 + 2*len(fields[i]) + 4
	}
	if cap(s.batch) < need {
		s.batch = make([]any, need)
	}
	args := s.batch[:need]
	cmds := make([]*goredis.IntCmd, 0, 2*len(keys))
	for i, key := range keys {
		k := any(key)
		n := 2 + 2*len(fields[i])
		h := args[:n:n]
		h[0], h[1] = "hset", k
		for j, f := range fields[i] {
			h[2+2*j], h[3+2*j] = s.fieldName(j), f
		}
		z := args[n : n+4 : n+4]
		z[0], z[1], z[2], z[3] = "zadd", IndexKey, float64(JavaHash(key)), k
		args = args[n+4:]
		hc, zc := goredis.NewIntCmd(ctx, h...), goredis.NewIntCmd(ctx, z...)
		_ = s.pipe.Process(ctx, hc)
		_ = s.pipe.Process(ctx, zc)
		cmds = append(cmds, hc, zc)
	}
	_, err := s.pipe.Exec(ctx)
	s.release(s.batch[:need])
	for _, c := range cmds {
		if err != nil {
			break
		}
		err = c.Err()
	}
	if err != nil {
		return fmt.Errorf("redis insert batch of %d records from %q: %w", len(keys), keys[0], s.d.explain(err))
	}
	return nil
}

// Read fetches all fields of a record.
func (s *Session) Read(ctx context.Context, key []byte) (bool, error) {
	if l, w, err := s.onLane(ctx); err != nil || w != nil {
		found := false
		if err == nil {
			found, err = s.laneRead(l, w, key)
		}
		return found, s.failed("read", key, err)
	}
	s.hgetall[1] = key
	s.sink.reset()
	err := s.conn.Process(ctx, goredis.NewRawWriteToCmd(ctx, &s.sink, s.hgetall[:]...))
	s.hgetall[1] = nil
	if err != nil {
		return false, fmt.Errorf("redis read %q: %w", key, s.d.explain(err))
	}
	found, err := s.sink.found()
	if err != nil {
		return false, fmt.Errorf("redis read %q: %w", key, s.d.explain(err))
	}
	return found, nil
}

// ReadFields reads a record's field values (engine.FieldsReader), for the
// check of acknowledged writes after a crash; nil when it is absent.
func (s *Session) ReadFields(ctx context.Context, key []byte) ([][]byte, error) {
	m, err := s.conn.HGetAll(ctx, string(key)).Result()
	if err != nil {
		return nil, fmt.Errorf("redis read %q: %w", key, s.d.explain(err))
	}
	if len(m) == 0 {
		return nil, nil
	}
	fields := make([][]byte, len(m))
	for name, v := range m {
		i, err := strconv.Atoi(strings.TrimPrefix(name, "field"))
		if err != nil || i < 0 || i >= len(fields) {
			return nil, fmt.Errorf("redis read %q: unexpected field %q", key, name)
		}
		fields[i] = []byte(v)
	}
	return fields, nil
}

// Update overwrites the given fields of a record with one HSET.
func (s *Session) Update(ctx context.Context, key []byte, fields []engine.Field) error {
	if len(fields) == 0 {
		return nil
	}
	for _, f := range fields {
		if f.Index < 0 {
			return fmt.Errorf("redis update %q: field index %d", key, f.Index)
		}
	}
	if l, w, err := s.onLane(ctx); err != nil || w != nil {
		if err == nil {
			err = s.laneUpdate(l, w, key, fields)
		}
		return s.failed("update", key, err)
	}
	s.hsetN = -1 // the layout below is not a whole record's
	s.hset = append(s.hset[:0], "hset", key)
	for _, f := range fields {
		s.hset = append(s.hset, s.fieldName(f.Index), f.Value)
	}
	err := s.conn.Process(ctx, goredis.NewIntCmd(ctx, s.hset...))
	s.release(s.hset)
	if err != nil {
		return fmt.Errorf("redis update %q: %w", key, s.d.explain(err))
	}
	return nil
}

// Scan reads up to count records whose keys' hashes are at or above
// start's. Like YCSB's binding it orders by Java hashCode, not by key: the
// records read are as many, but not the ones a key-ordered engine reads.
func (s *Session) Scan(ctx context.Context, start []byte, count int) (int, error) {
	if count <= 0 {
		return 0, nil
	}
	if l, w, err := s.onLane(ctx); err != nil || w != nil {
		n := 0
		if err == nil {
			n, err = s.laneScan(l, w, start, count)
		}
		return n, s.failed("scan from", start, err)
	}
	s.zrange[2], s.zrange[6] = float64(JavaHash(start)), count
	keysCmd := goredis.NewStringSliceCmd(ctx, s.zrange[:]...)
	err := s.conn.Process(ctx, keysCmd)
	s.release(s.zrange[2:3], s.zrange[6:])
	if err != nil {
		return 0, fmt.Errorf("redis scan from %q: index: %w", start, s.d.explain(err))
	}
	keys := keysCmd.Val()
	if len(keys) == 0 {
		return 0, nil
	}
	if cap(s.sinks) < len(keys) {
		s.sinks = make([]sink, len(keys))
	}
	sinks := s.sinks[:len(keys)]
	if cap(s.batch) < 2*len(keys) {
		s.batch = make([]any, 2*len(keys))
	}
	args := s.batch[:2*len(keys)]
	for i, k := range keys {
		sinks[i].scratch = s.scratch
		sinks[i].reset()
		a := args[2*i : 2*i+2 : 2*i+2]
		a[0], a[1] = "hgetall", k
		_ = s.pipe.Process(ctx, goredis.NewRawWriteToCmd(ctx, &sinks[i], a...))
	}
	_, err = s.pipe.Exec(ctx)
	s.release(args)
	if err != nil {
		return 0, fmt.Errorf("redis scan from %q: %w", start, s.d.explain(err))
	}
	n := 0
	for i := range sinks {
		found, err := sinks[i].found()
		if err != nil {
			return n, fmt.Errorf("redis scan from %q: read %q: %w", start, keys[i], s.d.explain(err))
		}
		if found {
			n++
		}
	}
	return n, nil
}

// failed words an operation's error as the go-redis path does; nil stays
// nil.
func (s *Session) failed(op string, key []byte, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redis %s %q: %w", op, key, s.d.explain(err))
}

// release drops references to the caller's keys and values held in reused
// argument slices, so the session does not keep them alive. Strings (command
// and field names) stay: the whole-record layout of hsetArgs keeps them.
func (s *Session) release(slices ...[]any) {
	for _, a := range slices {
		for i := range a {
			if _, ok := a[i].(string); !ok {
				a[i] = nil
			}
		}
	}
}

// JavaHash is Java's String.hashCode over the key's bytes (its chars, for
// ASCII keys such as YCSB's), the score YCSB's binding files a key under.
func JavaHash(key []byte) int32 {
	var h int32
	for _, c := range key {
		h = 31*h + int32(c)
	}
	return h
}

// sink receives one raw RESP reply (go-redis RawWriteToCmd) and keeps only
// its first bytes: enough to tell an empty hash, a filled one and an error
// apart. ReadFrom lets io.CopyN move bulk strings through one scratch buffer
// shared by a session's sinks instead of allocating one per copy.
type sink struct {
	head    [128]byte
	n       int
	scratch *[4096]byte
}

func (s *sink) reset() { s.n = 0 }

func (s *sink) Write(p []byte) (int, error) {
	if s.n < len(s.head) {
		s.n += copy(s.head[s.n:], p)
	}
	return len(p), nil
}

func (s *sink) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		m, err := r.Read(s.scratch[:])
		total += int64(m)
		s.Write(s.scratch[:m])
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// found reads the reply's first line: an array (RESP2) or map (RESP3) of
// more than zero elements is a record, an empty one or a null is none, an
// error reply is an error.
func (s *sink) found() (bool, error) {
	h := s.head[:s.n]
	if len(h) == 0 {
		return false, errors.New("empty reply")
	}
	line := h
	for i, c := range h {
		if c == '\r' || c == '\n' {
			line = h[:i]
			break
		}
	}
	switch h[0] {
	case '*', '%':
		// "*-1" is a null array; any other count but 0 means fields.
		if len(line) < 2 {
			return false, fmt.Errorf("unexpected reply %q", line)
		}
		return line[1] != '0' && line[1] != '-', nil
	case '_':
		return false, nil
	case '-', '!':
		return false, fmt.Errorf("server error: %s", line[1:])
	default:
		return false, fmt.Errorf("unexpected reply %q", line)
	}
}
