package engine

import (
	"context"
	"time"

	"github.com/tierbench/tierbench/driver"
)

// CacheMix is what a cache engine's own client does per operation.
type CacheMix string

// The mixes of Ignite's own cache benchmarks.
const (
	CachePuts   CacheMix = "put"
	CacheGets   CacheMix = "get"
	CachePutGet CacheMix = "putget" // a 50/50 choice per operation
)

// CacheWork is what a cache engine's client does in a run: operations of
// Mix on keys drawn uniformly from [0, Keys), each value ValueSize bytes.
type CacheWork struct {
	Mix       CacheMix
	Keys      int64
	ValueSize int
	// OnWrite, set in a crash run, is told of each put the client reports
	// after the cut: those a key may still hold (see CacheWrite).
	OnWrite func(CacheWrite)
}

// CacheWrite is a put a crash run's client made. Its value began with ID
// (little endian, cut to the value's size), which CacheReader reads back.
type CacheWrite struct {
	Key, ID    int64
	Start, End time.Time
	// Acked: the client learnt the put succeeded (at End); otherwise its
	// outcome is unknown.
	Acked bool
}

// CacheReader is a Cache whose client reads back, after a crash run's
// restart, the ID each key's value begins with (CacheWrite).
type CacheReader interface {
	// ReadIDs reads keys and returns the ID of each one present, and when
	// the engine answered the first read.
	ReadIDs(ctx context.Context, keys []int64, valueSize int) (ids map[int64]int64, first time.Time, err error)
}

// Cache is the key-value cache data model of an engine whose operations
// run in its own client (Ignite's thick Java client) rather than in
// tierbench's Go driver. Unlike Records and SQL it is a DB ability, not a
// Session one: such an engine serves no sessions. Its client measures as
// the Go driver does: closed loop, one HDR histogram (nanoseconds, 1 ns to
// 60 s, 3 significant figures) per thread and op, swapped once a second.
type Cache interface {
	// Preload writes keys 0..keys-1 with values of valueSize bytes and
	// returns how many it wrote.
	Preload(ctx context.Context, keys int64, valueSize int) (written int64, err error)
	// DriveCache runs work in the engine's client with `clients` threads
	// for cfg.Warmup then cfg.Duration, closed loop, and returns what it
	// measured, by op in cfg.Ops's order ("put", "get"); intervals reach
	// cfg.OnTick as the client reports them. Cancelling ctx kills the
	// client. Its error carries the client's own last words.
	DriveCache(ctx context.Context, work CacheWork, cfg driver.Config, clients int) (*driver.Result, error)
}
