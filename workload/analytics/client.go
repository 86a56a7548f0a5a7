package analytics

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/engine"
	"github.com/tierbench/tierbench/workload"
	"github.com/tierbench/tierbench/workload/sqlwork"
)

// walk is one client's way through the query set: every query in the
// set's order, round and round, starting at the client's own place so
// concurrent clients run different queries.
type walk struct {
	n, next, done int
}

func newWalk(n, id int) walk { return walk{n: n, next: id % n} }

// step returns the index of the query to run next, and whether it
// completes a whole set (n queries since the last one that did).
func (w *walk) step() (i int, setDone bool) {
	i = w.next
	w.next = (w.next + 1) % w.n
	w.done++
	if w.done == w.n {
		w.done = 0
		return i, true
	}
	return i, false
}

// Client runs the queries on its own connection, one per Do, used by one
// goroutine.
type Client struct {
	w    *Workload
	conn *sql.Conn
	walk walk
	// set is the elapsed time of the queries of the set under way; broken
	// when one of them failed, so the set is not recorded.
	set    time.Duration
	broken bool
}

// NewClient returns client id bound to session s.
func (w *Workload) NewClient(id int, s engine.Session) (workload.Client, error) {
	q, err := engine.NeedSQL(s)
	if err != nil {
		return nil, fmt.Errorf("analytics client %d: %w", id, err)
	}
	return &Client{w: w, conn: q.Conn(), walk: newWalk(len(w.selected), id)}, nil
}

// Do runs the next query of the client's walk and reads its whole answer;
// the op's latency is the query's elapsed time.
func (c *Client) Do(ctx context.Context) (int, error) {
	i, setDone := c.walk.step()
	start := time.Now()
	rows, err := c.query(ctx, c.w.texts[i])
	elapsed := time.Since(start)
	if err != nil {
		c.broken = true
	} else {
		c.w.stats.ran(i, rows)
		c.set += elapsed
	}
	if setDone {
		if !c.broken {
			c.w.stats.sets.add(c.set)
		}
		c.set, c.broken = 0, false
	}
	if err != nil {
		return i, fmt.Errorf("analytics %s: %w", c.w.ops[i], err)
	}
	return i, nil
}

// query runs q and counts the rows of its answer, all of which cross the
// wire as they would to an application.
func (c *Client) query(ctx context.Context, q string) (int64, error) {
	return sqlwork.Drain(c.conn.QueryContext(ctx, q))
}

// stats records what the queries answered, for Verify.
type stats struct {
	queries []queryStats // per selected query
	sets    setStats
}

// queryStats counts one query's runs and the size of its answers: rows is
// the first answer's row count (-1 before any), odd the answers of
// another size.
type queryStats struct {
	runs, rows, odd atomic.Int64
}

func (s *stats) reset(n int) {
	s.queries = make([]queryStats, n)
	for i := range s.queries {
		s.queries[i].rows.Store(-1)
	}
	s.sets.reset()
}

// ran records that selected query i answered rows rows.
func (s *stats) ran(i int, rows int64) {
	q := &s.queries[i]
	q.runs.Add(1)
	if !q.rows.CompareAndSwap(-1, rows) && q.rows.Load() != rows {
		q.odd.Add(1)
	}
}

// setStats sums the elapsed times of whole sets, each run by one client
// without an error (once per set, off the per-query path).
type setStats struct {
	mu            sync.Mutex
	n             int
	sum, min, max time.Duration
}

func (s *setStats) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n, s.sum, s.min, s.max = 0, 0, 0, 0
}

func (s *setStats) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 || d < s.min {
		s.min = d
	}
	s.max = max(s.max, d)
	s.sum += d
	s.n++
}
